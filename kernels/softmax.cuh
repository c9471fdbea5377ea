// What the softmax kernels share (softmax.cu, softmax_cluster.cu): e^x on the special-function
// unit, a row's (maximum, sum) as one reduction, and the normalisation of a row (or a slice of
// one) held in registers.
#pragma once
#include "row.cuh"

#define GC_LOG2E 1.4426950408889634f
#define GC_LN2 0.6931471805599453f

// e^x as 2^(x·log2 e) on the special-function unit: a few ulp, which a softmax normalised in f32
// does not notice, at a fraction of expf's instructions (rows stream at memory speed, and 16-bit
// rows of 16K+ columns are bound by the instructions per element). A stretch of a row with
// maximum m is exponentiated as 2^(x·log2e − shift(m)): one FFMA and the ex2 per element, with
// shift(m) = m·log2e rounded once, so that partial sums rebased onto a larger maximum (rebase)
// carry exactly the same rounded shift and the rounding cancels in the normalisation.
__device__ __forceinline__ float exp_shift(float m) { return m == -GC_INF ? 0.0f : __fmul_rn(m, GC_LOG2E); }
__device__ __forceinline__ float exp_from(float x, float shift) { return gc_exp2(fmaf(x, GC_LOG2E, -shift)); }

// The factor taking a sum of exponentials against maximum a to maximum b ≥ a:
// 2^(shift(a) − shift(b)); 1 when a == b (also both −inf, whose sums are 0), 0 for a = −inf < b,
// NaN when b is NaN.
__device__ __forceinline__ float rebase(float a, float b) {
  return a == b ? 1.0f : gc_exp2(__fmul_rn(a, GC_LOG2E) - __fmul_rn(b, GC_LOG2E));
}

// A stretch of a row: its maximum m (NaN if it holds one) and s = Σ 2^(x·log2e − shift(m)).
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
struct ReduceMaxSum {
  typedef MaxSum Acc;
  static __device__ __forceinline__ Acc identity() {
    Acc a;
    a.m = -GC_INF;
    a.s = 0.0f;
    return a;
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    Acc r;
    r.m = nan_max(a.m, b.m);
    r.s = a.s * rebase(a.m, r.m) + b.s * rebase(b.m, r.m);
    return r;
  }
};

// logSoftmax's x − ln Σ e^(x − m) for a row's (m, s): ln s is taken against the rounded shift(m),
// and the product's rounding (m·log2e − shift(m), exact by FMA) is put back.
__device__ __forceinline__ float log_normaliser(MaxSum row) {
  return row.m + (logf(row.s) - fmaf(row.m, GC_LOG2E, -exp_shift(row.m)) * GC_LN2);
}

template <int CHUNKS, int W>
__device__ __forceinline__ float thread_max(const float (&v)[CHUNKS * W]) {
  float m = -GC_INF;
#pragma unroll
  for (int k = 0; k < CHUNKS * W; ++k) m = nan_max(m, v[k]);
  return m;
}

// A row held by one team: its (maximum, sum) is the team's.
struct WholeRow {
  __device__ __forceinline__ MaxSum combine(MaxSum team) const { return team; }
  __device__ __forceinline__ void done() const {}
};

// The thread's (m, Σ 2^(x·log2e − shift(m))), the exponentials left in v unless logMode.
template <int CHUNKS, int W>
__device__ __forceinline__ MaxSum exp_sum(float (&v)[CHUNKS * W], float m, int logMode) {
  const float shift = exp_shift(m);
  MaxSum part;
  part.m = m;
  part.s = 0.0f;
  if (logMode) {
#pragma unroll
    for (int k = 0; k < CHUNKS * W; ++k) part.s += exp_from(v[k], shift);
  } else {
#pragma unroll
    for (int k = 0; k < CHUNKS * W; ++k) {
      v[k] = exp_from(v[k], shift);  // padding gives 2^-inf = 0
      part.s += v[k];
    }
  }
  return part;
}

// Normalises the row held in v (this team's chunks, padding -inf past the thread's `inside`
// chunks; m the thread's own maximum) and stores it to orow. A warp team takes the row's maximum
// first (shuffles cost no barrier); a block team sums against each thread's own maximum and
// combines (max, sum) pairs in one block reduction: one barrier per row instead of two (H200,
// f32 512 × 32768 in a standalone copy of the staged kernel: 3437 → 3566 GB/s, one run). `smem`
// (32 accumulators) must not be read by a reduction still in progress: a block walking several
// rows alternates two. `Across` combines the team's (maximum, sum) with those of the teams
// holding the rest of the row (WholeRow: none) and hears when it is in hand.
template <int CHUNKS, int W, bool WARP, typename Across = WholeRow>
__device__ __forceinline__ void softmax_write(float (&v)[CHUNKS * W], float m, T* __restrict__ orow, int inside, int logMode,
                                              MaxSum* smem, Across across = Across()) {
  const int team = team_size<WARP>(), t = team_rank<WARP>();
  MaxSum part, row;
  if constexpr (WARP) {
    part = exp_sum<CHUNKS, W>(v, warp_reduce<ReduceMax<float> >(m), logMode);
    row = part;
    row.s = warp_reduce<ReduceSum<float> >(part.s);
  } else {
    part = exp_sum<CHUNKS, W>(v, m, logMode);
    row = block_reduce_once<ReduceMaxSum>(part, smem);
  }
  row = across.combine(row);
  across.done();
  if (logMode) {
    const float shift = log_normaliser(row);
    store_chunks<CHUNKS, W>(orow, inside, team, t, v, [&](float xv, int) { return xv - shift; });
  } else {
    const float scale = rebase(part.m, row.m) / row.s;
    store_chunks<CHUNKS, W>(orow, inside, team, t, v, [&](float e, int) { return e * scale; });
  }
}
