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

#define SMALL_QR_MAX_COLS 64
#define SMALL_QR_THREADS 512
#define SMALL_SVD_MAX 48
#define SMALL_SVD_SWEEPS 30

__device__ __forceinline__ float warp_sum_f(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ double warp_sum_d(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Applies H = I − tau·v·vᵀ (v = [1; p[j+1.., j]]) from the left to columns c0.. of rows j.. of the
// panel p, one warp per column.
__device__ void apply_reflector(float* p, int rows, int cols, int j, int c0, float tau) {
  const int lane = threadIdx.x & 31;
  const int warps = blockDim.x >> 5;
  for (int c = c0 + (threadIdx.x >> 5); c < cols; c += warps) {
    float dot = 0.f;
    for (int r = j + 1 + lane; r < rows; r += 32) dot += p[r * cols + j] * p[r * cols + c];
    dot = warp_sum_f(dot) + p[j * cols + c];
    const float scaled = tau * dot;
    // Every lane has read the head: lane 0 may update it (shuffles order execution, not memory).
    __syncwarp();
    if (lane == 0) p[j * cols + c] -= scaled;
    for (int r = j + 1 + lane; r < rows; r += 32) p[r * cols + c] -= scaled * p[r * cols + j];
  }
}

// Below this share of its squared norm left after the columns before it (a new direction under
// 1e-5 of the column), a column counts as dependent and CholeskyQR2 gives way to Householder.
#define SMALL_QR_PIVOT_FLOOR 1e-10

// CholeskyQR2 in place on the panel: twice G = PᵀP (f64), G = RᵀR (R upper), P ← P·R⁻¹. Returns
// false, the panel then spoilt, when a pivot falls under SMALL_QR_PIVOT_FLOOR of its column's
// squared norm (rank deficiency, or a condition past what two passes repair). `g` holds
// cols×cols doubles and `diag` cols; both are shared, as is `good`.
__device__ bool cholesky_qr2(float* p, int rows, int cols, double* g, double* diag, int* good) {
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
      for (int r = lane; r < rows; r += 32) sum += (double)p[r * cols + a] * (double)p[r * cols + b];
      sum = warp_sum_d(sum);
      if (lane == 0) {
        g[a * cols + b] = sum;
        if (a == b) diag[a] = sum;
      }
    }
    __syncthreads();
    // Right-looking Cholesky by one warp: row k of R, then the trailing upper triangle.
    if (warp == 0) {
      int ok = 1;
      for (int k = 0; k < cols; ++k) {
        const double pivot = g[k * cols + k];
        if (!(pivot > SMALL_QR_PIVOT_FLOOR * diag[k])) {  // also a zero column, and NaN
          ok = 0;
          break;
        }
        const double rkk = sqrt(pivot);
        __syncwarp();  // every lane has read the pivot before lane 0 overwrites it with rkk
        for (int j = k + lane; j < cols; j += 32) g[k * cols + j] = j == k ? rkk : g[k * cols + j] / rkk;
        __syncwarp();
        for (int i = k + 1; i < cols; ++i) {
          for (int j = i + lane; j < cols; j += 32) g[i * cols + j] -= g[k * cols + i] * g[k * cols + j];
        }
        __syncwarp();
      }
      if (lane == 0) *good = ok;
    }
    __syncthreads();
    if (!*good) return false;
    // P ← P·R⁻¹, a thread per row: forward substitution of y·R = p over the row, in place.
    for (int r = tid; r < rows; r += blockDim.x) {
      float* row = p + r * cols;
      for (int j = 0; j < cols; ++j) {
        double v = row[j];
        for (int i = 0; i < j; ++i) v -= (double)row[i] * g[i * cols + j];
        row[j] = (float)(v / g[j * cols + j]);
      }
    }
    __syncthreads();
  }
  return true;
}

