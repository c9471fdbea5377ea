/**
 * Singular value decomposition of a small dense matrix on the host in float64 by one-sided
 * (Hestenes) Jacobi: plane rotations applied to the columns until every pair is orthogonal
 * to working precision. It is slower than bidiagonalisation for large matrices but simple,
 * and accurate to the last digits for every singular value; the SVD uses it for the q×q
 * core of a truncated SVD and for `full: true` on small matrices.
 */

import { orthonormalizeTail } from './orthonormal-columns.js';

/** Thin SVD of an m×n matrix: a = u·diag(s)·vᵀ with p = min(m, n) triplets, s descending. */
export interface DenseSvd {
  /** m×p, row-major, orthonormal columns. */
  u: Float64Array;
  /** p values, descending, ≥ 0. */
  s: Float64Array;
  /** n×p, row-major, orthonormal columns. */
  v: Float64Array;
}

/** Pairs whose cosine is below this count as orthogonal. */
const ORTHOGONAL = 2 ** -52 * 4;
/** Sweeps before giving up (Jacobi converges quadratically; typical inputs need 6–10). */
const MAX_SWEEPS = 60;

/** The thin SVD of the row-major m×n matrix `a`. */
export function jacobiSvd(a: ArrayLike<number>, m: number, n: number): DenseSvd {
  if (m < n) {
    // Aᵀ = V·S·Uᵀ: factor the tall transpose and swap the factors.
    const t = new Float64Array(m * n);
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) t[j * m + i] = a[i * n + j]!;
    const { u, s, v } = jacobiSvd(t, n, m);
    return { u: v, s, v: u };
  }
  // Columns of A (w) and of the accumulated rotation V (z), each stored contiguously.
  const w = new Float64Array(n * m);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) w[j * m + i] = a[i * n + j]!;
  const z = new Float64Array(n * n);
  for (let j = 0; j < n; j++) z[j * n + j] = 1;
  const norms = new Float64Array(n);
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    for (let j = 0; j < n; j++) norms[j] = dot(w, j * m, j * m, m);
    let rotated = false;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        const alpha = norms[p]!;
        const beta = norms[q]!;
        const gamma = dot(w, p * m, q * m, m);
        if (!(Math.abs(gamma) > ORTHOGONAL * Math.sqrt(alpha * beta))) continue;
        rotated = true;
        // The rotation that zeroes the off-diagonal of [[alpha, gamma], [gamma, beta]].
        const zeta = (beta - alpha) / (2 * gamma);
        const t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t);
        const s = c * t;
        rotate(w, p * m, q * m, m, c, s);
        rotate(z, p * n, q * n, n, c, s);
        norms[p] = alpha - t * gamma;
        norms[q] = beta + t * gamma;
      }
    }
    if (!rotated) break;
  }
  const sigma = new Float64Array(n);
  for (let j = 0; j < n; j++) sigma[j] = Math.sqrt(dot(w, j * m, j * m, m));
  const order = Array.from({ length: n }, (_, j) => j).sort((x, y) => sigma[y]! - sigma[x]!);
  const u = new Float64Array(m * n);
  const v = new Float64Array(n * n);
  const s = new Float64Array(n);
  // Zero singular values sort last; their columns of u get an orthonormal completion.
  let zeroFrom = n;
  order.forEach((src, dst) => {
    const value = sigma[src]!;
    s[dst] = value;
    for (let i = 0; i < n; i++) v[i * n + dst] = z[src * n + i]!;
    if (value > 0 && Number.isFinite(1 / value)) {
      for (let i = 0; i < m; i++) u[i * n + dst] = w[src * m + i]! / value;
    } else {
      zeroFrom = Math.min(zeroFrom, dst);
    }
  });
  orthonormalizeTail(u, m, n, zeroFrom);
  return { u, s, v };
}

function dot(x: Float64Array, a: number, b: number, len: number): number {
  let sum = 0;
  for (let i = 0; i < len; i++) sum += x[a + i]! * x[b + i]!;
  return sum;
}

/** [x_p, x_q] ← [c·x_p − s·x_q, s·x_p + c·x_q]. */
function rotate(x: Float64Array, p: number, q: number, len: number, c: number, s: number): void {
  for (let i = 0; i < len; i++) {
    const xp = x[p + i]!;
    const xq = x[q + i]!;
    x[p + i] = c * xp - s * xq;
    x[q + i] = s * xp + c * xq;
  }
}
