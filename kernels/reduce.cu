// Reductions along one axis of a tensor seen as [outer, len, inner] (ReducePlan), and
// full reductions (outer = inner = 1). Specialised with -DGC_DTYPE=<dtype code> and
// -DGC_REDUCE=<ReduceSum|ReduceMax|ReduceMin|ReduceArgmax>. Accumulation is in f32 (or
// i32); mean is a sum finished with `divisor` = len. Every path combines in a fixed
// order, so results are deterministic for a given device.
#include "block-reduce.cuh"
#include "dtype.cuh"
#include "kernel_select.cuh"
#include "elementwise.cuh"

typedef GC_REDUCE<C> Op;
typedef Op::Acc Acc;

__device__ __forceinline__ T finish(float acc, float divisor) { return narrow<T>(acc / divisor); }
__device__ __forceinline__ int finish(int acc, float) { return acc; }  // i32 sum/max/min
__device__ __forceinline__ int finish(ArgAcc acc, float) { return acc.i; }
__device__ __forceinline__ int finish(ArgAccInt acc, float) { return acc.i; }
typedef decltype(finish(Op::identity(), 1.0f)) Out;

__device__ __forceinline__ Acc element(const T* p, idx_t index) { return Op::make(widen(*p), index); }

// ---- contiguous axis (inner = 1), one warp per row; blocks of 128 threads (4 warps of 32) ----
#if GC_WANT_KERNEL(reduce_rows_warp)
extern "C" __global__ void __launch_bounds__(128) reduce_rows_warp(const T* __restrict__ x, Out* __restrict__ out,
                                                                  idx_t rows, idx_t len, float divisor) {
  const idx_t row = (idx_t)blockIdx.x * (blockDim.x / GC_WARP_SIZE) + gc_warp();
  const int lane = gc_lane();
  if (row >= rows) return;
  const T* xr = x + row * len;
  Acc a0 = Op::identity(), a1 = Op::identity();
  idx_t k = lane;
  for (; k + GC_WARP_SIZE < len; k += 2 * GC_WARP_SIZE) {
    a0 = Op::combine(a0, element(xr + k, k));
    a1 = Op::combine(a1, element(xr + k + GC_WARP_SIZE, k + GC_WARP_SIZE));
  }
  if (k < len) a0 = Op::combine(a0, element(xr + k, k));
  const Acc r = warp_reduce<Op>(Op::combine(a0, a1));
  if (lane == 0) out[row] = finish(r, divisor);
}
#endif

// Loads that bypass L1: partials written by other blocks of the same grid.
__device__ __forceinline__ float load_cg(const float* p) { return gc_load_coherent(p); }
__device__ __forceinline__ int load_cg(const int* p) { return gc_load_coherent(p); }
__device__ __forceinline__ ArgAcc load_cg(const ArgAcc* p) {
  ArgAcc a;
  a.v = load_cg(&p->v);
  a.i = load_cg(&p->i);
  return a;
}
__device__ __forceinline__ ArgAccInt load_cg(const ArgAccInt* p) {
  ArgAccInt a;
  a.v = load_cg(&p->v);
  a.i = load_cg(&p->i);
  return a;
}

