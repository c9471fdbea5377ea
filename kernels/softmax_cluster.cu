// Softmax and logSoftmax of rows longer than one block holds in registers (past 32K columns),
// split over the CTAs of a thread-block cluster (sm_90+), so that each element is still read
// once and written once (the looped kernel reads twice). Specialised with -DGC_DTYPE=<float
// dtype code>; launched with cluster dims (C, 1, 1), C ≤ 8, and a grid of rows · C CTAs.
// softmax_cluster: CTA r of a row's cluster holds the columns [r·slice, (r+1)·slice) in
// registers, 32 elements per thread (row.cuh's chunk layout, 16-byte vectors: rows 16-byte
// aligned, cols and slice multiples of the vector width). The row's maximum and sum combine
// through distributed shared memory.
#include "cluster.cuh"
#include "softmax.cuh"

namespace {

// Combines a CTA's maximum and sum with the other CTAs of its cluster: lane r of every warp reads
// CTA r's value from its `stats`, and the warp reduces them (C ≤ 32).
struct AcrossCluster {
  float* stats;  // [maximum, sum] of this CTA, read by the others
  unsigned size;

  __device__ __forceinline__ float max(float m) const {
    if (threadIdx.x == 0) stats[0] = m;
    gc_cluster_sync();
    float r = gc_lane() < size ? gc_cluster_load(&stats[0], gc_lane()) : -GC_INF;
    return warp_reduce<ReduceMax<float> >(r);
  }
  __device__ __forceinline__ float sum(float s) const {
    if (threadIdx.x == 0) stats[1] = s;
    gc_cluster_sync();
    float r = gc_lane() < size ? gc_cluster_load(&stats[1], gc_lane()) : 0.0f;
    return warp_reduce<ReduceSum<float> >(r);
  }
  // This CTA has read all it needs from the others; gc_cluster_wait before leaving keeps its own
  // stats alive until every other CTA has read them.
  __device__ __forceinline__ void done() const { gc_cluster_arrive(); }
};

template <int CHUNKS>
__device__ __forceinline__ void softmax_cluster_row(const T* __restrict__ x, T* __restrict__ out, int cols, int slice, int logMode) {
  constexpr int W = VecWidth<T>::value;
  __shared__ float smem[32];
  __shared__ float stats[2];
  const unsigned size = gc_cluster_size();
  const idx_t row = blockIdx.x / size;
  const int first = (int)gc_cluster_rank() * slice;
  const int n = min(slice, cols - first);  // this CTA's columns (the last slice may be short or empty)
  float v[CHUNKS * W];
  load_row<CHUNKS, W>(x + row * cols + first, n, blockDim.x, threadIdx.x, v, -GC_INF);
  softmax_write<CHUNKS, W, false>(v, thread_max<CHUNKS, W>(v), out + row * cols + first, n, logMode, smem,
                                  AcrossCluster{stats, size});
  gc_cluster_wait();
}

}  // namespace

extern "C" __global__ void __launch_bounds__(512, 2)
    softmax_cluster(const T* __restrict__ x, T* __restrict__ out, int cols, int slice, int logMode) {
  softmax_cluster_row<32 / VecWidth<T>::value>(x, out, cols, slice, logMode);
}
