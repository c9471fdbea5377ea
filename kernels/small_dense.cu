// Dense factorizations of small matrices in one thread block each, for gpu.svd's narrow sketches:
// nothing goes back to the host and no library workspace is needed, so a truncated SVD of a small
// matrix is a short chain of launches.
//
// small_qr:  an orthonormal basis Q (rows×cols, row-major) of a row-major rows×cols panel
//            (cols ≤ SMALL_QR_MAX_COLS, held in shared memory): CholeskyQR2 (twice G = PᵀP in
//            f64, G = RᵀR, P ← P·R⁻¹; a few passes over the panel, each parallel over its rows),
//            and where a column is (nearly) dependent on the ones before it, Householder QR
//            instead (LAPACK's geqr2 + org2r in f32: orthonormal whatever the panel's rank, a zero
//            column gets the identity reflector, but 2·cols dependent steps).
// small_svd: one-sided (Hestenes) Jacobi SVD of a row-major n×n matrix (n ≤ SMALL_SVD_MAX) in f64,
//            a = leftᵀ·diag(s)·right with the singular vectors as rows, s descending; a column
//            with σ = 0 gets a unit vector orthogonal to the others. info: 0, or 1 when the
//            sweeps ran out before every pair was orthogonal to tolerance.
// small_rsvd: a whole truncated SVD of a small matrix (sketch width q ≤ SMALL_RSVD_MAX_Q) in one
//            launch: the products with A, every orthonormalisation (as small_qr) and the core's
//            Jacobi SVD (as small_svd) run back to back in one block, the panels in shared memory.

#define SMALL_QR_MAX_COLS 64
#define SMALL_QR_THREADS 512
#define SMALL_SVD_MAX 48
#define SMALL_RSVD_THREADS 1024
#define SMALL_RSVD_MAX_Q 32

#include "small_dense.cuh"

// Applies H = I − tau·v·vᵀ (v = [1; p[j+1.., j]]) from the left to columns c0.. of rows j.. of the
// panel p (row stride ld), one warp per column.
__device__ void apply_reflector(float* p, int rows, int cols, int ld, int j, int c0, float tau) {
  const int lane = threadIdx.x & 31;
  const int warps = blockDim.x >> 5;
  for (int c = c0 + (threadIdx.x >> 5); c < cols; c += warps) {
    float dot = 0.f;
    for (int r = j + 1 + lane; r < rows; r += 32) dot += p[r * ld + j] * p[r * ld + c];
    dot = warp_sum_f(dot) + p[j * ld + c];
    const float scaled = tau * dot;
    // Every lane has read the head: lane 0 may update it (shuffles order execution, not memory).
    __syncwarp();
    if (lane == 0) p[j * ld + c] -= scaled;
    for (int r = j + 1 + lane; r < rows; r += 32) p[r * ld + c] -= scaled * p[r * ld + j];
  }
}

// CholeskyQR2 in place on the panel (row stride ld, at most MAX_COLS columns): twice G = PᵀP (f64), G = RᵀR (R upper), P ← P·R⁻¹. Returns
// false, the panel then spoilt, when a pivot falls under SMALL_QR_PIVOT_FLOOR of its column's
// squared norm (rank deficiency, or a condition past what two passes repair). `g` holds
// cols×cols doubles, `diag` and `rinv` (1/R's diagonal) cols each; all shared, as is `good`.
template <int MAX_COLS>
__device__ bool cholesky_qr2(float* p, int rows, int cols, int ld, double* g, double* diag, double* rinv, int* good) {
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warps = blockDim.x >> 5;
  const int entries = cols * (cols + 1) / 2;
  for (int pass = 0; pass < 2; ++pass) {
    // G's upper triangle, a warp per entry (a, b), a ≤ b.
    for (int e = warp; e < entries; e += warps) {
      int a = 0, rest = e;
      while (rest >= cols - a) rest -= cols - a++;
      const int b = a + rest;
      double sum = 0.0;
      for (int r = lane; r < rows; r += 32) sum += (double)p[r * ld + a] * (double)p[r * ld + b];
      sum = warp_sum_d(sum);
      if (lane == 0) {
        g[a * cols + b] = sum;
        if (a == b) diag[a] = sum;
      }
    }
    __syncthreads();
    // Right-looking Cholesky by one warp: row k of R, then the trailing upper triangle, each lane
    // updating its own columns so that a lane's loads never wait on another lane's stores.
    if (warp == 0) {
      int ok = 1;
      for (int k = 0; k < cols; ++k) {
        const double pivot = g[k * cols + k];
        if (!(pivot > SMALL_QR_PIVOT_FLOOR * diag[k])) {  // also a zero column, and NaN
          ok = 0;
          break;
        }
        const double inv = rsqrt(pivot);
        __syncwarp();  // every lane has read the pivot before its owner overwrites it
        for (int j = k + lane; j < cols; j += 32) g[k * cols + j] = j == k ? pivot * inv : g[k * cols + j] * inv;
        if (lane == 0) rinv[k] = inv;
        __syncwarp();
        for (int j = k + 1 + lane; j < cols; j += 32) {
          const double rkj = g[k * cols + j];
          // Four rows' loads ahead of their stores: the compiler cannot tell the rows apart.
          for (int i0 = k + 1; i0 <= j; i0 += 4) {
            double next[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) next[u] = i0 + u <= j ? g[(i0 + u) * cols + j] - g[k * cols + i0 + u] * rkj : 0.0;
#pragma unroll
            for (int u = 0; u < 4; ++u)
              if (i0 + u <= j) g[(i0 + u) * cols + j] = next[u];
          }
        }
        __syncwarp();
      }
      if (lane == 0) *good = ok;
    }
    __syncthreads();
    if (!*good) return false;
    substitute_rows<MAX_COLS>(p, rows, cols, ld, g, rinv);
    __syncthreads();
  }
  return true;
}

