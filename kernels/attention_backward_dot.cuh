// The row dot product D = rowsum(dOut ∘ out) that the attention backward kernels of
// attention_backward.cu and attention_backward_mma.cu read, computed by its own launch first.
#pragma once
#include "attention_backward.cuh"

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
