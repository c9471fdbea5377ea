/**
 * Dense upper-triangular helpers on the host in float64, for the small q×q factors of the
 * SVD's CholeskyQR steps. Matrices are row-major Float64Arrays of n×n.
 */

/** The inverse of a non-singular upper-triangular matrix (upper triangular too). */
export function invertUpper(r: Float64Array, n: number): Float64Array {
  const inv = new Float64Array(n * n);
  // Column j of R⁻¹ solves R·x = e_j by back substitution; x is zero below row j.
  for (let j = 0; j < n; j++) {
    inv[j * n + j] = 1 / r[j * n + j]!;
    for (let i = j - 1; i >= 0; i--) {
      let sum = 0;
      for (let p = i + 1; p <= j; p++) sum += r[i * n + p]! * inv[p * n + j]!;
      inv[i * n + j] = -sum / r[i * n + i]!;
    }
  }
  return inv;
}

/** a·b for upper-triangular a and b (the product is upper triangular). */
export function multiplyUpper(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let p = i; p < n; p++) {
      const aip = a[i * n + p]!;
      if (aip === 0) continue;
      for (let j = p; j < n; j++) out[i * n + j]! += aip * b[p * n + j]!;
    }
  }
  return out;
}
