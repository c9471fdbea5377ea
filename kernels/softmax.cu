// Softmax and logSoftmax over the rows of a [rows, cols] tensor, numerically stable (the row
// maximum is subtracted). Specialised with -DGC_DTYPE=<float dtype code>.
// softmax_{warp,block}_{vec,scalar}_<CHUNKS>: the row cached in registers (row.cuh), one read
// and one write per element. softmax_thread: a thread per row of at most 16 columns. softmax_staged_*: the same for long rows, with the next row
// streaming into shared memory meanwhile (below). softmax_looped: rows of any length, one pass
// with an online max/sum (Milakov & Gimelshein, 2018) and a second pass for the output.
// softmax_cluster.cu splits long rows over the CTAs of a cluster instead (sm_90+).
#include "cp_async.cuh"
#include "softmax.cuh"

template <int CHUNKS, int W, bool WARP>
__device__ __forceinline__ void softmax_cached(const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols,
                                               int logMode) {
  __shared__ MaxSum smem[32];
  const idx_t row = team_row<WARP>();
  if (row >= rows) return;  // a whole team leaves together
  float v[CHUNKS * W];
  const int inside = chunks_inside(cols, team_size<WARP>(), team_rank<WARP>(), W);
  load_chunks<CHUNKS, W>(x + row * cols, inside, team_size<WARP>(), team_rank<WARP>(), v, -GC_INF);
  softmax_write<CHUNKS, W, WARP>(v, thread_max<CHUNKS, W>(v), out + row * cols, inside, logMode, smem);
}

GC_ROW_KERNELS(softmax, softmax_cached,
               (const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols, int logMode),
               (x, out, rows, cols, logMode))

// softmax_thread: rows of at most GC_SOFTMAX_THREAD_COLS columns, one thread per row (a warp
// per row would leave most of its lanes idle); the same arithmetic as a warp team's.
#define GC_SOFTMAX_THREAD_COLS 16
#if GC_WANT_KERNEL(softmax_thread)
extern "C" __global__ void __launch_bounds__(256) softmax_thread(const T* __restrict__ x, T* __restrict__ out, idx_t rows,
                                                                 int cols, int logMode) {
  for (idx_t row = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; row < rows; row += (idx_t)gridDim.x * blockDim.x) {
    const T* xr = x + row * cols;
    T* orow = out + row * cols;
    float v[GC_SOFTMAX_THREAD_COLS];
#pragma unroll
    for (int k = 0; k < GC_SOFTMAX_THREAD_COLS; ++k) v[k] = k < cols ? widen(xr[k]) : -GC_INF;
    const MaxSum part = exp_sum<GC_SOFTMAX_THREAD_COLS, 1>(v, thread_max<GC_SOFTMAX_THREAD_COLS, 1>(v), logMode);
    const float shift = logMode ? log_normaliser(part) : 0.0f;
    const float scale = 1.0f / part.s;
#pragma unroll
    for (int k = 0; k < GC_SOFTMAX_THREAD_COLS; ++k) {
      if (k < cols) orow[k] = narrow<T>(logMode ? v[k] - shift : v[k] * scale);
    }
  }
}
#endif

// softmax_staged_{full,edge}_<CHUNKS>: long rows (16-byte aligned, cols a multiple of the vector
// width) on a grid of resident blocks, each taking rows gridDim.x apart. A thread holds the row's
// chunks in registers as softmax_block_vec does, and while it reduces and stores them the next
// row's chunks stream into its own slice of shared memory with cp.async: a block no longer idles
// between rows waiting for a whole row to arrive (one such block per SM at 32K f32 columns).
// Each thread reads back only what it copied, so the staging needs no barrier. _full: cols ==
// blockDim.x · CHUNKS · W, so no chunk needs a bounds check (3% at f32 32K on an H200); _edge:
// some threads' last chunks fall outside the row.
template <int CHUNKS>
__device__ __forceinline__ void stage_row(const T* __restrict__ row, T* stage, int inside, int team) {
  constexpr int W = VecWidth<T>::value;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const int c = chunk_start(j, team, threadIdx.x, W);
    if (j < inside) gc_cp_async16(stage + c, row + c, true);
  }
  gc_cp_async_commit();
}

