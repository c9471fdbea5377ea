/**
 * The exact SVD of the small core of a truncated SVD, on the host in float64. The range
 * finder leaves A ≈ Q·Rᵀ·Pᵀ with Q (m×q) and P (n×q) orthonormal and R (q×q) upper
 * triangular (from the QR of Bᵀ = AᵀQ), so the SVD Rᵀ = X·Σ·Yᵀ gives A ≈ (Q·X)·Σ·(P·Y)ᵀ.
 *
 * Y and Σ² come from the eigen-decomposition of R·Rᵀ (symmetric tridiagonal QR, about 8q³
 * flops; one-sided Jacobi on R took several times longer at q ≈ 140). Squaring costs
 * relative accuracy only for σ below ~1e-8·σ₁ in float64, far under the f32 data's own
 * precision. X = Rᵀ·Y·Σ⁻¹ column by column; columns with a small σ lose orthogonality in
 * that division and columns with σ = 0 have no direction, so those are re-orthonormalised.
 */
import { orthonormalizeTail } from './orthonormal-columns.js';
import { symmetricEigen } from './symmetric-eigen.js';

/** The k leading singular triplets of Rᵀ. */
export interface CoreSvd {
  /** q×k row-major: left singular vectors of Rᵀ (U = Q·x). */
  x: Float64Array;
  /** k singular values, descending. */
  sigma: Float64Array;
  /** q×k row-major: right singular vectors of Rᵀ (V = P·y). */
  y: Float64Array;
}

/** Below this fraction of σ₁ a column of X = Rᵀ·Y·Σ⁻¹ is re-orthogonalised. */
const WEAK_SINGULAR_VALUE = 1e-3;

/** The k leading singular triplets of Rᵀ for the row-major upper-triangular q×q `r`. */
export function coreSvd(r: Float64Array, q: number, k: number): CoreSvd {
  // W = R·Rᵀ, lower triangle (R is upper triangular: the sum starts at column max(i, j)).
  const w = new Float64Array(q * q);
  for (let i = 0; i < q; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = 0;
      for (let p = i; p < q; p++) sum += r[i * q + p]! * r[j * q + p]!;
      w[i * q + j] = sum;
    }
  }
  const { values, vectors } = symmetricEigen(w, q);
  const sigma = new Float64Array(k);
  const y = new Float64Array(q * k);
  const x = new Float64Array(q * k);
  let weakFrom = k;
  for (let j = 0; j < k; j++) {
    sigma[j] = Math.sqrt(Math.max(values[j]!, 0));
    for (let i = 0; i < q; i++) y[i * k + j] = vectors[i * q + j]!;
    if (sigma[j]! <= WEAK_SINGULAR_VALUE * sigma[0]! || sigma[j] === 0) weakFrom = Math.min(weakFrom, j);
    // x_j = Rᵀ·y_j / σ_j (Rᵀ is lower triangular: row i uses y's rows 0..i).
    const inverse = sigma[j]! > 0 ? 1 / sigma[j]! : 0;
    for (let i = 0; i < q; i++) {
      let sum = 0;
      for (let p = 0; p <= i; p++) sum += r[p * q + i]! * vectors[p * q + j]!;
      x[i * k + j] = sum * inverse;
    }
  }
  orthonormalizeTail(x, q, k, weakFrom);
  return { x, sigma, y };
}