// Householder QR in place: the panel (rows×cols, row stride ld, as given) becomes the orthonormal
// Q of its QR (LAPACK's geqr2 then org2r in f32). `tau` holds cols floats and `warp_norms` a
// double per warp; both are shared.
__device__ void householder_qr(float* panel, int rows, int cols, int ld, float* tau, double* warp_norms) {
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warps = blockDim.x >> 5;
  // Factor: H_j zeroes column j below the diagonal; v_j is stored there (its leading 1 implied).
  for (int j = 0; j < cols; ++j) {
    double ss = 0.0;
    for (int r = j + 1 + tid; r < rows; r += blockDim.x) {
      const double v = panel[r * ld + j];
      ss += v * v;
    }
    ss = warp_sum_d(ss);
    if (lane == 0) warp_norms[tid >> 5] = ss;
    __syncthreads();
    // Every thread derives the reflector itself (LAPACK's dlarfg): no second barrier needed.
    double below = 0.0;
    for (int w = 0; w < warps; ++w) below += warp_norms[w];
    const double alpha = panel[j * ld + j];
    float t = 0.f, scale = 0.f, beta = (float)alpha;
    if (below > 0.0) {  // else already upper triangular here: H_j = I
      const double norm = sqrt(alpha * alpha + below);
      const double b = alpha >= 0.0 ? -norm : norm;
      t = (float)((b - alpha) / b);
      scale = (float)(1.0 / (alpha - b));
      beta = (float)b;
    }
    for (int r = j + 1 + tid; r < rows; r += blockDim.x) panel[r * ld + j] *= scale;
    __syncthreads();  // v is complete, and every thread has read alpha
    if (t != 0.f) apply_reflector(panel, rows, cols, ld, j, j + 1, t);
    if (tid == 0) {
      tau[j] = t;
      panel[j * ld + j] = beta;
    }
    __syncthreads();
  }

  // Form Q = H_0·…·H_{cols−1}·I[:, :cols] in place, last reflector first (LAPACK's org2r).
  for (int j = cols - 1; j >= 0; --j) {
    const float t = tau[j];
    if (j < cols - 1 && t != 0.f) apply_reflector(panel, rows, cols, ld, j, j + 1, t);
    __syncthreads();
    for (int r = tid; r < rows; r += blockDim.x) {
      float* at = panel + r * ld + j;
      if (r < j) *at = 0.f;
      else if (r == j) *at = 1.f - t;
      else *at *= -t;
    }
    __syncthreads();
  }
}

