// Softmax and logSoftmax of rows longer than one block holds in registers (past 32K columns),
// split over the CTAs of a thread-block cluster (sm_90+), so that each element is still read
// once and written once (the looped kernel reads twice). Specialised with -DGC_DTYPE=<float
// dtype code>; launched with cluster dims (C, 1, 1), C ≤ 8, and a grid of rows · C CTAs.
// softmax_cluster: CTA r of a row's cluster holds the columns [r·slice, (r+1)·slice) in
// registers, 32 elements per thread (row.cuh's chunk layout, 16-byte vectors: rows 16-byte
// aligned, cols and slice multiples of the vector width). The row's (maximum, sum) pairs combine
// through distributed shared memory.
#include "cluster.cuh"
#include "softmax.cuh"

namespace {

// Combines a CTA's (maximum, sum) with the other CTAs of its cluster: lane r of every warp reads
// CTA r's pair from its `stats`, and the warp reduces them (C ≤ 32). One cluster barrier per row.
struct AcrossCluster {
  MaxSum* stats;  // this CTA's pair, read by the others
  unsigned size;

  __device__ __forceinline__ MaxSum combine(MaxSum cta) const {
    if (threadIdx.x == 0) *stats = cta;
    gc_cluster_sync();
    MaxSum r = ReduceMaxSum::identity();
    if (gc_lane() < size) {
      r.m = gc_cluster_load(&stats->m, gc_lane());
      r.s = gc_cluster_load(&stats->s, gc_lane());
    }
    return warp_reduce<ReduceMaxSum>(r);
  }
  // This CTA has read all it needs from the others; gc_cluster_wait before leaving keeps its own
  // stats alive until every other CTA has read them.
  __device__ __forceinline__ void done() const { gc_cluster_arrive(); }
};

template <int CHUNKS>
__device__ __forceinline__ void softmax_cluster_row(const T* __restrict__ x, T* __restrict__ out, int cols, int slice, int logMode) {
  constexpr int W = VecWidth<T>::value;
  __shared__ MaxSum smem[32];
  __shared__ MaxSum stats;
  const unsigned size = gc_cluster_size();
  const idx_t row = blockIdx.x / size;
  const int first = (int)gc_cluster_rank() * slice;
  const int n = min(slice, cols - first);  // this CTA's columns (the last slice may be short or empty)
  float v[CHUNKS * W];
  const int inside = chunks_inside(n, blockDim.x, threadIdx.x, W);
  load_chunks<CHUNKS, W>(x + row * cols + first, inside, blockDim.x, threadIdx.x, v, -GC_INF);
  softmax_write<CHUNKS, W, false>(v, thread_max<CHUNKS, W>(v), out + row * cols + first, inside, logMode, smem,
                                  AcrossCluster{&stats, size});
  gc_cluster_wait();
}

}  // namespace

extern "C" __global__ void __launch_bounds__(512, 2)
    softmax_cluster(const T* __restrict__ x, T* __restrict__ out, int cols, int slice, int logMode) {
  softmax_cluster_row<32 / VecWidth<T>::value>(x, out, cols, slice, logMode);
}
