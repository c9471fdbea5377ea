/**
 * Test helpers: fresh random inputs (a new seed every run, printed on failure
 * through the assertion messages), norm-wise error, and a CPU GpuCompute.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, type DType } from '../../../src/compute/core/dtype.js';

/** Norm-wise bounds for elementwise-ish ops, from the project's rules. */
export const TOLERANCE: Record<Exclude<DType, 'i32'>, number> = { f32: 1e-5, f16: 1e-3, bf16: 8e-3 };

export const FLOAT_DTYPES = ['f32', 'f16', 'bf16'] as const;

/** A seed that differs on every run, so inputs are fresh. */
export function freshSeed(): number {
  return randomBytes(4).readUInt32LE(0);
}

/** A fresh seed whose inputs `accept` takes: draws again past ill-conditioned ones (a tie at a kink, a saturated row). */
export function freshSeedWhere(accept: (seed: number) => boolean): number {
  for (;;) {
    const seed = freshSeed();
    if (accept(seed)) return seed;
  }
}

/** A small independent PRNG (mulberry32) for test inputs; not the library's Philox. */
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

/** n values, roughly normal with the given scale and shift, never all zero. */
export function randomValues(n: number, seed: number, scale = 1, shift = 0): number[] {
  const next = prng(seed);
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const u = Math.max(next(), 1e-12);
    values.push(shift + scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next()));
  }
  return values;
}

/**
 * Half the subnormal spacing of each float dtype: the absolute error a single
 * correctly rounded result may carry however small it is (relative bounds
 * cannot hold in the subnormal range: f16 has only ~3e-8 absolute precision there).
 */
const SUBNORMAL_HALF_SPACING: Record<DType, number> = { f32: 2 ** -150, f16: 2 ** -25, bf16: 2 ** -134, i32: 0 };

/**
 * Norm-wise relative error ‖out − ref‖ / ‖ref‖ (or ‖out‖ when ref is all
 * zero), after allowing each element the subnormal rounding of `dtype`.
 */
export function relError(out: ArrayLike<number>, ref: ArrayLike<number>, dtype: DType = 'f32'): number {
  if (out.length !== ref.length) throw new Error(`length ${out.length} vs ${ref.length}`);
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = out[i]! - ref[i]!;
    diff += d * d;
    norm += ref[i]! * ref[i]!;
  }
  const excess = Math.max(0, Math.sqrt(diff) - Math.sqrt(ref.length) * SUBNORMAL_HALF_SPACING[dtype]);
  return norm === 0 ? excess : excess / Math.sqrt(norm);
}

/** The value a tensor of `dtype` holds for `v`: rounded to f32, then to 16 bits (nearest even); integers stay as they are. */
export function roundTo(dtype: DType): (v: number) => number {
  if (dtype === 'f16') return (v) => f16BitsToF32(f32ToF16Bits(v));
  if (dtype === 'bf16') return (v) => bf16BitsToF32(f32ToBf16Bits(v));
  if (dtype === 'i32') return (v) => v;
  return Math.fround;
}

export function product(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** A GpuCompute on the CPU backend that logs nowhere unless a sink is given. */
export function cpuCompute(logger?: (level: string, message: string) => void): Promise<GpuCompute> {
  return GpuCompute.create({ backend: 'cpu', logLevel: logger ? 'debug' : 'silent', ...(logger ? { logger } : {}) });
}

/**
 * Independent erf/erfc for references: the alternating Maclaurin series for
 * |x| < 3 and the Laplace continued fraction (evaluated backwards, fixed depth)
 * beyond; different algorithms from the library's.
 */
export function referenceErf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const ax = Math.abs(x);
  return Math.sign(x) * (ax < 3 ? maclaurinErf(ax) : 1 - continuedFractionErfc(ax));
}

/** 1 − erf(x) without cancellation where it is tiny (x ≥ 3). */
export function referenceErfc(x: number): number {
  if (x >= 3) return continuedFractionErfc(x);
  return 1 - referenceErf(x);
}

function maclaurinErf(x: number): number {
  let sum = 0;
  let power = x;
  let factorial = 1;
  for (let n = 0; n < 80; n++) {
    if (n > 0) {
      power *= x * x;
      factorial *= n;
    }
    sum += ((n % 2 === 0 ? 1 : -1) * power) / (factorial * (2 * n + 1));
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

function continuedFractionErfc(x: number): number {
  let tail = x;
  for (let n = 120; n >= 1; n--) tail = x + n / 2 / tail;
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / tail;
}

/**
 * Checks a device result `got` against a float64 reference and against the CPU backend's result,
 * norm-wise, with the dtype's tolerance (or `tolerance`); i32 must be equal.
 */
export function expectMatches(
  label: string,
  got: readonly number[],
  reference: readonly number[],
  cpu: readonly number[],
  dtype: DType,
  tolerance = dtype === 'i32' ? 0 : TOLERANCE[dtype],
): void {
  if (dtype === 'i32') {
    expect(got, `${label} vs reference`).toEqual(reference);
    expect(got, `${label} vs CPU`).toEqual(cpu);
    return;
  }
  expect(relError(got, reference, dtype), `${label}: error vs float64 reference`).toBeLessThanOrEqual(tolerance);
  expect(relError(got, cpu, dtype), `${label}: error vs CPU backend`).toBeLessThanOrEqual(tolerance);
}

/** Runs `fn` and returns the error it throws (failing when it does not throw). */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}
