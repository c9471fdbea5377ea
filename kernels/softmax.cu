// Softmax and logSoftmax over the rows of a [rows, cols] tensor, numerically stable (the row
// maximum is subtracted). Specialised with -DGC_DTYPE=<float dtype code>.
// softmax_{warp,block}_{vec,scalar}_<CHUNKS>: the row cached in registers (row.cuh), one read
// and one write per element. softmax_staged_<CHUNKS>: the same for long rows, with the next row
// streaming into shared memory meanwhile (below). softmax_looped: rows of any length, one pass
// with an online max/sum (Milakov & Gimelshein, 2018) and a second pass for the output.
// softmax_cluster.cu splits long rows over the CTAs of a cluster instead (sm_90+).
#include "cp_async.cuh"
#include "softmax.cuh"

template <int CHUNKS, int W, bool WARP>
__device__ __forceinline__ void softmax_cached(const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols,
                                               int logMode) {
  __shared__ float smem[32];
  const idx_t row = team_row<WARP>();
  if (row >= rows) return;  // a whole team leaves together
  float v[CHUNKS * W];
  load_row<CHUNKS, W>(x + row * cols, cols, team_size<WARP>(), team_rank<WARP>(), v, -GC_INF);
  softmax_write<CHUNKS, W, WARP>(v, thread_max<CHUNKS, W>(v), out + row * cols, cols, logMode, smem);
}

GC_ROW_KERNELS(softmax, softmax_cached,
               (const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols, int logMode),
               (x, out, rows, cols, logMode))

// softmax_staged_<CHUNKS>: long rows (16-byte aligned, cols a multiple of the vector width) on
// a grid of resident blocks, each taking rows gridDim.x apart. A thread holds the row's chunks
// in registers as softmax_block_vec does, and while it reduces and stores them the next row's
// chunks stream into its own slice of shared memory with cp.async: a block no longer idles
// between rows waiting for a whole row to arrive (one such block per SM at 32K f32 columns).
// Each thread reads back only what it copied, so the staging needs no barrier.
template <int CHUNKS>
__device__ __forceinline__ void stage_row(const T* __restrict__ row, T* stage, int cols) {
  constexpr int W = VecWidth<T>::value;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const int c = chunk_start(j, blockDim.x, threadIdx.x, W);
    if (c < cols) gc_cp_async16(stage + c, row + c, true);
  }
  gc_cp_async_commit();
}

template <int CHUNKS>
__device__ __forceinline__ void softmax_staged(const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols,
                                               int logMode) {
  constexpr int W = VecWidth<T>::value;
  extern __shared__ __align__(16) unsigned char stage_bytes[];  // blockDim.x * CHUNKS * W elements
  T* stage = reinterpret_cast<T*>(stage_bytes);
  __shared__ float smem[32];
  idx_t row = blockIdx.x;
  // The first row goes straight to registers while the second is staged, so two rows are in
  // flight from the start.
  float v[CHUNKS * W];
  load_row<CHUNKS, W>(x + row * cols, cols, blockDim.x, threadIdx.x, v, -GC_INF);
  idx_t next = row + gridDim.x;
  if (next < rows) stage_row<CHUNKS>(x + next * cols, stage, cols);
  float m = thread_max<CHUNKS, W>(v);
  for (;;) {
    softmax_write<CHUNKS, W, false>(v, m, out + row * cols, cols, logMode, smem);
    if (next >= rows) break;
    row = next;
    next = row + gridDim.x;
    gc_cp_async_wait<0>();
    load_row<CHUNKS, W>(stage, cols, blockDim.x, threadIdx.x, v, -GC_INF);
    // The maximum consumes every staged value, so the reads are done before the next row overwrites them.
    m = thread_max<CHUNKS, W>(v);
    if (next < rows) stage_row<CHUNKS>(x + next * cols, stage, cols);
  }
}

#define GC_SOFTMAX_STAGED(CHUNKS)                                                                                  \
  extern "C" __global__ void __launch_bounds__(1024) softmax_staged_##CHUNKS(                                       \
      const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols, int logMode) {                            \
    softmax_staged<CHUNKS>(x, out, rows, cols, logMode);                                                           \
  }
GC_SOFTMAX_STAGED(4)
#if GC_DTYPE == GC_F32
GC_SOFTMAX_STAGED(8)
#endif

// Running (max, sum of exp(x - max)) of a stretch of a row.
struct MaxSum {
  float m;
  float s;
};
__device__ __forceinline__ MaxSum shfl_xor(MaxSum a, int mask) {
  MaxSum r;
  r.m = gc_shfl_xor(a.m, mask);
  r.s = gc_shfl_xor(a.s, mask);
  return r;
}
// Starts from -FLT_MAX rather than -inf so a leading -inf element adds exp(-inf) = 0, not NaN.
struct ReduceMaxSum {
  typedef MaxSum Acc;
  static __device__ __forceinline__ Acc identity() {
    Acc a;
    a.m = -3.402823466e38f;
    a.s = 0.0f;
    return a;
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    const float m = fmaxf(a.m, b.m);
    Acc r;
    r.m = m;
    r.s = a.s * gc_exp(a.m - m) + b.s * gc_exp(b.m - m);
    return r;
  }
};

// One block per row, any cols.
extern "C" __global__ void __launch_bounds__(1024) softmax_looped(const T* __restrict__ x, T* __restrict__ out, idx_t rows,
                                                                  idx_t cols, int logMode) {
  __shared__ MaxSum smem[32];
  const T* xr = x + (idx_t)blockIdx.x * cols;
  T* orow = out + (idx_t)blockIdx.x * cols;
  MaxSum acc = ReduceMaxSum::identity();
  for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) {
    const float v = widen(xr[k]);
    if (v > acc.m) {
      acc.s = acc.s * gc_exp(acc.m - v) + 1.0f;
      acc.m = v;
    } else {
      acc.s += gc_exp(v - acc.m);  // NaN lands here and poisons the sum, as it should
    }
  }
  acc = block_reduce<ReduceMaxSum>(acc, smem);
  if (logMode) {
    const float shift = acc.m + logf(acc.s);
    for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) orow[k] = narrow<T>(widen(xr[k]) - shift);
  } else {
    const float scale = 1.0f / acc.s;
    for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) orow[k] = narrow<T>(gc_exp(widen(xr[k]) - acc.m) * scale);
  }
}