// The whole block reduces packs [begin, end) of the row `xr` (plus, with `tail`, the
// elements after its last whole pack); every thread gets the result. Each thread issues
// GC_UNROLL packs' loads before combining, into independent accumulators.
template <int W>
__device__ __forceinline__ Acc block_stretch(const T* __restrict__ xr, idx_t begin, idx_t end, idx_t len, bool tail,
                                             Acc* smem) {
  const idx_t step = blockDim.x;
  Acc acc[GC_UNROLL];
#pragma unroll
  for (int u = 0; u < GC_UNROLL; ++u) acc[u] = Op::identity();
  idx_t p = begin + threadIdx.x;
  for (; p + (GC_UNROLL - 1) * step < end; p += GC_UNROLL * step) {
    T v[GC_UNROLL][W];
#pragma unroll
    for (int u = 0; u < GC_UNROLL; ++u) load_pack<T, W>(xr + (p + u * step) * W, v[u]);
#pragma unroll
    for (int u = 0; u < GC_UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < W; ++k) acc[u] = Op::combine(acc[u], Op::make(widen(v[u][k]), (p + u * step) * W + k));
    }
  }
  if (p < end) {
    // The last, partial round: its loads are still issued together, so a thread waits out one
    // memory latency here, not one per remaining pack.
    T v[GC_UNROLL][W];
#pragma unroll
    for (int u = 0; u < GC_UNROLL; ++u) {
      if (p + u * step < end) load_pack<T, W>(xr + (p + u * step) * W, v[u]);
    }
#pragma unroll
    for (int u = 0; u < GC_UNROLL; ++u) {
      if (p + u * step < end) {
#pragma unroll
        for (int k = 0; k < W; ++k) acc[u] = Op::combine(acc[u], Op::make(widen(v[u][k]), (p + u * step) * W + k));
      }
    }
  }
  if (tail) {
    for (idx_t k = (len / W) * W + threadIdx.x; k < len; k += step) acc[0] = Op::combine(acc[0], element(xr + k, k));
  }
#pragma unroll
  for (int u = 1; u < GC_UNROLL; ++u) acc[0] = Op::combine(acc[0], acc[u]);
  return block_reduce<Op>(acc[0], smem);
}

// ---- contiguous axis, one block per row (row starts 16-byte aligned for *_vec) ----
template <int W>
__device__ __forceinline__ void rows_block_body(const T* __restrict__ x, Out* __restrict__ out, idx_t len, float divisor) {
  __shared__ Acc smem[32];
  const Acc r = block_stretch<W>(x + (idx_t)blockIdx.x * len, 0, len / W, len, true, smem);
  if (threadIdx.x == 0) out[blockIdx.x] = finish(r, divisor);
}

#if GC_WANT_KERNEL(reduce_rows_block_vec)
extern "C" __global__ void reduce_rows_block_vec(const T* __restrict__ x, Out* __restrict__ out, idx_t rows, idx_t len,
                                                 float divisor) {
  rows_block_body<VecWidth<T>::value>(x, out, len, divisor);
}
#endif
#if GC_WANT_KERNEL(reduce_rows_block_scalar)
extern "C" __global__ void reduce_rows_block_scalar(const T* __restrict__ x, Out* __restrict__ out, idx_t rows, idx_t len,
                                                    float divisor) {
  rows_block_body<1>(x, out, len, divisor);
}
#endif

// Packs [begin, end) of split `s` of `splits` over a row of npacks packs.
__device__ __forceinline__ void split_range(idx_t npacks, unsigned int splits, unsigned int s, idx_t& begin, idx_t& end) {
  const idx_t chunk = (npacks + splits - 1) / splits;
  begin = (idx_t)s * chunk;
  end = begin + chunk < npacks ? begin + chunk : npacks;
  if (begin > end) begin = end;
}

// ---- few long rows: pass 1 of 2 ----
// grid (splits, rows): block s of row r reduces its share of the row into
// partial[r * splits + s]; reduce_finish combines them.
template <int W>
__device__ __forceinline__ void partial_body(const T* __restrict__ x, Acc* __restrict__ partial, idx_t len,
                                             unsigned int splits) {
  __shared__ Acc smem[32];
  idx_t begin, end;
  split_range(len / W, splits, blockIdx.x, begin, end);
  const Acc r = block_stretch<W>(x + (idx_t)blockIdx.y * len, begin, end, len, blockIdx.x == splits - 1, smem);
  if (threadIdx.x == 0) partial[(idx_t)blockIdx.y * splits + blockIdx.x] = r;
}

