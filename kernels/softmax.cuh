// What the softmax kernels share (softmax.cu, softmax_cluster.cu): e^x on the special-function
// unit, and the normalisation of a row (or a slice of one) held in registers.
#pragma once
#include "row.cuh"

// e^x as 2^(x·log2 e) on the special-function unit: a few ulp, which a softmax normalised
// in f32 does not notice, at a fraction of expf's instructions (rows stream at memory speed,
// and 16-bit rows of 16K+ columns are bound by the instructions per element).
__device__ __forceinline__ float gc_exp(float x) { return gc_exp2(x * 1.4426950408889634f); }

template <int CHUNKS, int W>
__device__ __forceinline__ float thread_max(const float (&v)[CHUNKS * W]) {
  float m = -GC_INF;
#pragma unroll
  for (int k = 0; k < CHUNKS * W; ++k) m = nan_max(m, v[k]);
  return m;
}

// A row held by one team: its maximum and sum are the team's.
struct WholeRow {
  __device__ __forceinline__ float max(float m) const { return m; }
  __device__ __forceinline__ float sum(float s) const { return s; }
  __device__ __forceinline__ void done() const {}
};

// Normalises the row held in v (this team's chunks, padding -inf; m the thread's own maximum)
// and stores it to orow. `Across` combines the team's maximum and sum with those of the teams
// holding the rest of the row (WholeRow: none) and hears when the combined values are in hand.
template <int CHUNKS, int W, bool WARP, typename Across = WholeRow>
__device__ __forceinline__ void softmax_write(float (&v)[CHUNKS * W], float m, T* __restrict__ orow, int cols, int logMode,
                                              float* smem, Across across = Across()) {
  const int team = team_size<WARP>(), t = team_rank<WARP>();
  m = across.max(team_reduce<WARP, ReduceMax<float> >(m, smem));
  float s = 0.0f;
  if (logMode) {
#pragma unroll
    for (int k = 0; k < CHUNKS * W; ++k) s += gc_exp(v[k] - m);
  } else {
#pragma unroll
    for (int k = 0; k < CHUNKS * W; ++k) {
      v[k] = gc_exp(v[k] - m);  // padding gives exp(-inf) = 0
      s += v[k];
    }
  }
  s = across.sum(team_reduce<WARP, ReduceSum<float> >(s, smem));
  across.done();
  if (logMode) {
    const float shift = m + logf(s);
    store_row<CHUNKS, W>(orow, cols, team, t, v, [&](float xv, int) { return xv - shift; });
  } else {
    const float scale = 1.0f / s;
    store_row<CHUNKS, W>(orow, cols, team, t, v, [&](float e, int) { return e * scale; });
  }
}
