// Pieces shared by the attention backward kernels (attention_backward.cu on CUDA cores,
// attention_backward_mma.cu on tensor cores): the row dot product D = rowsum(dOut ∘ out) that
// both need first, and the log-sum-exp in the base-2 units they recompute P in.
#pragma once
#include "attention.cuh"

#define GC_LOG2E 1.4426950408889634f

// A row's log-sum-exp in base-2 units; +∞ for a row that saw no key, so 2^(s − it) is 0 there.
__device__ __forceinline__ float gc_bwd_lse2(float lse) { return lse == GC_ATTN_NEG_INF ? __int_as_float(0x7f800000) : lse * GC_LOG2E; }

// D[row] = Σ_x dOut[row, x]·out[row, x] in f32 for every query row, a warp per row (256 threads).
extern "C" __global__ void __launch_bounds__(256)
    attention_bwd_dot(const T* __restrict__ out, const T* __restrict__ d_out, float* __restrict__ delta, idx_t rows, int d) {
  const idx_t row = (idx_t)blockIdx.x * 8 + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  float sum = 0.f;
  for (int x = lane; x < d; x += 32) sum = fmaf(to_float(out[row * d + x]), to_float(d_out[row * d + x]), sum);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) delta[row] = sum;
}
