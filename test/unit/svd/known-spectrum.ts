/**
 * Test matrices of known spectrum, built on the host in float64: A = U·diag(s)·Vᵀ with random
 * orthonormal U (m×r) and V (n×r), so the exact singular values and the optimal rank-k error
 * (√(Σ_{i>k} s_i²), Eckart–Young) are known. Also the checks every SVD test makes.
 */
import { prng } from '../compute/helpers.js';

/** A known-spectrum matrix: `a` row-major m×n (float64) and its singular values, descending. */
export interface KnownMatrix {
  a: Float64Array;
  m: number;
  n: number;
  singularValues: number[];
}

/** rows×cols with orthonormal columns: Gaussian columns, Gram–Schmidt twice in float64. */
export function randomOrthonormal(rows: number, cols: number, seed: number): Float64Array {
  const next = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(Math.max(next(), 1e-300))) * Math.cos(2 * Math.PI * next());
  const q = new Float64Array(rows * cols);
  for (let j = 0; j < cols; j++) {
    const col = Array.from({ length: rows }, gauss);
    for (let pass = 0; pass < 2; pass++) {
      for (let k = 0; k < j; k++) {
        let dot = 0;
        for (let i = 0; i < rows; i++) dot += q[i * cols + k]! * col[i]!;
        for (let i = 0; i < rows; i++) col[i]! -= dot * q[i * cols + k]!;
      }
    }
    const norm = Math.hypot(...col);
    for (let i = 0; i < rows; i++) q[i * cols + j] = col[i]! / norm;
  }
  return q;
}

/** A = U·diag(s)·Vᵀ for the given singular values (their count is the rank). */
export function knownMatrix(m: number, n: number, singularValues: number[], seed: number): KnownMatrix {
  const r = singularValues.length;
  const u = randomOrthonormal(m, r, seed);
  const v = randomOrthonormal(n, r, seed + 1);
  const a = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < r; p++) {
      const scaled = u[i * r + p]! * singularValues[p]!;
      for (let j = 0; j < n; j++) a[i * n + j]! += scaled * v[j * r + p]!;
    }
  }
  return { a, m, n, singularValues: [...singularValues].sort((x, y) => y - x) };
}

/** ‖A − U·diag(S)·V‖_F in float64 (u m×k, v k×n, row-major). */
export function reconstructionError(a: Float64Array, m: number, n: number, u: ArrayLike<number>, s: ArrayLike<number>, v: ArrayLike<number>): number {
  const k = s.length;
  let sum = 0;
  const row = new Float64Array(n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) row[j] = a[i * n + j]!;
    for (let p = 0; p < k; p++) {
      const scaled = u[i * k + p]! * s[p]!;
      for (let j = 0; j < n; j++) row[j]! -= scaled * v[p * n + j]!;
    }
    for (let j = 0; j < n; j++) sum += row[j]! * row[j]!;
  }
  return Math.sqrt(sum);
}

/** max |XᵀX − I| for the columns of row-major rows×cols x (`byRows`: of its rows instead). */
export function orthonormalityError(x: ArrayLike<number>, rows: number, cols: number, byRows = false): number {
  const count = byRows ? rows : cols;
  const length = byRows ? cols : rows;
  const at = (vec: number, i: number) => (byRows ? x[vec * cols + i]! : x[i * cols + vec]!);
  let worst = 0;
  for (let p = 0; p < count; p++) {
    for (let q = p; q < count; q++) {
      let dot = 0;
      for (let i = 0; i < length; i++) dot += at(p, i) * at(q, i);
      worst = Math.max(worst, Math.abs(dot - (p === q ? 1 : 0)));
    }
  }
  return worst;
}

/** The optimal rank-k Frobenius error √(Σ_{i>k} s_i²). */
export function optimalError(singularValues: readonly number[], k: number): number {
  return Math.sqrt(singularValues.slice(k).reduce((sum, s) => sum + s * s, 0));
}