// Row starts 16-byte aligned (x aligned and, for several rows, len * sizeof(T) % 16 == 0).
#if GC_WANT_KERNEL(reduce_partial_vec)
extern "C" __global__ void reduce_partial_vec(const T* __restrict__ x, Acc* __restrict__ partial, idx_t len,
                                              unsigned int splits) {
  partial_body<VecWidth<T>::value>(x, partial, len, splits);
}
#endif
#if GC_WANT_KERNEL(reduce_partial_scalar)
extern "C" __global__ void reduce_partial_scalar(const T* __restrict__ x, Acc* __restrict__ partial, idx_t len,
                                                 unsigned int splits) {
  partial_body<1>(x, partial, len, splits);
}
#endif

// ---- pass 2: one warp per row combines its `splits` partials in a fixed order ----
#if GC_WANT_KERNEL(reduce_finish)
extern "C" __global__ void __launch_bounds__(128) reduce_finish(const Acc* __restrict__ partial, Out* __restrict__ out,
                                                               idx_t rows, unsigned int splits, float divisor) {
  const idx_t row = (idx_t)blockIdx.x * (blockDim.x / GC_WARP_SIZE) + gc_warp();
  const int lane = gc_lane();
  if (row >= rows) return;
  Acc acc = Op::identity();
  for (unsigned int s = lane; s < splits; s += GC_WARP_SIZE) acc = Op::combine(acc, partial[row * splits + s]);
  acc = warp_reduce<Op>(acc);
  if (lane == 0) out[row] = finish(acc, divisor);
}
#endif

// ---- full reduction in one launch ----
// grid (splits): each block writes its partial, takes a ticket from `counter` (a u32 that is
// zero between launches), and the block holding the last ticket combines all partials in a
// fixed order (so the result does not depend on which block finished last), writes the
// result and resets the counter for the next launch on the stream.
template <int W>
__device__ __forceinline__ void full_body(const T* __restrict__ x, Acc* __restrict__ partial, Out* __restrict__ out,
                                          unsigned int* __restrict__ counter, idx_t len, unsigned int splits,
                                          float divisor) {
  __shared__ Acc smem[32];
  __shared__ bool last;
  idx_t begin, end;
  split_range(len / W, splits, blockIdx.x, begin, end);
  const Acc r = block_stretch<W>(x, begin, end, len, blockIdx.x == splits - 1, smem);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = r;
    __threadfence();  // the partial is visible before the ticket is
    last = atomicAdd(counter, 1u) == splits - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  Acc acc = Op::identity();
  for (unsigned int s = threadIdx.x; s < splits; s += blockDim.x) acc = Op::combine(acc, load_cg(partial + s));
  acc = block_reduce<Op>(acc, smem);
  if (threadIdx.x == 0) {
    out[0] = finish(acc, divisor);
    *counter = 0u;
  }
}

// x 16-byte aligned.
#if GC_WANT_KERNEL(reduce_full_vec)
extern "C" __global__ void reduce_full_vec(const T* __restrict__ x, Acc* __restrict__ partial, Out* __restrict__ out,
                                           unsigned int* __restrict__ counter, idx_t len, unsigned int splits,
                                           float divisor) {
  full_body<VecWidth<T>::value>(x, partial, out, counter, len, splits, divisor);
}
#endif
#if GC_WANT_KERNEL(reduce_full_scalar)
extern "C" __global__ void reduce_full_scalar(const T* __restrict__ x, Acc* __restrict__ partial, Out* __restrict__ out,
                                              unsigned int* __restrict__ counter, idx_t len, unsigned int splits,
                                              float divisor) {
  full_body<1>(x, partial, out, counter, len, splits, divisor);
}
#endif

