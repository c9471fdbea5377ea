/**
 * Philox4x32-10 uniform fill and dropout on the SIMD kernels (`kernels/wasm/random.c`), bit for
 * bit the CPU backend's stream and formulas (`cpu/philox.ts`, `cpu/random.ts`). The normal
 * distribution stays with the JS backend: its Box–Muller uses Math.log/cos/sin, which the
 * kernels cannot reproduce bit for bit.
 */
import { dtypeSize, type DType } from '../../core/dtype.js';
import { philoxKey } from '../philox.js';
import { DTYPE_CODE } from './codes.js';
import { overElements } from './elementwise.js';
import type { SimdRuntime } from './runtime.js';

const fround = Math.fround;

/** Uniform values in [a, b) for stream elements 0..n-1: f32(a) + f32(f32(b) − f32(a))·u. */
export function randomUniform(rt: SimdRuntime, dtype: DType, out: number, n: number, seed: number, a: number, b: number): void {
  const [k0, k1] = philoxKey(seed);
  const low = fround(a);
  const span = fround(fround(b) - low);
  const dt = DTYPE_CODE[dtype];
  // Ranges start on whole Philox blocks (4 elements; overElements aligns to 16).
  overElements(rt, 'random_uniform', n, dtypeSize[dtype], (s, c) => [dt, out, s, s + c, k0, k1, low, span], 'transcendentalBytes');
}

/** Keeps element i when its uniform u ≥ f32(p), scaled by f32(1/(1 − p)); 0 otherwise. */
export function dropout(rt: SimdRuntime, dtype: DType, x: number, out: number, n: number, p: number, seed: number): void {
  const [k0, k1] = philoxKey(seed);
  const dt = DTYPE_CODE[dtype];
  const threshold = fround(p);
  const scale = fround(1 / (1 - p));
  overElements(rt, 'dropout', n, dtypeSize[dtype], (s, c) => [dt, x, out, s, s + c, k0, k1, threshold, scale], 'transcendentalBytes');
}