// The panel lives in dynamic shared memory (rows·(cols | 1) floats: an odd row stride spreads a
// column over the banks): every step reads what the one before wrote, so shared memory's
// latency, not global memory's, sets the pace.
extern "C" __global__ void __launch_bounds__(SMALL_QR_THREADS) small_qr(const float* __restrict__ x, float* __restrict__ q, int rows,
                                                                        int cols) {
  extern __shared__ float panel[];
  __shared__ float tau[SMALL_QR_MAX_COLS];
  __shared__ double warp_norms[32];
  __shared__ double gram[SMALL_QR_MAX_COLS * SMALL_QR_MAX_COLS];
  __shared__ double gram_diag[SMALL_QR_MAX_COLS];
  __shared__ double gram_rinv[SMALL_QR_MAX_COLS];
  __shared__ int cholesky_good;
  const int size = rows * cols;
  const int ld = cols | 1;
  for (int i = threadIdx.x; i < size; i += blockDim.x) panel[i / cols * ld + i % cols] = x[i];
  __syncthreads();
  if (!cholesky_qr2<SMALL_QR_MAX_COLS>(panel, rows, cols, ld, gram, gram_diag, gram_rinv, &cholesky_good)) {
    // Householder from the panel as given.
    for (int i = threadIdx.x; i < size; i += blockDim.x) panel[i / cols * ld + i % cols] = x[i];
    __syncthreads();
    householder_qr(panel, rows, cols, ld, tau, warp_norms);
  }
  for (int i = threadIdx.x; i < size; i += blockDim.x) q[i] = panel[i / cols * ld + i % cols];
}

extern "C" __global__ void __launch_bounds__(SMALL_SVD_MAX * 16) small_svd(const float* __restrict__ a, float* __restrict__ left,
                                                                           float* __restrict__ s, float* __restrict__ right, int n,
                                                                           int* __restrict__ info) {
  __shared__ JacobiColumns<SMALL_SVD_MAX> cols_a, cols_v;
  __shared__ double sigma[SMALL_SVD_MAX];
  __shared__ int order[SMALL_SVD_MAX];
  __shared__ int rotated[2];
  for (int i = threadIdx.x; i < n * n; i += blockDim.x) {
    const int r = i / n, c = i % n;
    cols_a[c][r] = a[i];
    cols_v[c][r] = r == c ? 1.0 : 0.0;
  }
  __syncthreads();
  const int sweeps = jacobi_sweeps<SMALL_SVD_MAX, 16>(cols_a, cols_v, n, rotated);  // 3 rows a lane within 80 registers
  if (threadIdx.x == 0 && info != nullptr) *info = sweeps < SMALL_SVD_SWEEPS ? 0 : 1;
  singular_vectors(cols_a, cols_v, n, n, sigma, order, left, s, right);
}

// Sketch product into shared y (row stride ldy): alpha·A·x (m×q, x n×q) or with `transpose`
// alpha·Aᵀ·x (n×q, x m×q), x of row stride ldx; A row-major m×n in global memory (read through
// L1), x shared or global. A thread per C
// consecutive outputs of a row of y (each value of A loaded once for them), consecutive threads
// reading consecutive elements of A's rows in the transposed form.
template <int C>
__device__ void sketch_product(const float* __restrict__ a, const float* x, int ldx, float* y, int ldy, int m, int n, int q, float alpha,
                               bool transpose) {
  const int groups = (q + C - 1) / C;
  const int rows = transpose ? n : m;
  for (int o = threadIdx.x; o < rows * groups; o += blockDim.x) {
    const int row = transpose ? o % rows : o / groups;
    const int c0 = (transpose ? o / rows : o % groups) * C;
    float acc[C];
#pragma unroll
    for (int u = 0; u < C; ++u) acc[u] = 0.f;
    const int len = transpose ? m : n;
    for (int l = 0; l < len; ++l) {
      const float value = __ldg(transpose ? a + (size_t)l * n + row : a + (size_t)row * n + l);
      const float* xl = x + l * ldx + c0;
#pragma unroll
      for (int u = 0; u < C; ++u)
        if (c0 + u < q) acc[u] = fmaf(value, xl[u], acc[u]);
    }
#pragma unroll
    for (int u = 0; u < C; ++u)
      if (c0 + u < q) y[row * ldy + c0 + u] = alpha * acc[u];
  }
  __syncthreads();
}

// The products of the one-launch SVD: α·A·x in groups of 6 columns (m·⌈q/6⌉ threads), α·Aᵀ·x in
// groups of 4 (n·⌈q/4⌉: the transposed form's threads are fewer and their sums longer).
__device__ __forceinline__ void a_times(const float* __restrict__ a, const float* x, int ldx, float* y, int ldy, int m, int n, int q, float alpha) {
  sketch_product<6>(a, x, ldx, y, ldy, m, n, q, alpha, false);
}
__device__ __forceinline__ void at_times(const float* __restrict__ a, const float* x, int ldx, float* y, int ldy, int m, int n, int q, float alpha) {
  sketch_product<4>(a, x, ldx, y, ldy, m, n, q, alpha, true);
}

