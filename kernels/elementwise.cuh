// Grid-stride loops shared by the elementwise kernels. Work is counted in packs of W
// elements (W = 16 bytes / element size on the vectorised path, 1 on the scalar path);
// each thread issues UNROLL packs' loads before any store so enough bytes are in flight
// to approach the memory roof.
#pragma once
#include "dtype.cuh"

#define GC_UNROLL 4

__device__ __forceinline__ idx_t global_thread() { return (idx_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ idx_t grid_threads() { return (idx_t)gridDim.x * blockDim.x; }

// Runs store(i, load(i)) for every pack index i < npacks. Each block walks whole tiles of
// UNROLL * blockDim packs, a contiguous stretch per iteration (thread t takes t, t + blockDim,
// ...), so a block's loads fall in a few DRAM pages; all UNROLL loads are issued before any store.
template <int UNROLL, typename Load, typename Store>
__device__ __forceinline__ void pack_loop(idx_t npacks, Load load, Store store) {
  typedef decltype(load(idx_t(0))) Regs;
  const idx_t step = blockDim.x;
  const idx_t grid_stride = (idx_t)UNROLL * step * gridDim.x;
  idx_t i = (idx_t)blockIdx.x * UNROLL * step + threadIdx.x;
  for (; i + (UNROLL - 1) * step < npacks; i += grid_stride) {
    Regs r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = load(i + u * step);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) store(i + u * step, r[u]);
  }
  // Only the first tile that failed the test can be partly inside the range.
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (i + u * step < npacks) {
      Regs r = load(i + u * step);
      store(i + u * step, r);
    }
  }
}

// The elements past the last whole pack (fewer than W), one per thread of the first warp.
template <int W, typename F> __device__ __forceinline__ void pack_tail(idx_t n, F f) {
  if (W == 1) return;
  const idx_t start = (n / W) * W;
  const idx_t i = start + global_thread();
  if (i < n) f(i);
}
