/**
 * Helpers of the SIMD kernel tests: runtimes, moving typed data in and out of the linear memory,
 * the JS CPU backend run on the same inputs (the reference meaning), fresh random inputs with
 * special values, and comparisons (bits, ulps, norm-wise error).
 */
import { randomBytes } from 'node:crypto';
import {
  bf16BitsToF32,
  dtypeSize,
  f16BitsToF32,
  f32ToBf16Bits,
  f32ToF16Bits,
  type DType,
} from '../../../src/compute/core/dtype.js';
import { makeView, type TensorView } from '../../../src/compute/core/view.js';
import { CpuBuffer } from '../../../src/compute/cpu/cpu-buffer.js';
import { SimdRuntime } from '../../../src/compute/cpu/simd/runtime.js';
import { THRESHOLDS } from '../../../src/compute/cpu/simd/thresholds.js';
import type { SimdVariant } from '../../../src/compute/cpu/simd/wasm-module.js';

export const FLOAT_DTYPES = ['f32', 'f16', 'bf16'] as const;

/** Threads of the multi-threaded runtimes: more than this machine's cores is fine for meaning. */
export const MANY_THREADS = 3;

/** A seed that differs on every run (printed by the assertions that use it). */
export function freshSeed(): number {
  return randomBytes(4).readUInt32LE(0);
}

/** mulberry32: a small PRNG for test inputs, independent of the library's Philox. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values every float op must handle. */
export const SPECIAL_VALUES = [0, -0, Infinity, -Infinity, NaN, 1e-40, -1e-40, 2 ** -149, 3.4e38, -3.4e38, 1, -1, 0.5];

/** n values, roughly normal·scale; with `specials`, about one in eight is a special value. */
export function randomValues(n: number, seed: number, scale = 1, specials = false): number[] {
  const next = prng(seed);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (specials && next() < 0.125) {
      out.push(SPECIAL_VALUES[Math.floor(next() * SPECIAL_VALUES.length)]!);
      continue;
    }
    const u = Math.max(next(), 1e-12);
    out.push(scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next()));
  }
  return out;
}

/** Random i32 values over the whole range, with the extremes mixed in. */
export function randomInts(n: number, seed: number): Int32Array {
  const next = prng(seed);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const r = next();
    out[i] = r < 0.05 ? -2147483648 : r < 0.1 ? 2147483647 : r < 0.5 ? Math.floor((next() - 0.5) * 200) : (next() * 2 ** 32) | 0;
  }
  return out;
}

/** Storage bytes of `values` as `dtype` (f16/bf16 rounded as dtype.ts does, i32 by ToInt32). */
export function encode(values: ArrayLike<number>, dtype: DType): Uint8Array {
  switch (dtype) {
    case 'f32':
      return new Uint8Array(Float32Array.from(values).buffer);
    case 'i32':
      return new Uint8Array(Int32Array.from(values, (v) => v | 0).buffer);
    case 'f16':
      return new Uint8Array(Uint16Array.from(values, (v) => f32ToF16Bits(v)).buffer);
    case 'bf16':
      return new Uint8Array(Uint16Array.from(values, (v) => f32ToBf16Bits(v)).buffer);
  }
}

/** The values stored in `bytes` as `dtype`. */
export function decode(bytes: Uint8Array, dtype: DType): Float64Array {
  const copy = bytes.slice();
  switch (dtype) {
    case 'f32':
      return Float64Array.from(new Float32Array(copy.buffer));
    case 'i32':
      return Float64Array.from(new Int32Array(copy.buffer));
    case 'f16':
      return Float64Array.from(new Uint16Array(copy.buffer), (h) => f16BitsToF32(h));
    case 'bf16':
      return Float64Array.from(new Uint16Array(copy.buffer), (h) => bf16BitsToF32(h));
  }
}

/**
 * A runtime for one test file (dispose it in afterAll). Its thresholds are an eighth of the
 * measured ones and do not rise while the workers sleep, so inputs of ~100K elements are split
 * across threads and every split path runs.
 */
export function runtime(threads: number, variant?: SimdVariant): SimdRuntime {
  const thresholds = Object.fromEntries(Object.entries(THRESHOLDS).map(([k, v]) => [k, Math.ceil(v / 8)]));
  return new SimdRuntime({ threads, thresholds, coldFactor: 1, ...(variant ? { variant } : {}) });
}

/** Copies `bytes` into fresh memory of `rt` (at least 16 bytes of slack after, never read). */
export function put(rt: SimdRuntime, bytes: Uint8Array): number {
  const at = alloc(rt, bytes.length);
  rt.u8.set(bytes, at);
  return at;
}

/** Fresh memory of `rt`, filled with a byte pattern so unwritten outputs show. */
export function alloc(rt: SimdRuntime, bytes: number): number {
  const at = Number(rt.heap.allocate(bytes + 16));
  rt.u8.fill(0xa5, at, at + bytes + 16);
  return at;
}

/** A copy of `bytes` bytes of `rt`'s memory, once the queued jobs have run. */
export function get(rt: SimdRuntime, at: number, bytes: number): Uint8Array {
  rt.settle();
  return rt.u8.slice(at, at + bytes);
}

/** A JS CPU backend view over a copy of `bytes` (the reference implementation's input). */
export function cpuView(bytes: Uint8Array | number, dtype: DType, shape: readonly number[]): TensorView {
  const length = typeof bytes === 'number' ? bytes : bytes.length;
  const buffer = new CpuBuffer(length);
  if (typeof bytes !== 'number') buffer.bytes.set(bytes);
  return makeView(buffer, dtype, shape);
}