// ---- short axis (any inner): one thread per output, the axis walked in order ----
// For axes too short to share among a warp (len <= 32): a warp's threads take 32 neighbouring
// outputs, so with inner > 1 each step's loads are contiguous, and with inner = 1 the warp's
// 32 rows are one contiguous stretch that stays in L1 across the steps.
#if GC_WANT_KERNEL(reduce_short)
extern "C" __global__ void __launch_bounds__(256) reduce_short(const T* __restrict__ x, Out* __restrict__ out, idx_t outer,
                                                               idx_t len, idx_t inner, float divisor) {
  const idx_t outputs = outer * inner;
  for (idx_t o = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; o < outputs; o += (idx_t)gridDim.x * blockDim.x) {
    const idx_t col = o % inner;
    const T* base = x + (o - col) * len + col;
    Acc acc = Op::identity();
    for (idx_t k = 0; k < len; ++k) acc = Op::combine(acc, element(base + k * inner, k));
    out[o] = finish(acc, divisor);
  }
}
#endif

// ---- strided axis (inner > 1) ----
// block (bx, by): bx threads along inner (coalesced), by threads splitting the axis, combined
// by a shared-memory tree; bx * by = 256, by a power of 2. grid (ceil(inner/bx),
// min(outer, 65535), splits): with splits > 1 block z reduces the z-th share of the axis into
// partial[(o * inner + col) * splits + z] for reduce_finish; with one split it writes out.
template <bool SPLIT>
__device__ __forceinline__ void cols_body(const T* __restrict__ x, Out* __restrict__ out, Acc* __restrict__ partial,
                                          idx_t outer, idx_t len, idx_t inner, float divisor) {
  __shared__ Acc smem[256];
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const idx_t col = (idx_t)blockIdx.x * bx + tx;
  idx_t k0 = 0, k1 = len;
  if (SPLIT) {
    const idx_t chunk = (len + gridDim.z - 1) / gridDim.z;
    k0 = (idx_t)blockIdx.z * chunk;
    k1 = k0 + chunk < len ? k0 + chunk : len;
  }
  for (idx_t o = blockIdx.y; o < outer; o += gridDim.y) {
    Acc acc[GC_UNROLL];
#pragma unroll
    for (int u = 0; u < GC_UNROLL; ++u) acc[u] = Op::identity();
    if (col < inner) {
      const T* base = x + o * len * inner + col;
      idx_t k = k0 + ty;
      for (; k + (GC_UNROLL - 1) * by < k1; k += GC_UNROLL * by) {
        T v[GC_UNROLL];
#pragma unroll
        for (int u = 0; u < GC_UNROLL; ++u) v[u] = base[(k + u * by) * inner];
#pragma unroll
        for (int u = 0; u < GC_UNROLL; ++u) acc[u] = Op::combine(acc[u], Op::make(widen(v[u]), k + u * by));
      }
      for (; k < k1; k += by) acc[0] = Op::combine(acc[0], element(base + k * inner, k));
    }
#pragma unroll
    for (int u = 1; u < GC_UNROLL; ++u) acc[0] = Op::combine(acc[0], acc[u]);
    smem[ty * bx + tx] = acc[0];
    __syncthreads();
    for (int s = by >> 1; s > 0; s >>= 1) {
      if (ty < s) smem[ty * bx + tx] = Op::combine(smem[ty * bx + tx], smem[(ty + s) * bx + tx]);
      __syncthreads();
    }
    if (ty == 0 && col < inner) {
      if (SPLIT) {
        partial[(o * inner + col) * gridDim.z + blockIdx.z] = smem[tx];
      } else {
        out[o * inner + col] = finish(smem[tx], divisor);
      }
    }
    __syncthreads();
  }
}

#if GC_WANT_KERNEL(reduce_cols)
extern "C" __global__ void __launch_bounds__(256) reduce_cols(const T* __restrict__ x, Out* __restrict__ out, idx_t outer,
                                                              idx_t len, idx_t inner, float divisor) {
  cols_body<false>(x, out, nullptr, outer, len, inner, divisor);
}
#endif
#if GC_WANT_KERNEL(reduce_cols_split)
extern "C" __global__ void __launch_bounds__(256) reduce_cols_split(const T* __restrict__ x, Acc* __restrict__ partial,
                                                                    idx_t outer, idx_t len, idx_t inner) {
  cols_body<true>(x, nullptr, partial, outer, len, inner, 1.0f);
}
#endif
