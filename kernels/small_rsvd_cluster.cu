// gpu.svd's truncated SVD of a small matrix in one launch of a thread-block cluster (sm_90+): the
// algorithm of small_rsvd (small_dense.cu), with A's rows split over the cluster's CTAs and held
// in their shared memory, so every product, Gram matrix and substitution is an eighth of the
// one-block kernel's, and A is read from global memory once. The power iterations' bases are
// orthonormalised by one CholeskyQR pass instead of two (see cluster_cholesky_qr).
//
// CTA r holds rows [r·⌈m/C⌉, …) of A and of the m-row panels (Y, U), and owns rows [r·⌈n/C⌉, …)
// of the n-row panels (Z, Bᵀ, P, and V's columns). Sums over the split rows meet in distributed
// shared memory: each CTA writes its partial sums, the cluster syncs, and every CTA adds all the
// partials in rank order, so every CTA holds the same total to the bit and takes the same
// branches (a Cholesky pivot, the Jacobi sweeps) as the others, with no broadcast needed.
//
// CholeskyQR2 here has no Householder fallback: where it breaks down (a rank-deficient sketch),
// status[2] ← 2 and nothing else is written; the caller runs the one-block kernel instead.
#include "cluster.cuh"
#include "philox.cuh"
#include "small_dense.cuh"

#define RSVD_CLUSTER_THREADS 256
#define RSVD_CLUSTER_MAX_Q 32

struct ClusterScratch {
  double gram[RSVD_CLUSTER_MAX_Q * RSVD_CLUSTER_MAX_Q];  // a reduced q×q matrix (Gram, core, polish)
  double r[RSVD_CLUSTER_MAX_Q * RSVD_CLUSTER_MAX_Q];  // its Cholesky factor
  double rinv[RSVD_CLUSTER_MAX_Q];
  double norms[RSVD_CLUSTER_MAX_Q];  // the Gram matrix's diagonal before the factorisation
  JacobiColumns<RSVD_CLUSTER_MAX_Q> cols_a, cols_v;
  double sigma[RSVD_CLUSTER_MAX_Q];
  int order[RSVD_CLUSTER_MAX_Q];
  float left[RSVD_CLUSTER_MAX_Q * RSVD_CLUSTER_MAX_Q];   // the core's leading k left singular vectors, rows of q
  float right[RSVD_CLUSTER_MAX_Q * RSVD_CLUSTER_MAX_Q];  // and right ones
  float s[RSVD_CLUSTER_MAX_Q];
  float warp_hi[RSVD_CLUSTER_THREADS / 32], warp_lo[RSVD_CLUSTER_THREADS / 32];
  float extremes[2];  // this CTA's [max, min] of its rows, read by the others
  int rotated[2];
};

// Partial sums over this CTA's rows, and their totals over the cluster.
struct ClusterSums {
  double* parts;  // two slots of `cap` doubles in dynamic shared memory, taken in turn
  int cap;
  int turn;

  __device__ double* mine() { return parts + turn * cap; }

  // total[i] ← Σ over the cluster's CTAs, in rank order, of their mine()[i], i < count. Two slots
  // taken in turn make it safe without a second cluster sync: a CTA writes a slot again only after
  // the next sum's sync, which every CTA reaches after reading this one.
  __device__ void total(int count, double* total) {
    gc_cluster_sync();
    const double* slot = mine();
    const unsigned ranks = gc_cluster_size();
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
      double sum = 0.0;
      for (unsigned r = 0; r < ranks; ++r) sum += gc_cluster_load(slot + i, r);
      total[i] = sum;
    }
    __syncthreads();
    turn ^= 1;
  }
};

// CholeskyQR of the panel split over the cluster (this CTA's `rows` rows × q, row stride ld),
// `passes` times: the Gram matrix PᵀP (f64 partials, summed over the cluster), its Cholesky in
// every CTA alike, P ← P·R⁻¹ on the local rows. False (the same in every CTA) where a pivot
// breaks down. The Gram matrix, the factorisation and the substitution are f64, so one pass
// leaves ‖PᵀP − I‖ near 1e-16·κ(P)² plus P's f32 rounding (1e-6 at κ = 1e5): a well-conditioned
// basis of the same span, which is all a power iteration needs. The bases the factors come from
// (the last Y, and P) take two passes (CholeskyQR2).
__device__ bool cluster_cholesky_qr(float* p, int rows, int q, int ld, ClusterScratch& sc, ClusterSums& sums, int passes) {
  for (int pass = 0; pass < passes; ++pass) {
    double* part = sums.mine();
    for (int e = threadIdx.x; e < q * q; e += blockDim.x) {
      const int a = e / q, b = e % q;
      double sum = 0.0;
      if (a <= b)
        for (int r = 0; r < rows; ++r) sum += (double)p[r * ld + a] * (double)p[r * ld + b];
      part[e] = sum;
    }
    sums.total(q * q, sc.gram);
    if (!block_cholesky<RSVD_CLUSTER_THREADS>(sc.gram, sc.r, sc.rinv, sc.norms, q)) return false;
    substitute_rows<RSVD_CLUSTER_MAX_Q>(p, rows, q, ld, sc.r, sc.rinv);
    __syncthreads();
  }
  return true;
}

