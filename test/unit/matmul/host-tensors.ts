/**
 * Host tensors for the matmul unit tests: TensorViews over plain ArrayBuffers,
 * seeded random fills, and reading values back as float64.
 */
import type { DType } from '../../../src/compute/core/dtype.js';
import { bf16BitsToF32, dtypeSize, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits } from '../../../src/compute/core/dtype.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { makeView } from '../../../src/compute/core/view.js';
import { shapeSize } from '../../../src/compute/core/shape.js';
import type { HostMatmulIO } from '../../../src/compute/cpu/matmul.js';

export interface HostBuffer {
  readonly byteLength: number;
  readonly data: ArrayBuffer;
}

/** A small deterministic generator (mulberry32) so failures reproduce. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function typedOf(buffer: HostBuffer, dtype: DType, offset: number, size: number): Float32Array | Uint16Array {
  return dtype === 'f32' ? new Float32Array(buffer.data, offset * 4, size) : new Uint16Array(buffer.data, offset * 2, size);
}

export const hostIO: HostMatmulIO = {
  elements: (view) => typedOf(view.buffer as HostBuffer, view.dtype, view.offset, view.size),
};

/** A fresh tensor of uniform values in [-1, 1), rounded to `dtype`; returns the view and the exact values it holds. */
export function randomTensor(dtype: DType, shape: readonly number[], next: () => number): { view: TensorView; values: Float64Array } {
  const size = shapeSize(shape);
  const buffer: HostBuffer = { byteLength: size * dtypeSize[dtype], data: new ArrayBuffer(size * dtypeSize[dtype]) };
  const data = typedOf(buffer, dtype, 0, size);
  const values = new Float64Array(size);
  for (let i = 0; i < size; i++) {
    const x = next() * 2 - 1;
    if (dtype === 'f32') {
      data[i] = x;
      values[i] = data[i]!;
    } else if (dtype === 'f16') {
      data[i] = f32ToF16Bits(x);
      values[i] = f16BitsToF32(data[i]!);
    } else {
      data[i] = f32ToBf16Bits(x);
      values[i] = bf16BitsToF32(data[i]!);
    }
  }
  return { view: makeView(buffer, dtype, shape), values };
}

export function emptyTensor(dtype: DType, shape: readonly number[]): TensorView {
  const bytes = shapeSize(shape) * dtypeSize[dtype];
  const buffer: HostBuffer = { byteLength: bytes, data: new ArrayBuffer(bytes) };
  return makeView(buffer, dtype, shape);
}

/** The view's elements as float64 values. */
export function valuesOf(view: TensorView): Float64Array {
  const data = typedOf(view.buffer as HostBuffer, view.dtype, view.offset, view.size);
  const out = new Float64Array(view.size);
  for (let i = 0; i < view.size; i++) {
    out[i] = view.dtype === 'f32' ? data[i]! : view.dtype === 'f16' ? f16BitsToF32(data[i]!) : bf16BitsToF32(data[i]!);
  }
  return out;
}