/** A JS CPU backend view's storage from its offset, as the JS matmul reads it (f32 values, 16-bit patterns). */
export function cpuElements(view: TensorView): Float32Array | Int32Array | Uint16Array {
  const buffer = view.buffer as CpuBuffer;
  const array = view.dtype === 'f32' ? buffer.f32 : view.dtype === 'i32' ? buffer.i32 : buffer.u16;
  return array.subarray(view.offset, view.offset + view.size);
}

/** The bytes of a JS CPU backend view. */
export function cpuBytes(view: TensorView): Uint8Array {
  const size = dtypeSize[view.dtype];
  return (view.buffer as CpuBuffer).bytes.slice(view.offset * size, (view.offset + view.size) * size);
}

/**
 * Index of the first element whose bits differ, or -1. f32 NaNs compare equal whatever their
 * payload and sign (JS does not preserve them); 16-bit NaNs are always 0x7FFF, so compared as bits.
 */
export function firstBitDifference(a: Uint8Array, b: Uint8Array, dtype: DType): number {
  if (a.length !== b.length) return 0;
  const size = dtypeSize[dtype];
  const fa = dtype === 'f32' ? new Float32Array(a.slice().buffer) : undefined;
  const fb = dtype === 'f32' ? new Float32Array(b.slice().buffer) : undefined;
  for (let i = 0; i < a.length / size; i++) {
    if (fa && Number.isNaN(fa[i]) && Number.isNaN(fb![i])) continue;
    for (let k = 0; k < size; k++) if (a[i * size + k] !== b[i * size + k]) return i;
  }
  return -1;
}

/** Distance in units in the last place of the dtype between a stored value and a real number. */
export function ulpError(got: number, ref: number, dtype: Exclude<DType, 'i32'>): number {
  if (Number.isNaN(ref) || Number.isNaN(got)) return Number.isNaN(ref) && Number.isNaN(got) ? 0 : Infinity;
  if (!Number.isFinite(ref) || !Number.isFinite(got)) return got === ref ? 0 : Infinity;
  const mantissa = dtype === 'f32' ? 23 : dtype === 'f16' ? 10 : 7;
  const minExp = dtype === 'f16' ? -14 : -126;
  const a = Math.abs(ref);
  const exp = a === 0 ? minExp : Math.max(minExp, Math.floor(Math.log2(a)));
  return Math.abs(got - ref) / 2 ** (exp - mantissa);
}

/**
 * f32 inputs over the whole line: the special values, a grid of [-30, 30] in steps of `step`, and
 * `perBinade` random mantissas from `seed` in every binade of both signs (subnormals to 3.4e38).
 */
export function f32Line(seed: number, step: number, perBinade: number): Float32Array {
  const points: number[] = [...SPECIAL_VALUES];
  for (let x = -30; x <= 30; x += step) points.push(x);
  const next = prng(seed);
  const bits = new Uint32Array(1);
  const value = new Float32Array(bits.buffer);
  for (let exponent = 0; exponent < 255; exponent++) {
    for (let k = 0; k < perBinade; k++) {
      for (const sign of [0, 1]) {
        bits[0] = ((sign << 31) | (exponent << 23) | Math.floor(next() * 0x800000)) >>> 0;
        points.push(value[0]!);
      }
    }
  }
  return Float32Array.from(points);
}

/** Largest f32 ulp error of `got` against `ref` over `xs`, and where (Infinity when a special or an overflow differs). */
export function maxUlp(xs: Float32Array, got: ArrayLike<number>, ref: (x: number) => number): { ulp: number; at: number } {
  let worst = { ulp: 0, at: 0 };
  for (let i = 0; i < xs.length; i++) {
    const r = ref(xs[i]!);
    const rounded = Math.fround(r);
    const g = got[i]!;
    const u = Number.isFinite(rounded) ? ulpError(g, r, 'f32') : Object.is(rounded, g) || (Number.isNaN(rounded) && Number.isNaN(g)) ? 0 : Infinity;
    if (u > worst.ulp) worst = { ulp: u, at: xs[i]! };
  }
  return worst;
}

/** Norm-wise relative error ‖got − ref‖/‖ref‖ over the finite reference entries (NaN/inf must match exactly). */
export function relError(got: ArrayLike<number>, ref: ArrayLike<number>): number {
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < ref.length; i++) {
    const r = ref[i]!;
    const g = got[i]!;
    if (!Number.isFinite(r)) {
      if (!(Object.is(r, g) || (Number.isNaN(r) && Number.isNaN(g)))) return Infinity;
      continue;
    }
    diff += (g - r) ** 2;
    norm += r * r;
  }
  return norm === 0 ? Math.sqrt(diff) : Math.sqrt(diff / norm);
}

/** Norm-wise bounds for results computed in f32 and stored in each dtype. */
export const TOLERANCE: Record<Exclude<DType, 'i32'>, number> = { f32: 1e-5, f16: 1e-3, bf16: 8e-3 };

/** An attention problem of the kernel tests: extents, causal mask and key lengths per batch entry. */
export interface AttentionCase {
  B: number;
  Hq: number;
  Hkv: number;
  Sq: number;
  Sk: number;
  D: number;
  causal?: boolean;
  lengths?: number[];
}