template <int CHUNKS, bool FULL>
__device__ __forceinline__ void softmax_staged(const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols,
                                               int logMode) {
  constexpr int W = VecWidth<T>::value;
  extern __shared__ __align__(16) unsigned char stage_bytes[];  // blockDim.x * CHUNKS * W elements
  T* stage = reinterpret_cast<T*>(stage_bytes);
  __shared__ MaxSum smem[2][32];  // rows take turns (see block_reduce_once)
  int turn = 0;
  const int inside = FULL ? CHUNKS : chunks_inside(cols, blockDim.x, threadIdx.x, W);
  idx_t row = blockIdx.x;
  // The first row goes straight to registers while the second is staged, so two rows are in
  // flight from the start.
  float v[CHUNKS * W];
  load_chunks<CHUNKS, W>(x + row * cols, inside, blockDim.x, threadIdx.x, v, -GC_INF);
  idx_t next = row + gridDim.x;
  if (next < rows) stage_row<CHUNKS>(x + next * cols, stage, inside, blockDim.x);
  float m = thread_max<CHUNKS, W>(v);
  for (;;) {
    softmax_write<CHUNKS, W, false>(v, m, out + row * cols, inside, logMode, smem[turn]);
    turn ^= 1;
    if (next >= rows) break;
    row = next;
    next = row + gridDim.x;
    gc_cp_async_wait<0>();
    load_chunks<CHUNKS, W>(stage, inside, blockDim.x, threadIdx.x, v, -GC_INF);
    // The maximum consumes every staged value, so the reads are done before the next row overwrites them.
    m = thread_max<CHUNKS, W>(v);
    if (next < rows) stage_row<CHUNKS>(x + next * cols, stage, inside, blockDim.x);
  }
}

#define GC_SOFTMAX_STAGED(CHUNKS, KIND, FULL)                                                                   \
  GC_IF_KERNEL(softmax_staged_##KIND##_##CHUNKS)(                                                                \
      extern "C" __global__ void __launch_bounds__(1024) softmax_staged_##KIND##_##CHUNKS(                        \
          const T* __restrict__ x, T* __restrict__ out, idx_t rows, int cols, int logMode) {                      \
        softmax_staged<CHUNKS, FULL>(x, out, rows, cols, logMode);                                               \
      })
// 32 elements per thread. 16-bit rows are staged only at 32K columns (64 KB, the most a block
// holds), which always fill 1024 threads.
#if GC_DTYPE == GC_F32
GC_SOFTMAX_STAGED(8, full, true)
GC_SOFTMAX_STAGED(8, edge, false)
#else
GC_SOFTMAX_STAGED(4, full, true)
#endif

