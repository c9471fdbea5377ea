/**
 * Moving tensor elements between CPU buffers and f32 working arrays.
 * f16/bf16 are widened to f32 on load and rounded to nearest-even on store,
 * as a GPU kernel does; f32 views are used in place with no copy.
 */
import { f32ToBf16Bits, f32ToF16Bits, fromBf16Array, fromF16Array } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import { CpuBuffer } from './cpu-buffer.js';

/** The CPU buffer under a view (views reaching the CPU backend always hold one). */
export function cpuBuffer(view: TensorView): CpuBuffer {
  return view.buffer as CpuBuffer;
}

/** The view's elements as f32 values (in place for f32, a widened copy for f16/bf16/i32). */
export function loadFloat(view: TensorView): Float32Array {
  const buf = cpuBuffer(view);
  const { offset, size } = view;
  switch (view.dtype) {
    case 'f32':
      return buf.f32.subarray(offset, offset + size);
    case 'f16':
      return fromF16Array(buf.u16.subarray(offset, offset + size));
    case 'bf16':
      return fromBf16Array(buf.u16.subarray(offset, offset + size));
    case 'i32':
      return Float32Array.from(buf.i32.subarray(offset, offset + size));
  }
}

/** The view's elements as i32 values, in place. */
export function loadInt(view: TensorView): Int32Array {
  return cpuBuffer(view).i32.subarray(view.offset, view.offset + view.size);
}

/**
 * An f32 array to compute a float output into: the output itself for f32, a
 * scratch array otherwise. Pass it to {@link storeFloat} when done.
 */
export function floatTarget(out: TensorView): Float32Array {
  return out.dtype === 'f32' ? cpuBuffer(out).f32.subarray(out.offset, out.offset + out.size) : new Float32Array(out.size);
}

/** Stores f32 values computed by {@link floatTarget} into a float view, rounding to 16 bits where needed. */
export function storeFloat(out: TensorView, values: Float32Array): void {
  const buf = cpuBuffer(out);
  switch (out.dtype) {
    case 'f32':
      if (values.buffer !== buf.f32.buffer || values.byteOffset !== out.offset * 4) buf.f32.set(values, out.offset);
      return;
    case 'f16': {
      const dst = buf.u16;
      for (let i = 0; i < values.length; i++) dst[out.offset + i] = f32ToF16Bits(values[i]!);
      return;
    }
    case 'bf16': {
      const dst = buf.u16;
      for (let i = 0; i < values.length; i++) dst[out.offset + i] = f32ToBf16Bits(values[i]!);
      return;
    }
    case 'i32':
      throw new TypeError('storeFloat called with an i32 view');
  }
}
