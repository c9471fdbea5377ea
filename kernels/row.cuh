// Row kernels (softmax, layerNorm): a row of `cols` elements is processed by a team of
// threads, one warp (small rows, several rows per block) or the whole block (large rows).
// In the cached form the row lives in registers: thread t of a team of `team` threads holds
// CHUNKS chunks of W elements, chunk j covering elements [(j * team + t) * W, +W), so each
// element is read from memory once and written once. W > 1 needs cols % W == 0 and
// 16-byte-aligned rows.
#pragma once
#include "block-reduce.cuh"
#include "dtype.cuh"
#include "kernel_select.cuh"

#define GC_INF __int_as_float(0x7f800000)

// First element of chunk j of thread t.
__device__ __forceinline__ int chunk_start(int j, int team, int t, int w) { return (j * team + t) * w; }

// How many of its chunks thread t holds inside a row of `cols`: chunk j is inside while j < this.
// (One compare per chunk against a value held once, where comparing each chunk's start with cols
// kept more registers live and spilled in 1024-thread blocks.)
__device__ __forceinline__ int chunks_inside(int cols, int team, int t, int w) {
  return ((cols + w - 1) / w - t + team - 1) / team;
}

// Loads the thread's chunks j < inside of `row` as f32; the others read as `pad`. A caller that
// knows every chunk is inside passes CHUNKS, and the checks compile away.
template <int CHUNKS, int W>
__device__ __forceinline__ void load_chunks(const T* __restrict__ row, int inside, int team, int t, float (&v)[CHUNKS * W],
                                            float pad) {
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    if (j < inside) {
      T p[W];
      load_pack<T, W>(row + chunk_start(j, team, t, W), p);
#pragma unroll
      for (int k = 0; k < W; ++k) v[j * W + k] = widen(p[k]);
    } else {
#pragma unroll
      for (int k = 0; k < W; ++k) v[j * W + k] = pad;
    }
  }
}

// Stores value(v[j*W+k], column) for the thread's chunks j < inside.
template <int CHUNKS, int W, typename F>
__device__ __forceinline__ void store_chunks(T* __restrict__ row, int inside, int team, int t, const float (&v)[CHUNKS * W],
                                             F value) {
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    if (j < inside) {
      const int c = chunk_start(j, team, t, W);
      T p[W];
#pragma unroll
      for (int k = 0; k < W; ++k) p[k] = narrow<T>(value(v[j * W + k], c + k));
      store_pack<T, W>(row + c, p);
    }
  }
}

// load_chunks of the chunks inside a row of `cols`.
template <int CHUNKS, int W>
__device__ __forceinline__ void load_row(const T* __restrict__ row, int cols, int team, int t, float (&v)[CHUNKS * W],
                                         float pad) {
  load_chunks<CHUNKS, W>(row, chunks_inside(cols, team, t, W), team, t, v, pad);
}

// Reduction over the team: a warp shuffle tree, or a block reduction through `smem`.
template <bool WARP, typename Op>
__device__ __forceinline__ typename Op::Acc team_reduce(typename Op::Acc v, typename Op::Acc* smem) {
  if constexpr (WARP) {
    return warp_reduce<Op>(v);
  } else {
    return block_reduce<Op>(v, smem);
  }
}

// The team's row, and this thread's rank in the team. Warp teams use blocks of 128 threads.
template <bool WARP> __device__ __forceinline__ idx_t team_row() {
  return WARP ? (idx_t)blockIdx.x * (blockDim.x / GC_WARP_SIZE) + gc_warp() : (idx_t)blockIdx.x;
}
template <bool WARP> __device__ __forceinline__ int team_rank() { return WARP ? gc_lane() : (int)threadIdx.x; }
template <bool WARP> __device__ __forceinline__ int team_size() { return WARP ? GC_WARP_SIZE : (int)blockDim.x; }

// Declares the cached-row kernels of one body for every CHUNKS a host may pick:
// NAME_{warp,block}_{vec,scalar}_<CHUNKS>. A thread keeps at most 32 elements in registers
// (vector chunks hold 16 bytes); block kernels stop at 16 scalar chunks, where 32 would
// spill under the 64-register budget of a 1024-thread block.
#define GC_ROW_KERNEL(NAME, BODY, TEAM, VEC, CHUNKS, PARAMS, ARGS)                                               \
  GC_IF_KERNEL(NAME##_##TEAM##_##VEC##_##CHUNKS)(                                                                 \
      extern "C" __global__ void __launch_bounds__(GC_ROW_THREADS_##TEAM) NAME##_##TEAM##_##VEC##_##CHUNKS PARAMS { \
        BODY<CHUNKS, GC_ROW_W_##VEC, GC_ROW_IS_##TEAM> ARGS;                                                      \
      })
#define GC_ROW_W_vec (VecWidth<T>::value)
#define GC_ROW_W_scalar 1
#define GC_ROW_IS_warp true
#define GC_ROW_IS_block false
#define GC_ROW_THREADS_warp 128
#define GC_ROW_THREADS_block 1024

// Eight 16-byte chunks are 32 elements only for 4-byte types.
#if GC_DTYPE == GC_F32 || GC_DTYPE == GC_I32
#define GC_ROW_KERNELS_VEC8(NAME, BODY, TEAM, PARAMS, ARGS) GC_ROW_KERNEL(NAME, BODY, TEAM, vec, 8, PARAMS, ARGS)
#else
#define GC_ROW_KERNELS_VEC8(NAME, BODY, TEAM, PARAMS, ARGS)
#endif

#define GC_ROW_KERNELS_COMMON(NAME, BODY, TEAM, PARAMS, ARGS) \
  GC_ROW_KERNEL(NAME, BODY, TEAM, scalar, 1, PARAMS, ARGS)    \
  GC_ROW_KERNEL(NAME, BODY, TEAM, scalar, 2, PARAMS, ARGS)    \
  GC_ROW_KERNEL(NAME, BODY, TEAM, scalar, 4, PARAMS, ARGS)    \
  GC_ROW_KERNEL(NAME, BODY, TEAM, scalar, 8, PARAMS, ARGS)    \
  GC_ROW_KERNEL(NAME, BODY, TEAM, scalar, 16, PARAMS, ARGS)   \
  GC_ROW_KERNEL(NAME, BODY, TEAM, vec, 1, PARAMS, ARGS)       \
  GC_ROW_KERNEL(NAME, BODY, TEAM, vec, 2, PARAMS, ARGS)       \
  GC_ROW_KERNEL(NAME, BODY, TEAM, vec, 4, PARAMS, ARGS)       \
  GC_ROW_KERNELS_VEC8(NAME, BODY, TEAM, PARAMS, ARGS)

#define GC_ROW_KERNELS(NAME, BODY, PARAMS, ARGS)             \
  GC_ROW_KERNELS_COMMON(NAME, BODY, warp, PARAMS, ARGS)      \
  GC_ROW_KERNEL(NAME, BODY, warp, scalar, 32, PARAMS, ARGS) \
  GC_ROW_KERNELS_COMMON(NAME, BODY, block, PARAMS, ARGS)