// The panel lives in dynamic shared memory (rows·cols floats): every step reads what the one
// before wrote, so shared memory's latency, not global memory's, sets the pace.
extern "C" __global__ void __launch_bounds__(SMALL_QR_THREADS) small_qr(const float* __restrict__ x, float* __restrict__ q, int rows,
                                                                        int cols) {
  extern __shared__ float panel[];
  __shared__ float tau[SMALL_QR_MAX_COLS];
  __shared__ double warp_norms[SMALL_QR_THREADS / 32];
  __shared__ double gram[SMALL_QR_MAX_COLS * SMALL_QR_MAX_COLS];
  __shared__ double gram_diag[SMALL_QR_MAX_COLS];
  __shared__ int cholesky_good;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warps = blockDim.x >> 5;
  const int size = rows * cols;
  for (int i = tid; i < size; i += blockDim.x) panel[i] = x[i];
  __syncthreads();
  if (cholesky_qr2(panel, rows, cols, gram, gram_diag, &cholesky_good)) {
    for (int i = tid; i < size; i += blockDim.x) q[i] = panel[i];
    return;
  }
  // Householder from the panel as given.
  for (int i = tid; i < size; i += blockDim.x) panel[i] = x[i];
  __syncthreads();

  // Factor: H_j zeroes column j below the diagonal; v_j is stored there (its leading 1 implied).
  for (int j = 0; j < cols; ++j) {
    double ss = 0.0;
    for (int r = j + 1 + tid; r < rows; r += blockDim.x) {
      const double v = panel[r * cols + j];
      ss += v * v;
    }
    ss = warp_sum_d(ss);
    if (lane == 0) warp_norms[tid >> 5] = ss;
    __syncthreads();
    // Every thread derives the reflector itself (LAPACK's dlarfg): no second barrier needed.
    double below = 0.0;
    for (int w = 0; w < warps; ++w) below += warp_norms[w];
    const double alpha = panel[j * cols + j];
    float t = 0.f, scale = 0.f, beta = (float)alpha;
    if (below > 0.0) {  // else already upper triangular here: H_j = I
      const double norm = sqrt(alpha * alpha + below);
      const double b = alpha >= 0.0 ? -norm : norm;
      t = (float)((b - alpha) / b);
      scale = (float)(1.0 / (alpha - b));
      beta = (float)b;
    }
    for (int r = j + 1 + tid; r < rows; r += blockDim.x) panel[r * cols + j] *= scale;
    __syncthreads();  // v is complete, and every thread has read alpha
    if (t != 0.f) apply_reflector(panel, rows, cols, j, j + 1, t);
    if (tid == 0) {
      tau[j] = t;
      panel[j * cols + j] = beta;
    }
    __syncthreads();
  }

  // Form Q = H_0·…·H_{cols−1}·I[:, :cols] in place, last reflector first (LAPACK's org2r).
  for (int j = cols - 1; j >= 0; --j) {
    const float t = tau[j];
    if (j < cols - 1 && t != 0.f) apply_reflector(panel, rows, cols, j, j + 1, t);
    __syncthreads();
    for (int r = tid; r < rows; r += blockDim.x) {
      float* at = panel + r * cols + j;
      if (r < j) *at = 0.f;
      else if (r == j) *at = 1.f - t;
      else *at *= -t;
    }
    __syncthreads();
  }
  for (int i = tid; i < size; i += blockDim.x) q[i] = panel[i];
}

// Player `t` of round `round` in the circle method over `m` = even players: 0 stays, the others rotate.
__device__ __forceinline__ int circle_player(int t, int round, int m) {
  return t == 0 ? 0 : 1 + (round + t - 1) % (m - 1);
}

