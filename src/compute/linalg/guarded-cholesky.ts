/**
 * The host half of one CholeskyQR pass over a tall m×q matrix X: from the Gram matrix
 * G = XᵀX (computed on the device), T with Q = X·T (one device product) and R with X ≈ Q·R.
 *
 * Plain CholeskyQR breaks when X is ill-conditioned or rank-deficient (an exactly low-rank
 * input makes the sketch's Gram singular), so this factorisation is guarded:
 * - Jacobi scaling: the columns are normalised first, so columns of very different norms
 *   (a decaying spectrum) cost nothing.
 * - A column whose scaled pivot falls below {@link DEPENDENT_PIVOT} is numerically dependent
 *   on the earlier ones: it is not normalised (dividing by a pivot made of rounding noise
 *   would amplify the noise) but kept as its residual, X_j minus its projection, and the
 *   later columns skip it. The next pass sees that residual on its own scale: what X held
 *   in that direction separates from the projection's rounding and is normalised then.
 * - A column that is zero, or dependent again in the pass after it was kept as a residual
 *   (so what is left of it is below rounding), is replaced: Q gets a fresh random column
 *   there (the caller adds it), which the next pass orthonormalises, and R keeps the
 *   column's projection coefficients.
 * `minPivot` (1 for orthonormal input, 0 for dependent or replaced columns) tells the caller
 * whether another pass is needed.
 */
import { invertUpper } from './triangular.js';

/** Scaled pivots below this are treated as dependent (f32 Gram entries carry ~1e-6 of rounding). */
export const DEPENDENT_PIVOT = 1e-3;
/** A column whose squared norm is below this fraction of the largest is treated as zero. */
const ZERO_COLUMN = 1e-30;

/** The factor of one CholeskyQR pass. */
export interface CholeskyStep {
  /** q×q upper triangular, row-major: Q = X·T, plus a random column at each replaced column (where T's column is zero). */
  t: Float64Array;
  /** q×q upper triangular, row-major: X ≈ Q·R (a replaced column keeps its coefficients, with a zero diagonal). */
  r: Float64Array;
  /** Columns kept as unnormalised residuals: pass them to the next pass as `previouslyDependent`. */
  dependentColumns: number[];
  /** Columns of Q that must be filled with a random column. */
  replacedColumns: number[];
  /** Smallest scaled pivot: near 1 when X was near orthonormal after scaling, 0 for a dependent or replaced column. */
  minPivot: number;
}

/**
 * Factors the q×q Gram matrix `gram` (row-major; it is symmetrised first, since a device
 * product may round G_ij and G_ji differently). `previouslyDependent` are the columns the
 * previous pass over these columns kept as residuals. Throws a RangeError when the Gram
 * matrix holds NaN or infinity (an overflowing product).
 */
export function choleskyStep(gram: ArrayLike<number>, q: number, previouslyDependent: readonly number[] = []): CholeskyStep {
  let maxDiag = 0;
  for (let j = 0; j < q; j++) {
    const g = gram[j * q + j]!;
    if (!Number.isFinite(g)) throw new RangeError('the Gram matrix is not finite');
    maxDiag = Math.max(maxDiag, g);
  }
  const wasDependent = new Set(previouslyDependent);
  const scale = new Float64Array(q);
  // Scaled factor S with D⁻¹GD⁻¹ ≈ SᵀS on the kept columns; R = S·D.
  const s = new Float64Array(q * q);
  const r = new Float64Array(q * q);
  /** Columns later ones are not orthogonalised against. */
  const skipped = new Array<boolean>(q).fill(false);
  const dependentColumns: number[] = [];
  const replacedColumns: number[] = [];
  let minPivot = 1;
  for (let j = 0; j < q; j++) {
    const g = gram[j * q + j]!;
    if (!(g > maxDiag * ZERO_COLUMN)) {
      scale[j] = 1;
      skipped[j] = true;
      replacedColumns.push(j);
      minPivot = 0;
      continue;
    }
    scale[j] = Math.sqrt(g);
    let pivot = 1;
    for (let i = 0; i < j; i++) {
      if (skipped[i]) continue;
      const gij = gram[i * q + j]!;
      const gji = gram[j * q + i]!;
      if (!Number.isFinite(gij) || !Number.isFinite(gji)) throw new RangeError('the Gram matrix is not finite');
      let v = (gij + gji) / 2 / (scale[i]! * scale[j]!);
      for (let p = 0; p < i; p++) v -= s[p * q + i]! * s[p * q + j]!;
      v /= s[i * q + i]!;
      s[i * q + j] = v;
      r[i * q + j] = v * scale[j]!;
      pivot -= v * v;
    }
    minPivot = Math.min(minPivot, Math.max(pivot, 0));
    if (pivot >= DEPENDENT_PIVOT) {
      s[j * q + j] = Math.sqrt(pivot);
      r[j * q + j] = s[j * q + j]! * scale[j]!;
    } else if (wasDependent.has(j)) {
      skipped[j] = true;
      replacedColumns.push(j);
    } else {
      skipped[j] = true;
      dependentColumns.push(j);
      s[j * q + j] = 1;
      r[j * q + j] = scale[j]!;
    }
  }
  // Replaced columns: S's column is e_j for the inversion, and T's column is zeroed after.
  for (const j of replacedColumns) {
    for (let i = 0; i < j; i++) s[i * q + j] = 0;
    s[j * q + j] = 1;
  }
  // T = (S·D)⁻¹ = D⁻¹·S⁻¹.
  const t = invertUpper(s, q);
  for (let i = 0; i < q; i++) {
    for (let j = i; j < q; j++) t[i * q + j]! /= scale[i]!;
  }
  for (const j of replacedColumns) t[j * q + j] = 0;
  return { t, r, dependentColumns, replacedColumns, minPivot };
}

/**
 * R of X = Q·R for the Q the device actually formed, X·T₃₂ (+ random columns), with T₃₂ the
 * f32 rounding of `step.t`: the exact inverse of T₃₂ on the kept columns (not `step.r`, which
 * T₃₂'s rounding no longer inverts), and `step.r`'s coefficients on the replaced ones.
 */
export function appliedR(step: CholeskyStep, t32: Float32Array, q: number): Float64Array {
  const t = Float64Array.from(t32);
  for (const j of step.replacedColumns) t[j * q + j] = 1;
  const r = invertUpper(t, q);
  for (const j of step.replacedColumns) {
    for (let i = 0; i <= j; i++) r[i * q + j] = step.r[i * q + j]!;
  }
  return r;
}