// f32 only: a 16-bit exponential would lose precision in shared memory.
#if GC_DTYPE == GC_F32
// softmax_split_<REG>_<SHARED>: f32 rows of TEAM · (REG + SHARED) · W columns (16-byte aligned),
// rows gridDim.x apart per block of TEAM threads. A thread holds REG chunks of its share in
// registers and SHARED in its own slice of shared memory (cp.async, issued first so both are in
// flight together). At 32K columns with 12 elements in registers and 20 in shared memory
// (80 KB) a thread needs 32 registers, so two blocks share an SM and one reduces while the other
// loads, where the staged kernel's 32 elements in registers leave one block per SM that overlaps
// only its own next row (H200, NVRTC 13.0, 2048 × 32768: 3847 against 3812 GB/s). 32 registers
// leave nothing spare: the row length and log mode are compile-time, the max and exponential
// passes over the shared-memory part are rolled loops (unrolled, the kernel spills), and the
// 3 + 5 division is the one NVRTC compiled without spilling (4 + 4 spilled 8 bytes and ran 3%
// slower).
template <int REG, int SHARED, int TEAM, bool LOG>
__device__ __forceinline__ void softmax_split(const T* __restrict__ x, T* __restrict__ out, int rows, MaxSum (&smem)[2][32]) {
  constexpr int W = VecWidth<T>::value;
  constexpr int HEAD = TEAM * REG * W, COLS = TEAM * (REG + SHARED) * W;
  extern __shared__ __align__(16) unsigned char stage_bytes[];  // TEAM * SHARED * W elements
  T* stage = reinterpret_cast<T*>(stage_bytes);
  int turn = 0;  // rows take turns with smem (see block_reduce_once)
  const int t = threadIdx.x;
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + (idx_t)row * COLS;
    stage_row<SHARED>(xr + HEAD, stage, SHARED, TEAM);
    float v[REG * W];
    load_chunks<REG, W>(xr, REG, TEAM, t, v, -GC_INF);
    float m = thread_max<REG, W>(v);
    gc_cp_async_wait<0>();
#pragma unroll 1
    for (int j = 0; j < SHARED; ++j) {
      T p[W];
      load_pack<T, W>(stage + chunk_start(j, TEAM, t, W), p);
#pragma unroll
      for (int k = 0; k < W; ++k) m = nan_max(m, widen(p[k]));
    }
    MaxSum part = exp_sum<REG, W>(v, m, LOG);
    const float shift = exp_shift(m);
#pragma unroll 1
    for (int j = 0; j < SHARED; ++j) {
      T* s = stage + chunk_start(j, TEAM, t, W);
      T p[W];
      load_pack<T, W>(s, p);
#pragma unroll
      for (int k = 0; k < W; ++k) {
        const float e = exp_from(widen(p[k]), shift);
        part.s += e;
        p[k] = narrow<T>(e);  // T is f32: the exponentials keep full precision
      }
      if constexpr (!LOG) store_pack<T, W>(s, p);
    }
    const MaxSum whole = block_reduce_once<ReduceMaxSum>(part, smem[turn]);
    turn ^= 1;
    T* orow = out + (idx_t)row * COLS;
    // softmax: e · scale; logSoftmax: x + offset.
    const float scale = LOG ? 1.0f : rebase(m, whole.m) / whole.s;
    const float offset = LOG ? -log_normaliser(whole) : 0.0f;
    store_chunks<REG, W>(orow, REG, TEAM, t, v, [&](float e, int) { return fmaf(e, scale, offset); });
    // The stores consume every staged value, so the reads are done before the next row's copies
    // land. Unrolled: in a rolled loop NVVM splits each 16-byte store into four (2389 against
    // 3653 GB/s at 512 × 32768, H200).
#pragma unroll
    for (int j = 0; j < SHARED; ++j) {
      const int c = chunk_start(j, TEAM, t, W);
      T p[W];
      load_pack<T, W>(stage + c, p);
#pragma unroll
      for (int k = 0; k < W; ++k) p[k] = narrow<T>(fmaf(widen(p[k]), scale, offset));
      store_pack<T, W>(orow + HEAD + c, p);
    }
  }
}

#if GC_WANT_KERNEL(softmax_split_3_5)
extern "C" __global__ void __launch_bounds__(1024, 2) softmax_split_3_5(const T* __restrict__ x, T* __restrict__ out, int rows,
                                                                       int logMode) {
  __shared__ MaxSum smem[2][32];
  if (logMode) {
    softmax_split<3, 5, 1024, true>(x, out, rows, smem);
  } else {
    softmax_split<3, 5, 1024, false>(x, out, rows, smem);
  }
}
#endif
#endif

// One block per row, any cols.
#if GC_WANT_KERNEL(softmax_looped)
extern "C" __global__ void __launch_bounds__(1024) softmax_looped(const T* __restrict__ x, T* __restrict__ out, idx_t rows,
                                                                  idx_t cols, int logMode) {
  __shared__ MaxSum smem[32];
  const T* xr = x + (idx_t)blockIdx.x * cols;
  T* orow = out + (idx_t)blockIdx.x * cols;
  MaxSum acc = ReduceMaxSum::identity();
  float shift = exp_shift(acc.m);
  for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) {
    const float v = widen(xr[k]);
    if (v > acc.m) {
      acc.s *= rebase(acc.m, v);
      acc.m = v;
      shift = exp_shift(v);
    }
    acc.s += exp_from(v, shift);  // NaN lands here and poisons the sum, as it should
  }
  acc = block_reduce_once<ReduceMaxSum>(acc, smem);
  if (logMode) {
    const float shift = log_normaliser(acc);
    for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) orow[k] = narrow<T>(widen(xr[k]) - shift);
  } else {
    const float shift = exp_shift(acc.m), scale = 1.0f / acc.s;
    for (idx_t k = threadIdx.x; k < cols; k += blockDim.x) orow[k] = narrow<T>(exp_from(widen(xr[k]), shift) * scale);
  }
}
#endif
