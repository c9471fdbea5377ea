// Layer normalisation over the rows of a [rows, cols] tensor:
// out = (x - mean) / sqrt(var + eps) * gamma + beta, with the biased variance (as PyTorch);
// gamma and beta are [cols] and may be null (16-byte aligned, like x and out, for *_vec). Specialised with -DGC_DTYPE=<float dtype code>.
// layernorm_{warp,block}_{vec,scalar}_<CHUNKS>: the row cached in registers (row.cuh), mean
// and variance by two passes over the registers. layernorm_looped: any cols, Welford
// statistics, then a second read for the output.
#include "row.cuh"

template <int CHUNKS, int W, bool WARP>
__device__ __forceinline__ void layernorm_cached(const T* __restrict__ x, const T* __restrict__ gamma,
                                                 const T* __restrict__ beta, T* __restrict__ out, idx_t rows, int cols,
                                                 float eps) {
  __shared__ float smem[32];
  const idx_t row = team_row<WARP>();
  if (row >= rows) return;  // a whole team leaves together
  const int team = team_size<WARP>(), t = team_rank<WARP>();
  float v[CHUNKS * W];
  load_row<CHUNKS, W>(x + row * cols, cols, team, t, v, 0.0f);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < CHUNKS * W; ++k) s += v[k];
  const float mean = team_reduce<WARP, ReduceSum<float> >(s, smem) / (float)cols;
  float q = 0.0f;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    if (chunk_start(j, team, t, W) < cols) {
#pragma unroll
      for (int k = 0; k < W; ++k) {
        const float d = v[j * W + k] - mean;
        q += d * d;
      }
    }
  }
  const float var = team_reduce<WARP, ReduceSum<float> >(q, smem) / (float)cols;
  const float rstd = 1.0f / sqrtf(var + eps);
  T* orow = out + row * cols;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const int c = chunk_start(j, team, t, W);
    if (c < cols) {
      T g[W], b[W], o[W];
      if (gamma) load_pack<T, W>(gamma + c, g);
      if (beta) load_pack<T, W>(beta + c, b);
#pragma unroll
      for (int k = 0; k < W; ++k) {
        const float y = (v[j * W + k] - mean) * rstd;
        o[k] = narrow<T>(y * (gamma ? widen(g[k]) : 1.0f) + (beta ? widen(b[k]) : 0.0f));
      }
      store_pack<T, W>(orow + c, o);
    }
  }
}

GC_ROW_KERNELS(layernorm, layernorm_cached,
               (const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta, T* __restrict__ out,
                idx_t rows, int cols, float eps),
               (x, gamma, beta, out, rows, cols, eps))

// Welford running statistics (count, mean, sum of squared deviations), merged by Chan's rule.
struct Moments {
  float n;
  float mean;
  float m2;
};
__device__ __forceinline__ Moments shfl_xor(Moments a, int mask) {
  Moments r;
  r.n = gc_shfl_xor(a.n, mask);
  r.mean = gc_shfl_xor(a.mean, mask);
  r.m2 = gc_shfl_xor(a.m2, mask);
  return r;
}
struct ReduceMoments {
  typedef Moments Acc;
  static __device__ __forceinline__ Acc identity() {
    Acc a;
    a.n = 0.0f;
    a.mean = 0.0f;
    a.m2 = 0.0f;
    return a;
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    const float n = a.n + b.n;
    if (n == 0.0f) return a;
    const float d = b.mean - a.mean;
    const float wb = b.n / n;
    Acc r;
    r.n = n;
    r.mean = a.mean + d * wb;
    r.m2 = a.m2 + b.m2 + d * d * a.n * wb;
    return r;
  }
};

// One block per row, any cols.
#if GC_WANT_KERNEL(layernorm_looped)
extern "C" __global__ void __launch_bounds__(1024)
    layernorm_looped(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta, T* __restrict__ out,
                     idx_t rows, idx_t cols, float eps) {
  __shared__ Moments smem[32];
  const T* xr = x + (idx_t)blockIdx.x * cols;
  T* orow = out + (idx_t)blockIdx.x * cols;
  Moments acc = ReduceMoments::identity();
  for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) {
    const float v = widen(xr[k]);
    acc.n += 1.0f;
    const float d = v - acc.mean;
    acc.mean += d / acc.n;
    acc.m2 += d * (v - acc.mean);
  }
  acc = block_reduce<ReduceMoments>(acc, smem);
  const float rstd = 1.0f / sqrtf(acc.m2 / (float)cols + eps);
  for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) {
    const float g = gamma ? widen(gamma[k]) : 1.0f;
    const float b = beta ? widen(beta[k]) : 0.0f;
    orow[k] = narrow<T>((widen(xr[k]) - acc.mean) * rstd * g + b);
  }
}
#endif