// out ← alpha·a·x (rows×q, x n×q) or, with TRANSPOSE, alpha·aᵀ·x over this CTA's rows (n×q, x
// rows×q): a rows×n (row stride lda), x and out (row stride ld), all shared. A thread per 3
// consecutive outputs of a row of out; in the transposed form consecutive threads take
// consecutive columns of a.
template <bool TRANSPOSE>
__device__ void local_product(const float* a, int lda, const float* x, float* out, int rows, int n, int q, int ld, float alpha) {
  constexpr int C = 3;
  const int groups = (q + C - 1) / C;
  const int out_rows = TRANSPOSE ? n : rows, len = TRANSPOSE ? rows : n;
  for (int o = threadIdx.x; o < out_rows * groups; o += blockDim.x) {
    const int row = TRANSPOSE ? o % n : o / groups, c0 = (TRANSPOSE ? o / n : o % groups) * C;
    float acc[C] = {};
    for (int l = 0; l < len; ++l) {
      const float value = TRANSPOSE ? a[l * lda + row] : a[row * lda + l];
#pragma unroll
      for (int u = 0; u < C; ++u)
        if (c0 + u < q) acc[u] = fmaf(value, x[l * ld + c0 + u], acc[u]);
    }
#pragma unroll
    for (int u = 0; u < C; ++u)
      if (c0 + u < q) out[row * ld + c0 + u] = alpha * acc[u];
  }
  __syncthreads();
}

// owned (this CTA's `own` rows from row n0, ld) ← the cluster's sum of each CTA's partial (n×q, ld) there.
__device__ void sum_owned_rows(const float* partial, float* owned, int n0, int own, int q, int ld) {
  gc_cluster_sync();
  const unsigned ranks = gc_cluster_size();
  for (int o = threadIdx.x; o < own * q; o += blockDim.x) {
    const int i = o / q, j = o % q;
    float sum = 0.f;
    for (unsigned r = 0; r < ranks; ++r) sum += gc_cluster_load(partial + (n0 + i) * ld + j, r);
    owned[i * ld + j] = sum;
  }
  __syncthreads();
}

// full (n×q, ld) ← every CTA's owned rows (chunk rows each, in rank order).
__device__ void gather_owned_rows(const float* owned, float* full, int n, int chunk, int q, int ld) {
  gc_cluster_sync();
  for (int o = threadIdx.x; o < n * q; o += blockDim.x) {
    const int i = o / q, j = o % q;
    full[i * ld + j] = gc_cluster_load(owned + (i % chunk) * ld + j, i / chunk);
  }
  __syncthreads();
}

// One Newton–Schulz step towards orthonormal columns of x, split over the cluster (this CTA's
// `rows` rows × k, contiguous): x ← 1.5·x − 0.5·x·(xᵀx), xᵀx summed over the cluster. `tmp` is
// shared room for rows·k floats. V, held as its columns, is polished the same way (V·Vᵀ is the
// Gram matrix of its columns).
__device__ void polish_rows(float* x, int rows, int k, float* tmp, ClusterScratch& sc, ClusterSums& sums) {
  double* part = sums.mine();
  for (int e = threadIdx.x; e < k * k; e += blockDim.x) {
    const int i = e / k, j = e % k;
    double acc = 0.0;
    for (int r = 0; r < rows; ++r) acc += (double)x[r * k + i] * (double)x[r * k + j];
    part[e] = acc;
  }
  sums.total(k * k, sc.gram);
  for (int o = threadIdx.x; o < rows * k; o += blockDim.x) {
    const int r = o / k, c = o % k;
    float acc = 0.f;
    for (int l = 0; l < k; ++l) acc = fmaf(x[r * k + l], (float)sc.gram[l * k + c], acc);
    tmp[o] = fmaf(-0.5f, acc, 1.5f * x[o]);
  }
  __syncthreads();
  for (int o = threadIdx.x; o < rows * k; o += blockDim.x) x[o] = tmp[o];
  __syncthreads();
}

