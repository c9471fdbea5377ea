/**
 * Repairs the last columns of a column-orthonormal matrix on the host in float64: columns
 * whose singular values are tiny or zero carry little or no direction, yet a truncated SVD
 * must still return orthonormal factors (an exactly low-rank input asked for more rank than
 * it has). Each such column is orthogonalised against every column before it; one that
 * leaves nothing is replaced by a unit vector outside their span.
 */

/** A column keeps its own direction when this fraction of its norm survives the projection. */
const KEEP_FRACTION = 1e-6;

/**
 * Makes columns `start`..n-1 of the row-major m×n matrix `u` orthonormal to each other and
 * to columns 0..start-1 (which must already be orthonormal), in place. Requires n ≤ m.
 */
export function orthonormalizeTail(u: Float64Array, m: number, n: number, start: number): void {
  const column = new Float64Array(m);
  let nextUnit = 0;
  for (let j = start; j < n; j++) {
    for (let i = 0; i < m; i++) column[i] = u[i * n + j]!;
    const before = norm(column);
    let after = before > 0 ? project(u, m, n, j, column) : 0;
    if (!(after > KEEP_FRACTION * before)) {
      // No usable direction: the next unit vector clearly outside the span. The span of j < m
      // columns leaves Σ_i ‖e_i's outside part‖² = m − j ≥ 1, so one has at least 1/√m; unit
      // vectors passed over before only lose outside part as the span grows.
      do {
        column.fill(0);
        column[nextUnit++] = 1;
        after = project(u, m, n, j, column);
      } while (after < 0.5 / Math.sqrt(m));
    }
    for (let i = 0; i < m; i++) u[i * n + j] = column[i]! / after;
  }
}

/** Removes from `column` its components along columns 0..j-1 of u (twice, for float64 orthogonality); returns the norm left. */
function project(u: Float64Array, m: number, n: number, j: number, column: Float64Array): number {
  for (let pass = 0; pass < 2; pass++) {
    for (let k = 0; k < j; k++) {
      let dot = 0;
      for (let i = 0; i < m; i++) dot += u[i * n + k]! * column[i]!;
      for (let i = 0; i < m; i++) column[i]! -= dot * u[i * n + k]!;
    }
  }
  return norm(column);
}

function norm(x: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i]! * x[i]!;
  return Math.sqrt(sum);
}
