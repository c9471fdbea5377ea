/**
 * Eigen-decomposition of a small dense symmetric matrix on the host in float64: Householder
 * reduction to tridiagonal form, then implicit QR steps with Wilkinson shifts, accumulating
 * every transformation into the eigenvectors. About 7n³ flops, several times fewer than
 * Jacobi sweeps need, which matters for the q×q core of a truncated SVD (q ≈ 140).
 */

/** a = vectors·diag(values)·vectorsᵀ. */
export interface SymmetricEigen {
  /** n eigenvalues, descending. */
  values: Float64Array;
  /** n×n row-major; column j is the unit eigenvector of values[j]. */
  vectors: Float64Array;
}

const EPSILON = 2 ** -52;
/** QR steps allowed per eigenvalue before giving up (convergence is cubic; 2–3 is typical). */
const MAX_STEPS_PER_VALUE = 40;

/** The eigen-decomposition of the row-major symmetric n×n matrix `a` (only its lower triangle is read). */
export function symmetricEigen(a: ArrayLike<number>, n: number): SymmetricEigen {
  const work = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) work[i * n + j] = a[i * n + j]!;
  // The accumulated transformation, stored column by column (q[j·n + i] is row i of column j),
  // so the rotations and reflections stream through contiguous memory.
  const q = new Float64Array(n * n);
  for (let i = 0; i < n; i++) q[i * n + i] = 1;
  const d = new Float64Array(n);
  const e = new Float64Array(Math.max(n - 1, 0));
  tridiagonalize(work, n, q, d, e);
  diagonalizeTridiagonal(d, e, n, q);
  const order = Array.from({ length: n }, (_, j) => j).sort((x, y) => d[y]! - d[x]!);
  const values = new Float64Array(n);
  const vectors = new Float64Array(n * n);
  order.forEach((src, dst) => {
    values[dst] = d[src]!;
    for (let i = 0; i < n; i++) vectors[i * n + dst] = q[src * n + i]!;
  });
  return { values, vectors };
}

/**
 * Householder reflections H_k = I − β_k·v_k·v_kᵀ zero column k below its subdiagonal: a becomes
 * Qᵀ·a·Q tridiagonal (diagonal d, off-diagonal e), working on a's lower triangle only, and
 * q (column-major, the identity on entry) becomes Q = H_0·H_1···H_(n−3), accumulated backwards
 * so each reflection only touches the trailing block it acts on (4n³/3 flops instead of 2n³).
 */
function tridiagonalize(a: Float64Array, n: number, q: Float64Array, d: Float64Array, e: Float64Array): void {
  const reflectors = new Float64Array(n * n);
  const betas = new Float64Array(n);
  const p = new Float64Array(n);
  for (let k = 0; k < n - 2; k++) {
    const start = k + 1;
    const v = reflectors.subarray(k * n, k * n + n);
    let tail = 0;
    for (let i = start + 1; i < n; i++) tail += a[i * n + k]! ** 2;
    const x0 = a[start * n + k]!;
    d[k] = a[k * n + k]!;
    if (tail === 0) {
      e[k] = x0;
      continue;
    }
    const norm = Math.sqrt(x0 * x0 + tail);
    const alpha = x0 >= 0 ? -norm : norm;
    v[start] = x0 - alpha;
    for (let i = start + 1; i < n; i++) v[i] = a[i * n + k]!;
    const beta = 2 / (v[start]! ** 2 + tail);
    betas[k] = beta;
    e[k] = alpha;
    // Trailing block S ← H·S·H as the symmetric rank-2 update S − v·wᵀ − w·vᵀ, with
    // p = β·S·v and w = p − (β/2)(pᵀv)·v; S·v from the lower triangle.
    p.fill(0, start);
    for (let i = start; i < n; i++) {
      const row = i * n;
      const vi = v[i]!;
      let sum = a[row + i]! * vi;
      for (let j = start; j < i; j++) {
        const sij = a[row + j]!;
        sum += sij * v[j]!;
        p[j]! += sij * vi;
      }
      p[i]! += sum;
    }
    let pv = 0;
    for (let i = start; i < n; i++) {
      p[i]! *= beta;
      pv += p[i]! * v[i]!;
    }
    const half = (beta * pv) / 2;
    for (let i = start; i < n; i++) p[i]! -= half * v[i]!;
    for (let i = start; i < n; i++) {
      const row = i * n;
      const vi = v[i]!;
      const wi = p[i]!;
      for (let j = start; j <= i; j++) a[row + j]! -= vi * p[j]! + wi * v[j]!;
    }
  }
  if (n >= 2) {
    d[n - 2] = a[(n - 2) * n + (n - 2)]!;
    e[n - 2] = a[(n - 1) * n + (n - 2)]!;
  }
  if (n >= 1) d[n - 1] = a[(n - 1) * n + (n - 1)]!;
  // q ← H_k·q for k from the last reflection to the first; H_k acts on rows and columns ≥ k+1.
  for (let k = n - 3; k >= 0; k--) {
    const beta = betas[k]!;
    if (beta === 0) continue;
    const v = reflectors.subarray(k * n, k * n + n);
    for (let j = k + 1; j < n; j++) {
      const col = j * n;
      let dot = 0;
      for (let i = k + 1; i < n; i++) dot += v[i]! * q[col + i]!;
      const f = beta * dot;
      if (f === 0) continue;
      for (let i = k + 1; i < n; i++) q[col + i]! -= f * v[i]!;
    }
  }
}