// Shared scratch of the one-launch SVD besides its panels.
struct RsvdScratch {
  double gram[SMALL_RSVD_MAX_Q * SMALL_RSVD_MAX_Q];
  double gram_diag[SMALL_RSVD_MAX_Q];
  double rinv[SMALL_RSVD_MAX_Q];
  double warp_norms[32];
  float tau[SMALL_RSVD_MAX_Q];
  JacobiColumns<SMALL_RSVD_MAX_Q> cols_a, cols_v;
  double sigma[SMALL_RSVD_MAX_Q];
  int order[SMALL_RSVD_MAX_Q];
  float left[SMALL_RSVD_MAX_Q * SMALL_RSVD_MAX_Q];   // the core's leading k left singular vectors, rows of q
  float right[SMALL_RSVD_MAX_Q * SMALL_RSVD_MAX_Q];  // and right ones
  float polish[SMALL_RSVD_MAX_Q * SMALL_RSVD_MAX_Q];  // k×k Gram matrix of U or V
  float s[SMALL_RSVD_MAX_Q];
  float hi[32], lo[32];
  int good, rotated[2];
};

// panel (rows×q, row stride ld, shared) ← an orthonormal basis of its columns: CholeskyQR2, or
// where it breaks down, Householder QR of the panel as `refill` recomputes it.
template <typename Refill>
__device__ void orthonormalize_panel(float* panel, int rows, int q, int ld, RsvdScratch& sc, Refill refill) {
  if (cholesky_qr2<SMALL_RSVD_MAX_Q>(panel, rows, q, ld, sc.gram, sc.gram_diag, sc.rinv, &sc.good)) return;
  refill();
  householder_qr(panel, rows, q, ld, sc.tau, sc.warp_norms);
}

// One Newton–Schulz step towards orthonormal columns of x (rows×k, global, row-major): x ←
// 1.5·x − 0.5·x·(xᵀx), or with `by_rows` towards orthonormal rows of x (k×cols): x ← 1.5·x −
// 0.5·(x·xᵀ)·x. `tmp` is shared room for rows·k floats.
__device__ void polish_step(float* x, int rows, int cols, bool by_rows, float* gram, float* tmp) {
  const int k = by_rows ? rows : cols;
  const int len = by_rows ? cols : rows;
  for (int o = threadIdx.x; o < k * k; o += blockDim.x) {
    const int i = o / k, j = o % k;
    float acc = 0.f;
    for (int l = 0; l < len; ++l) acc = by_rows ? fmaf(x[i * cols + l], x[j * cols + l], acc) : fmaf(x[l * cols + i], x[l * cols + j], acc);
    gram[o] = acc;
  }
  __syncthreads();
  for (int o = threadIdx.x; o < rows * cols; o += blockDim.x) {
    const int r = o / cols, c = o % cols;
    float acc = 0.f;
    if (by_rows) {
      for (int l = 0; l < k; ++l) acc = fmaf(gram[r * k + l], x[l * cols + c], acc);
    } else {
      for (int l = 0; l < k; ++l) acc = fmaf(x[r * cols + l], gram[l * k + c], acc);
    }
    tmp[o] = fmaf(-0.5f, acc, 1.5f * x[o]);
  }
  __syncthreads();
  for (int o = threadIdx.x; o < rows * cols; o += blockDim.x) x[o] = tmp[o];
  __syncthreads();
}