extern "C" __global__ void __launch_bounds__(SMALL_SVD_MAX * 16) small_svd(const float* __restrict__ a, float* __restrict__ left,
                                                                           float* __restrict__ s, float* __restrict__ right, int n,
                                                                           int* __restrict__ info) {
  // Columns of a and of V, each contiguous (a column-major copy), padded against bank conflicts.
  __shared__ double cols_a[SMALL_SVD_MAX][SMALL_SVD_MAX + 1];
  __shared__ double cols_v[SMALL_SVD_MAX][SMALL_SVD_MAX + 1];
  __shared__ double sigma[SMALL_SVD_MAX];
  __shared__ int order[SMALL_SVD_MAX];
  __shared__ int rotated;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  for (int i = tid; i < n * n; i += blockDim.x) {
    const int r = i / n, c = i % n;
    cols_a[c][r] = a[i];
    cols_v[c][r] = r == c ? 1.0 : 0.0;
  }
  const int players = n + (n & 1);  // an odd n gets a bye player (index n): its pairs are skipped
  int sweep = 0;
  for (; sweep < SMALL_SVD_SWEEPS; ++sweep) {
    if (tid == 0) rotated = 0;
    __syncthreads();
    for (int round = 0; round < players - 1; ++round) {
      if (warp < players / 2) {
        int i = circle_player(warp, round, players);
        int j = circle_player(players - 1 - warp, round, players);
        if (i > j) {
          const int t = i;
          i = j;
          j = t;
        }
        if (j < n) {
          double alpha = 0.0, beta = 0.0, gamma = 0.0;
          for (int r = lane; r < n; r += 32) {
            const double ai = cols_a[i][r], aj = cols_a[j][r];
            alpha += ai * ai;
            beta += aj * aj;
            gamma += ai * aj;
          }
          alpha = warp_sum_d(alpha);
          beta = warp_sum_d(beta);
          gamma = warp_sum_d(gamma);
          if (gamma != 0.0 && fabs(gamma) > 1e-13 * sqrt(alpha * beta)) {
            const double zeta = (beta - alpha) / (2.0 * gamma);
            const double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
            const double c = 1.0 / sqrt(1.0 + t * t);
            const double sn = c * t;
            for (int r = lane; r < n; r += 32) {
              const double ai = cols_a[i][r], aj = cols_a[j][r];
              cols_a[i][r] = c * ai - sn * aj;
              cols_a[j][r] = sn * ai + c * aj;
              const double vi = cols_v[i][r], vj = cols_v[j][r];
              cols_v[i][r] = c * vi - sn * vj;
              cols_v[j][r] = sn * vi + c * vj;
            }
            if (lane == 0) rotated = 1;
          }
        }
      }
      __syncthreads();
    }
    if (!rotated) break;
    __syncthreads();
  }

  // σ_j = ‖column j‖; sort descending; left_k = column/σ, right_k = V's column.
  if (warp < n) {
    for (int j = warp; j < n; j += blockDim.x >> 5) {
      double ss = 0.0;
      for (int r = lane; r < n; r += 32) ss += cols_a[j][r] * cols_a[j][r];
      ss = warp_sum_d(ss);
      if (lane == 0) sigma[j] = sqrt(ss);
    }
  }
  __syncthreads();
  if (tid == 0) {
    for (int j = 0; j < n; ++j) order[j] = j;
    for (int j = 0; j < n; ++j) {
      int best = j;
      for (int l = j + 1; l < n; ++l)
        if (sigma[order[l]] > sigma[order[best]]) best = l;
      const int t = order[j];
      order[j] = order[best];
      order[best] = t;
    }
    if (info != nullptr) *info = sweep < SMALL_SVD_SWEEPS ? 0 : 1;
  }
  __syncthreads();
  for (int i = tid; i < n * n; i += blockDim.x) {
    const int k = i / n, r = i % n;
    const int j = order[k];
    const double sj = sigma[j];
    left[i] = sj > 0.0 ? (float)(cols_a[j][r] / sj) : 0.f;
    right[i] = (float)cols_v[j][r];
    if (r == 0) s[k] = (float)sj;
  }
  __syncthreads();
  // A zero σ leaves its left vector undefined: complete it from the unit vectors (one thread; rare).
  if (tid == 0) {
    for (int k = 0; k < n; ++k) {
      if (sigma[order[k]] > 0.0) continue;
      for (int e = 0; e < n; ++e) {
        double w[SMALL_SVD_MAX];
        for (int r = 0; r < n; ++r) w[r] = r == e ? 1.0 : 0.0;
        for (int pass = 0; pass < 2; ++pass) {
          for (int l = 0; l < n; ++l) {
            if (l == k || (l > k && sigma[order[l]] <= 0.0)) continue;  // later zero columns are not set yet
            double dot = 0.0;
            for (int r = 0; r < n; ++r) dot += (double)left[(size_t)l * n + r] * w[r];
            for (int r = 0; r < n; ++r) w[r] -= dot * left[(size_t)l * n + r];
          }
        }
        double norm = 0.0;
        for (int r = 0; r < n; ++r) norm += w[r] * w[r];
        norm = sqrt(norm);
        if (norm > 0.5) {
          for (int r = 0; r < n; ++r) left[(size_t)k * n + r] = (float)(w[r] / norm);
          break;
        }
      }
    }
  }
}