// The algorithm of small_rsvd from max|a| to the polished factors; false where CholeskyQR2 broke
// down (nothing written then but status[0..1]). Returns true also for a non-finite a (status says so).
__device__ bool rsvd_in_cluster(const float* __restrict__ a, unsigned seedLo, unsigned seedHi, float* __restrict__ u, float* __restrict__ s,
                                float* __restrict__ v, int m, int n, int q, int k, int iters, float* __restrict__ status, ClusterScratch& sc,
                                double* dyn) {
  const unsigned rank = gc_cluster_rank(), ranks = gc_cluster_size();
  const int tid = threadIdx.x, lane = tid & 31;
  const int chunk_m = (m + ranks - 1) / ranks, m0 = rank * chunk_m, rows = max(0, min(chunk_m, m - m0));
  const int chunk_n = (n + ranks - 1) / ranks, n0 = rank * chunk_n, own = max(0, min(chunk_n, n - n0));
  const int lda = n | 1, ld = q | 1;  // odd row strides spread a column over the banks
  ClusterSums sums{dyn, q * q, 0};
  float* as = reinterpret_cast<float*>(dyn + 2 * q * q);
  float* y = as + chunk_m * lda;   // Y's local rows
  float* ul = y + chunk_m * ld;    // U's local rows (rows×k)
  float* zp = ul + chunk_m * ld;   // this CTA's partial Aᵀ·Y (n×q)
  float* zf = zp + n * ld;         // Ω, then the whole of Z (n×q)
  float* zo = zf + n * ld;         // owned rows of Z, then of Bᵀ
  float* po = zo + chunk_n * ld;   // owned rows of P

  // This CTA's rows of A into shared memory, with their max and min.
  float hi = -__int_as_float(0x7f800000), lo = __int_as_float(0x7f800000);
  for (int i = tid; i < rows * n; i += blockDim.x) {
    const float x = a[(size_t)m0 * n + i];
    as[(i / n) * lda + i % n] = x;
    hi = nan_extreme(hi, x, false);
    lo = nan_extreme(lo, x, true);
  }
  warp_extremes(hi, lo);
  if (lane == 0) {
    sc.warp_hi[tid >> 5] = hi;
    sc.warp_lo[tid >> 5] = lo;
  }
  // Ω (n×q): gpu.randn([n, q], { seed })'s values, drawn here rather than read from a tensor.
  for (int j = tid; j < (n * q + 3) / 4; j += blockDim.x) {
    const PhiloxWords r = philox_block(j, seedLo, seedHi);
    for (int pair = 0; pair < 2; ++pair) {
      float z[2];
      philox_normal_pair(r, pair, 0.0, 1.0, z[0], z[1]);
      for (int h = 0; h < 2; ++h) {
        const int i = 4 * j + 2 * pair + h;
        if (i < n * q) zf[(i / q) * ld + i % q] = z[h];
      }
    }
  }
  __syncthreads();
  if (tid == 0) {
    for (int w = 1; w < RSVD_CLUSTER_THREADS / 32; ++w) {
      hi = nan_extreme(hi, sc.warp_hi[w], false);
      lo = nan_extreme(lo, sc.warp_lo[w], true);
    }
    sc.extremes[0] = hi;
    sc.extremes[1] = lo;
  }
  gc_cluster_sync();
  hi = -__int_as_float(0x7f800000);
  lo = __int_as_float(0x7f800000);
  for (unsigned r = 0; r < ranks; ++r) {
    hi = nan_extreme(hi, gc_cluster_load(&sc.extremes[0], r), false);
    lo = nan_extreme(lo, gc_cluster_load(&sc.extremes[1], r), true);
  }
  if (rank == 0 && tid == 0) {
    status[0] = hi;
    status[1] = lo;
    status[2] = 0.f;
  }
  if (!isfinite(hi) || !isfinite(lo)) return true;
  const float max_abs = fmaxf(fabsf(hi), fabsf(lo));
  const int exponent = max_abs > 0.f ? max(-100, min(100, (int)floor(log2((double)max_abs) + 0.5))) : 0;
  const float alpha = ldexpf(1.f, -exponent);

  local_product<false>(as, lda, zf, y, rows, n, q, ld, alpha);
  if (!cluster_cholesky_qr(y, rows, q, ld, sc, sums, iters > 0 ? 1 : 2)) return false;
  for (int it = 0; it < iters; ++it) {
    local_product<true>(as, lda, y, zp, rows, n, q, ld, alpha);
    sum_owned_rows(zp, zo, n0, own, q, ld);
    if (!cluster_cholesky_qr(zo, own, q, ld, sc, sums, 1)) return false;
    gather_owned_rows(zo, zf, n, chunk_n, q, ld);
    local_product<false>(as, lda, zf, y, rows, n, q, ld, alpha);
    if (!cluster_cholesky_qr(y, rows, q, ld, sc, sums, it == iters - 1 ? 2 : 1)) return false;
  }
  local_product<true>(as, lda, y, zp, rows, n, q, ld, alpha);
  sum_owned_rows(zp, zo, n0, own, q, ld);  // Bᵀ's owned rows
  for (int i = tid; i < own * ld; i += blockDim.x) po[i] = zo[i];
  __syncthreads();
  if (!cluster_cholesky_qr(po, own, q, ld, sc, sums, 2)) return false;

  // The core Bᵀᵀ·P, column-major into the Jacobi columns.
  double* part = sums.mine();
  for (int o = tid; o < q * q; o += blockDim.x) {
    const int r = o / q, c = o % q;
    double acc = 0.0;
    for (int i = 0; i < own; ++i) acc += (double)zo[i * ld + r] * (double)po[i * ld + c];
    part[o] = acc;
  }
  sums.total(q * q, sc.gram);
  for (int o = tid; o < q * q; o += blockDim.x) {
    const int r = o / q, c = o % q;
    sc.cols_a[c][r] = sc.gram[o];
    sc.cols_v[c][r] = r == c ? 1.0 : 0.0;
  }
  __syncthreads();
  const int sweeps = jacobi_sweeps(sc.cols_a, sc.cols_v, q, sc.rotated);
  if (rank == 0 && tid == 0 && sweeps >= SMALL_SVD_SWEEPS) status[2] = 1.f;
  singular_vectors(sc.cols_a, sc.cols_v, q, k, sc.sigma, sc.order, sc.left, sc.s, sc.right);

  // U's local rows (rows×k) and V's owned columns (into zf, own×k), each then polished.
  float* vl = zf;
  times_rows_transposed(y, rows, ld, sc.left, q, k, ul);
  for (int o = tid; o < own * k; o += blockDim.x) {
    const int j = o / k, t = o % k;
    float acc = 0.f;
    for (int r = 0; r < q; ++r) acc = fmaf(sc.right[t * q + r], po[j * ld + r], acc);
    vl[o] = acc;
  }
  __syncthreads();
  polish_rows(ul, rows, k, y, sc, sums);
  polish_rows(vl, own, k, po, sc, sums);
  for (int o = tid; o < rows * k; o += blockDim.x) u[(size_t)m0 * k + o] = ul[o];
  for (int o = tid; o < own * k; o += blockDim.x) v[(size_t)(o % k) * n + n0 + o / k] = vl[o];
  if (rank == 0 && tid < k) s[tid] = sc.s[tid] / alpha;
  return true;
}

