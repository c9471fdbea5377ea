/**
 * What both truncated-SVD algorithms share: the resolved problem, its result type, the probe the
 * benchmark times stages with, the sketch width, the first sketch and the scaling of every
 * product with A.
 */
import { binary } from '../ops/elementwise.js';
import { matmul, type MatmulOptions } from '../ops/matmul.js';
import { randn } from '../ops/random.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/** a ≈ u·diag(s)·v. */
export interface SvdResult {
  /** m×k, orthonormal columns (left singular vectors). */
  u: Tensor<'f32'>;
  /** k singular values, descending. */
  s: Tensor<'f32'>;
  /** k×n, orthonormal rows (right singular vectors, transposed, like torch's Vh). */
  v: Tensor<'f32'>;
}

/** A validated SVD problem: the matrix's extents and the resolved options. */
export interface SvdProblem {
  m: number;
  n: number;
  rank: number;
  oversample: number;
  powerIterations: number;
  seed: number;
  full: boolean;
}

/** Observes a device-route call, for `bench/svd.ts`'s stage timing and the tests; never needed otherwise. */
export interface SvdStageProbe {
  /** The work of `stage` has just been queued (the next stage's starts after it). */
  mark(stage: string): void;
  /** max|XᵀX − I| of U or V before their polish, read back at the end of a CholeskyQR2 attempt. */
  orthonormality?(deviation: number): void;
  /** The CholeskyQR2 attempt broke down for `reason`; the call runs again with Householder QR. */
  fallback?(reason: string): void;
}

/** Every product of the algorithms: f32 in full precision. */
export const PRODUCT: MatmulOptions = { precision: 'highest' };

/** Columns of the sketch: q = rank + oversample, at most min(m, n). */
export function sketchWidth(o: SvdProblem): number {
  return Math.min(o.rank + o.oversample, o.m, o.n);
}

/**
 * Whether the sketch is as wide as A (q = n): then it spans A's whole column space for any
 * invertible Ω, so {@link firstSketch} takes Ω = I and power iterations add nothing.
 */
export function sketchSpansColumns(o: SvdProblem): boolean {
  return sketchWidth(o) === o.n;
}

/**
 * The first sketch alpha·A·Ω, Ω an n×q Gaussian matrix keyed by the seed; alpha·A where the
 * sketch spans the columns. There a Gaussian Ω would only cost accuracy: a square Gaussian
 * matrix is ill-conditioned often enough (σ_min ~ 1/(√n·t) with probability ~1/t), and the
 * f32 product's rounding then tilts the basis out of A's range by ~u·cond(Ω), a 7e-4
 * reconstruction error at cond(Ω) = 6e4 (36×6, seed 15), where alpha·A is exact.
 */
export function firstSketch(s: Session, a: Tensor<'f32'>, o: SvdProblem, alpha: number): Tensor<'f32'> {
  if (sketchSpansColumns(o)) return binary(s, 'mul', a, alpha, 'svd');
  using omega = randn(s, [o.n, sketchWidth(o)], { seed: o.seed });
  return matmul(s, a, omega, { ...PRODUCT, alpha });
}

/** alpha of every product with A: a power of two near 1/max|a|, clamped so alpha and 1/alpha stay normal f32 numbers. */
export function productScale(maxAbs: number): number {
  const exponent = maxAbs > 0 ? Math.min(Math.max(Math.round(Math.log2(maxAbs)), -100), 100) : 0;
  return 2 ** -exponent;
}