/**
 * Implicit symmetric QR on the tridiagonal (d, e): each step chases a bulge down the active
 * block with plane rotations, the first one chosen by the Wilkinson shift; off-diagonals
 * below ε·(|d_i| + |d_i+1|) deflate. The rotations are accumulated into q's (contiguous) columns.
 */
function diagonalizeTridiagonal(d: Float64Array, e: Float64Array, n: number, q: Float64Array): void {
  let hi = n - 1;
  let steps = 0;
  while (hi > 0) {
    if (negligible(d, e, hi - 1)) {
      e[hi - 1] = 0;
      hi--;
      steps = 0;
      continue;
    }
    if (++steps > MAX_STEPS_PER_VALUE) throw new Error('symmetric eigen-decomposition did not converge');
    let lo = hi - 1;
    while (lo > 0 && !negligible(d, e, lo - 1)) lo--;
    if (lo > 0) e[lo - 1] = 0;
    // Wilkinson shift: the eigenvalue of the trailing 2×2 closer to d[hi].
    const delta = (d[hi - 1]! - d[hi]!) / 2;
    const off = e[hi - 1]!;
    const shift = d[hi]! - (off * off) / (delta + (delta >= 0 ? 1 : -1) * Math.hypot(delta, off));
    let x = d[lo]! - shift;
    let z = e[lo]!;
    for (let k = lo; k < hi; k++) {
      // Rotation on coordinates (k, k+1) whose first column is ∝ (x, z): it zeroes the bulge.
      const r = Math.hypot(x, z);
      const c = r === 0 ? 1 : x / r;
      const s = r === 0 ? 0 : z / r;
      if (k > lo) e[k - 1] = r;
      const a = d[k]!;
      const b = e[k]!;
      const dd = d[k + 1]!;
      d[k] = c * c * a + 2 * c * s * b + s * s * dd;
      d[k + 1] = s * s * a - 2 * c * s * b + c * c * dd;
      e[k] = c * s * (dd - a) + (c * c - s * s) * b;
      if (k + 1 < hi) {
        const next = e[k + 1]!;
        z = s * next;
        e[k + 1] = c * next;
        x = e[k]!;
      }
      const ck = k * n;
      const ck1 = ck + n;
      for (let row = 0; row < n; row++) {
        const qk = q[ck + row]!;
        const qk1 = q[ck1 + row]!;
        q[ck + row] = c * qk + s * qk1;
        q[ck1 + row] = -s * qk + c * qk1;
      }
    }
  }
}

function negligible(d: Float64Array, e: Float64Array, i: number): boolean {
  return Math.abs(e[i]!) <= EPSILON * (Math.abs(d[i]!) + Math.abs(d[i + 1]!));
}