// Ω is gpu.randn([n, q], { seed })'s, drawn from the seed's Philox key (seedLo, seedHi).
// status ← [max a, min a, 0 | 1 (the core's Jacobi ran out of sweeps) | 2 (CholeskyQR2 broke
// down: run small_rsvd)]. Launched as one cluster of RSVD_CLUSTER_THREADS-thread CTAs; dynamic
// shared memory (see rsvd_in_cluster): 2q² doubles, then
// ⌈m/C⌉·((n | 1) + 2(q | 1)) + 2n(q | 1) + 2⌈n/C⌉(q | 1) floats (C CTAs).
extern "C" __global__ void __launch_bounds__(RSVD_CLUSTER_THREADS) small_rsvd_cluster(const float* __restrict__ a, unsigned seedLo, unsigned seedHi,
                                                                                    float* __restrict__ u, float* __restrict__ s,
                                                                                    float* __restrict__ v, int m, int n, int q, int k, int iters,
                                                                                    float* __restrict__ status) {
  extern __shared__ double dyn[];
  __shared__ ClusterScratch sc;
  if (!rsvd_in_cluster(a, seedLo, seedHi, u, s, v, m, n, q, k, iters, status, sc, dyn) && gc_cluster_rank() == 0 && threadIdx.x == 0) status[2] = 2.f;
  gc_cluster_sync();  // no CTA leaves while another may still read its shared memory
}
