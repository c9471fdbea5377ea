// Device pieces shared by the small dense kernels (small_dense.cu, small_rsvd_cluster.cu): warp
// sums, CholeskyQR's block-wide Cholesky and its substitution, the one-sided Jacobi SVD of a
// small core and its singular vectors.
#pragma once

#define SMALL_SVD_SWEEPS 30
// Below this share of its squared norm left after the columns before it (a new direction under
// 1e-5 of the column), a column counts as dependent and CholeskyQR2 gives way to Householder.
#define SMALL_QR_PIVOT_FLOOR 1e-10
// Lanes that share a pair of columns in a Jacobi round, by default.
#define JACOBI_PAIR_LANES 8

__device__ __forceinline__ float warp_sum_f(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ double warp_sum_d(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The larger of two values, NaN if either is (the reductions' max); `lower` for the smaller.
__device__ __forceinline__ float nan_extreme(float x, float y, bool lower) {
  if (x != x || y != y) return __int_as_float(0x7fc00000);
  return lower ? fminf(x, y) : fmaxf(x, y);
}

// The warp's largest and smallest value (NaN if any lane holds one), in every lane.
__device__ __forceinline__ void warp_extremes(float& hi, float& lo) {
  for (int o = 16; o > 0; o >>= 1) {
    hi = nan_extreme(hi, __shfl_xor_sync(0xffffffffu, hi, o), false);
    lo = nan_extreme(lo, __shfl_xor_sync(0xffffffffu, lo, o), true);
  }
}

// Rows of the panel a warp carries through substitute_rows at once.
#define SUBSTITUTE_ROWS 4

// P ← P·R⁻¹ for the rows×cols panel p (row stride ld, cols ≤ MAX_COLS ≤ 64), R upper triangular
// in g (cols×cols, row major) with rinv its reciprocal diagonal, in f64: a warp per
// SUBSTITUTE_ROWS rows, lane i holding column i (and i + 32). Step j finalises x_j = p_j/R_jj in
// its lane and every later column takes x_j·R_ji off itself: a shuffle and an FMA a step, where a
// thread per row waited on shared memory at every term.
template <int MAX_COLS>
__device__ void substitute_rows(float* p, int rows, int cols, int ld, const double* g, const double* rinv) {
  constexpr bool WIDE = MAX_COLS > 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const bool low = lane < cols, high = WIDE && lane + 32 < cols;  // this lane's columns
  const double inv_low = low ? rinv[lane] : 0.0, inv_high = high ? rinv[lane + 32] : 0.0;
  for (int r0 = warp * SUBSTITUTE_ROWS; r0 < rows; r0 += warps * SUBSTITUTE_ROWS) {
    double x[SUBSTITUTE_ROWS], y[SUBSTITUTE_ROWS];  // columns lane and lane + 32
#pragma unroll
    for (int u = 0; u < SUBSTITUTE_ROWS; ++u) {
      const bool row = r0 + u < rows;
      x[u] = low && row ? p[(r0 + u) * ld + lane] : 0.0;
      y[u] = high && row ? p[(r0 + u) * ld + lane + 32] : 0.0;
    }
    for (int j = 0; j < cols; ++j) {
      const bool upper = WIDE && j >= 32;  // x_j lives in the lanes' second column
      const int from = j & 31;
      const double r_low = low && lane > j ? g[j * cols + lane] : 0.0;
      const double inv_j = __shfl_sync(0xffffffffu, upper ? inv_high : inv_low, from);
      double xj[SUBSTITUTE_ROWS];
#pragma unroll
      for (int u = 0; u < SUBSTITUTE_ROWS; ++u) {
        xj[u] = __shfl_sync(0xffffffffu, upper ? y[u] : x[u], from) * inv_j;
        x[u] = !upper && lane == j ? xj[u] : x[u] - xj[u] * r_low;
      }
      if (WIDE) {
        const double r_high = high && lane + 32 > j ? g[j * cols + lane + 32] : 0.0;
#pragma unroll
        for (int u = 0; u < SUBSTITUTE_ROWS; ++u) y[u] = upper && lane == from ? xj[u] : y[u] - xj[u] * r_high;
      }
    }
#pragma unroll
    for (int u = 0; u < SUBSTITUTE_ROWS; ++u) {
      if (r0 + u >= rows) continue;
      if (low) p[(r0 + u) * ld + lane] = (float)x[u];
      if (high) p[(r0 + u) * ld + lane + 32] = (float)y[u];
    }
  }
}

// Entries of the upper triangle of a q×q matrix (q ≤ 32) each thread of a block_cholesky takes.
#define CHOLESKY_ENTRIES_PER_THREAD(threads) ((32 * 33 / 2 + (threads) - 1) / (threads))

// Cholesky G = RᵀR (R upper) of the cols×cols f64 g (row major, upper triangle read; cols ≤ 32;
// g is spoilt: it ends as the trailing Schur complements) by the whole block of THREADS threads,
// R's upper triangle written into r (cols×cols) and its reciprocal diagonal into rinv. Each
// thread keeps the same few entries (i, j) for every step: at step k it writes R's row k where
// i = k and updates the trailing triangle where i > k, one block barrier a step, where a single
// warp doing all of it made each step a long chain. Returns false (in every thread alike) when a
// pivot falls under SMALL_QR_PIVOT_FLOOR of its column's squared norm (also a NaN or zero
// column). `norms` is shared room for cols doubles.
template <int THREADS>
__device__ bool block_cholesky(double* g, double* r, double* rinv, double* norms, int cols) {
  constexpr int PER = CHOLESKY_ENTRIES_PER_THREAD(THREADS);
  int row[PER], col[PER];
  const int entries = cols * (cols + 1) / 2;
#pragma unroll
  for (int t = 0; t < PER; ++t) {
    int e = threadIdx.x + t * THREADS, i = 0;
    if (e < entries) {
      while (e >= cols - i) e -= cols - i++;
      row[t] = i;
      col[t] = i + e;
    } else {
      row[t] = -1;  // no entry
      col[t] = 0;
    }
  }
  for (int i = threadIdx.x; i < cols; i += THREADS) norms[i] = g[i * cols + i];
  __syncthreads();
  for (int k = 0; k < cols; ++k) {
    const double pivot = g[k * cols + k];
    if (!(pivot > SMALL_QR_PIVOT_FLOOR * norms[k])) return false;
    const double inv = rsqrt(pivot);
#pragma unroll
    for (int t = 0; t < PER; ++t) {
      const int i = row[t], j = col[t];
      if (i == k) r[k * cols + j] = j == k ? pivot * inv : g[k * cols + j] * inv;
      else if (i > k) g[i * cols + j] -= g[k * cols + i] * inv * (g[k * cols + j] * inv);
    }
    if (threadIdx.x == 0) rinv[k] = inv;
    __syncthreads();
  }
  return true;
}

// out (rows×k, contiguous) ← y·leftᵀ: y rows×q (row stride ld), left k rows of q (the core's
// leading singular vectors, so out is U's rows). A thread per output; no barrier.
__device__ __forceinline__ void times_rows_transposed(const float* y, int rows, int ld, const float* left, int q, int k, float* out) {
  for (int o = threadIdx.x; o < rows * k; o += blockDim.x) {
    const int i = o / k, t = o % k;
    float acc = 0.f;
    for (int r = 0; r < q; ++r) acc = fmaf(y[i * ld + r], left[t * q + r], acc);
    out[o] = acc;
  }
}

// Columns of the matrix being rotated and of V (at most CAP), each contiguous, padded against bank conflicts.
template <int CAP>
using JacobiColumns = double[CAP][CAP + 1];

// One-sided Jacobi sweeps over the columns of cols_a (n ≤ CAP), V's columns rotated alike, until a
// sweep rotates nothing; L lanes share a pair of columns (the block needs L·⌈n/2⌉ threads; more L
// for fewer registers). Returns the sweeps run (SMALL_SVD_SWEEPS: not converged).
template <int CAP, int L = JACOBI_PAIR_LANES>
__device__ int jacobi_sweeps(JacobiColumns<CAP>& cols_a, JacobiColumns<CAP>& cols_v, int n, int* rotated) {
  static_assert(L <= 16 && (L & (L - 1)) == 0, "a pair's lanes: a power of two within half a warp");
  constexpr int PER = (CAP + L - 1) / L;  // rows of a column each lane of a pair takes
  const int tid = threadIdx.x;
  const int players = n + (n & 1);  // an odd n gets a bye player (index n): its pairs are skipped
  const int pairs = players / 2;
  const int pair = tid / L, sub = tid % L;
  const unsigned group = ((1u << L) - 1) << (tid & 31 & ~(L - 1));  // this pair's lanes
  const int cycle = players - 1;
  int sweep = 0;
  for (; sweep < SMALL_SVD_SWEEPS; ++sweep) {
    int* flag = rotated + (sweep & 1);
    if (tid == 0) *flag = 0;
    __syncthreads();
    bool turned = false;
    // The circle method's pairing: seats t = pair and players − 1 − pair play each other; seat 0
    // keeps player 0 and seat t ≥ 1 holds player 1 + (round + t − 1) mod (players − 1), stepped a
    // round at a time rather than divided out each round.
    int step_i = pair == 0 ? 0 : (pair - 1) % cycle, step_j = (players - 2 - pair) % cycle;
    for (int round = 0; round < cycle; ++round) {
      if (pair < pairs) {
        int i = pair == 0 ? 0 : 1 + step_i;
        int j = 1 + step_j;
        if (i > j) {
          const int t = i;
          i = j;
          j = t;
        }
        if (j < n) {
          // Every load of the pair's rows issued before any arithmetic, unconditionally, so no
          // branch separates them: a round is a chain of latencies, and a loop of dependent loads
          // paid one shared-memory latency per row. A row past n reads the lane's own first row
          // instead (or, where that is past n too, a row nobody writes) and counts as zero: every
          // address a lane reads is one only it writes, so the pair needs no barrier.
          double ai[PER], aj[PER], vi[PER], vj[PER];
#pragma unroll
          for (int t = 0; t < PER; ++t) {
            const int r = sub + t * L;
            const int row = r < n ? r : sub;
            const double a_i = cols_a[i][row], a_j = cols_a[j][row];
            ai[t] = r < n ? a_i : 0.0;
            aj[t] = r < n ? a_j : 0.0;
            vi[t] = cols_v[i][row];
            vj[t] = cols_v[j][row];
          }
          // Two partial sums each: half as long a chain of dependent FMAs.
          double alpha2[2] = {0.0, 0.0}, beta2[2] = {0.0, 0.0}, gamma2[2] = {0.0, 0.0};
#pragma unroll
          for (int t = 0; t < PER; ++t) {
            alpha2[t & 1] = fma(ai[t], ai[t], alpha2[t & 1]);
            beta2[t & 1] = fma(aj[t], aj[t], beta2[t & 1]);
            gamma2[t & 1] = fma(ai[t], aj[t], gamma2[t & 1]);
          }
          double alpha = alpha2[0] + alpha2[1], beta = beta2[0] + beta2[1], gamma = gamma2[0] + gamma2[1];
#pragma unroll
          for (int o = 1; o < L; o <<= 1) {
            alpha += __shfl_xor_sync(group, alpha, o);
            beta += __shfl_xor_sync(group, beta, o);
            gamma += __shfl_xor_sync(group, gamma, o);
          }
          // |γ| > 1e-10·√(αβ), squared: past that the columns are orthogonal far below f32's resolution.
          if (gamma != 0.0 && gamma * gamma > 1e-20 * (alpha * beta)) {
            // ζ and tan θ in f32 (its division and special functions take a few cycles, f64's a
            // hundred): c and s from it in f64 still make an exact rotation, and an angle off in
            // the 8th digit only leaves a γ that the next sweep removes. Where f32 cannot hold ζ
            // (past 1e18, where ζ² overflows, or a γ under f32's range) it is taken in f64, and
            // past 1e18 t = 1/(2ζ).
            float zf = (float)(beta - alpha) / (float)(2.0 * gamma);
            double t;
            if (fabsf(zf) < 1e18f) {
              t = (double)((zf >= 0.f ? 1.f : -1.f) / (fabsf(zf) + sqrtf(fmaf(zf, zf, 1.f))));
            } else {
              const double zeta = (beta - alpha) / (2.0 * gamma);
              zf = (float)zeta;
              t = fabs(zeta) < 1e18 ? (double)((zf >= 0.f ? 1.f : -1.f) / (fabsf(zf) + sqrtf(fmaf(zf, zf, 1.f)))) : 0.5 / zeta;
            }
            const double c = rsqrt(1.0 + t * t);
            const double sn = c * t;
#pragma unroll
            for (int u = 0; u < PER; ++u) {
              const int r = sub + u * L;
              if (r >= n) continue;
              cols_a[i][r] = c * ai[u] - sn * aj[u];
              cols_a[j][r] = sn * ai[u] + c * aj[u];
              cols_v[i][r] = c * vi[u] - sn * vj[u];
              cols_v[j][r] = sn * vi[u] + c * vj[u];
            }
            turned = true;
          }
        }
      }
      step_i = step_i + 1 == cycle ? 0 : step_i + 1;
      step_j = step_j + 1 == cycle ? 0 : step_j + 1;
      __syncthreads();
    }
    if (turned) atomicOr(flag, 1);
    __syncthreads();
    if (!*flag) break;
  }
  return sweep;
}

// After jacobi_sweeps: σ_j = ‖column j‖ sorted descending into s (its leading `count`), and the
// matching rows of left (column/σ) and right (V's column), each row n long. `left` and `right`
// may be global or shared. `sigma` and `order` are shared scratch of n entries.
template <int CAP>
__device__ void singular_vectors(JacobiColumns<CAP>& cols_a, JacobiColumns<CAP>& cols_v, int n, int count, double* sigma, int* order,
                                 float* left, float* s, float* right) {
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  for (int j = tid >> 5; j < n; j += blockDim.x >> 5) {
    double ss = 0.0;
    for (int r = lane; r < n; r += 32) ss += cols_a[j][r] * cols_a[j][r];
    ss = warp_sum_d(ss);
    if (lane == 0) sigma[j] = sqrt(ss);
  }
  __syncthreads();
  // Each σ's place in the descending order, ties by index: a thread per σ rather than one thread's sort.
  for (int j = tid; j < n; j += blockDim.x) {
    const double sj = sigma[j];
    int place = 0;
    for (int l = 0; l < n; ++l) place += sigma[l] > sj || (sigma[l] == sj && l < j);
    order[place] = j;
  }
  __syncthreads();
  for (int i = tid; i < count * n; i += blockDim.x) {
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
    for (int k = 0; k < count; ++k) {
      if (sigma[order[k]] > 0.0) continue;
      for (int e = 0; e < n; ++e) {
        double w[CAP];
        for (int r = 0; r < n; ++r) w[r] = r == e ? 1.0 : 0.0;
        for (int pass = 0; pass < 2; ++pass) {
          for (int l = 0; l < count; ++l) {
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
  __syncthreads();
}