// gpu.svd's truncated SVD of a small row-major m×n matrix a in one block (ops/svd.ts has the
// algorithm): max|a| and NaN/±∞, Y = α·A·Ω orthonormalised, `iters` power iterations
// (Z = orth(α·Aᵀ·Y), Y = orth(α·A·Z)), Bᵀ = α·Aᵀ·Y, P = orth(Bᵀ), the q×q core Bᵀᵀ·P by
// Jacobi, U = Y·Xₖᵀ and V = Yₖ·Pᵀ each polished by a Newton–Schulz step, s = σₖ/α. α is the
// power of two nearest 1/max|a|. Each orthonormalisation is CholeskyQR2 with Householder QR
// where it breaks down. status ← [max a, min a (NaN if any is), 1 if the core's Jacobi ran out
// of sweeps else 0]; on a non-finite a nothing else is written.
// Dynamic shared memory: the panels Y (m×q), Z (n×q) and P (n×q), (m + 2n)·q floats.
extern "C" __global__ void __launch_bounds__(SMALL_RSVD_THREADS) small_rsvd(const float* __restrict__ a, const float* __restrict__ omega,
                                                                            float* __restrict__ u, float* __restrict__ s,
                                                                            float* __restrict__ v, int m, int n, int q, int k, int iters,
                                                                            float* __restrict__ status) {
  extern __shared__ float panels[];
  __shared__ RsvdScratch sc;
  const int ld = q | 1;  // an odd row stride spreads a column over the banks
  float* y = panels;
  float* z = y + m * ld;
  float* p = z + n * ld;
  const int tid = threadIdx.x;
  const int lane = tid & 31;

  float hi = -__int_as_float(0x7f800000), lo = __int_as_float(0x7f800000);
  for (int i = tid; i < m * n; i += blockDim.x) {
    const float x = a[i];
    hi = nan_extreme(hi, x, false);
    lo = nan_extreme(lo, x, true);
  }
  warp_extremes(hi, lo);
  if (lane == 0) {
    sc.hi[tid >> 5] = hi;
    sc.lo[tid >> 5] = lo;
  }
  __syncthreads();
  hi = sc.hi[0];
  lo = sc.lo[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
    hi = nan_extreme(hi, sc.hi[w], false);
    lo = nan_extreme(lo, sc.lo[w], true);
  }
  if (tid == 0) {
    status[0] = hi;
    status[1] = lo;
    status[2] = 0.f;
  }
  if (!isfinite(hi) || !isfinite(lo)) return;
  const float max_abs = fmaxf(fabsf(hi), fabsf(lo));
  const int exponent = max_abs > 0.f ? max(-100, min(100, (int)floor(log2((double)max_abs) + 0.5))) : 0;
  const float alpha = ldexpf(1.f, -exponent);

  a_times(a, omega, q, y, ld, m, n, q, alpha);
  orthonormalize_panel(y, m, q, ld, sc, [&] { a_times(a, omega, q, y, ld, m, n, q, alpha); });
  for (int it = 0; it < iters; ++it) {
    at_times(a, y, ld, z, ld, m, n, q, alpha);
    orthonormalize_panel(z, n, q, ld, sc, [&] { at_times(a, y, ld, z, ld, m, n, q, alpha); });
    a_times(a, z, ld, y, ld, m, n, q, alpha);
    orthonormalize_panel(y, m, q, ld, sc, [&] { a_times(a, z, ld, y, ld, m, n, q, alpha); });
  }
  at_times(a, y, ld, z, ld, m, n, q, alpha);  // Bᵀ
  const auto copy_bt = [&] {
    for (int i = tid; i < n * ld; i += blockDim.x) p[i] = z[i];
    __syncthreads();
  };
  copy_bt();
  orthonormalize_panel(p, n, q, ld, sc, copy_bt);

  // The core Bᵀᵀ·P, column-major into the Jacobi columns.
  for (int o = tid; o < q * q; o += blockDim.x) {
    const int r = o / q, c = o % q;
    double acc = 0.0;
    for (int i = 0; i < n; ++i) acc += (double)z[i * ld + r] * (double)p[i * ld + c];
    sc.cols_a[c][r] = acc;
    sc.cols_v[c][r] = r == c ? 1.0 : 0.0;
  }
  __syncthreads();
  const int sweeps = jacobi_sweeps<SMALL_RSVD_MAX_Q, 16>(sc.cols_a, sc.cols_v, q, sc.rotated);  // 2 rows a lane within 64 registers
  if (tid == 0 && sweeps >= SMALL_SVD_SWEEPS) status[2] = 1.f;
  singular_vectors(sc.cols_a, sc.cols_v, q, k, sc.sigma, sc.order, sc.left, sc.s, sc.right);

  times_rows_transposed(y, m, ld, sc.left, q, k, u);
  for (int o = tid; o < k * n; o += blockDim.x) {
    const int t = o / n, j = o % n;
    float acc = 0.f;
    for (int r = 0; r < q; ++r) acc = fmaf(sc.right[t * q + r], p[j * ld + r], acc);
    v[o] = acc;
  }
  if (tid < k) s[tid] = sc.s[tid] / alpha;
  __syncthreads();
  polish_step(u, m, k, false, sc.polish, y);
  polish_step(v, k, n, true, sc.polish, p);
}
