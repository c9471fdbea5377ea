// The fused epilogue shared by every matmul kernel:
//   out = act(alpha · acc + beta · C + bias[col])
// C is read only when the host passes a non-null pointer (it does so only for beta != 0, so
// NaN in an ignored C never leaks, as in BLAS); bias is a row vector over the columns.
// Activation codes match src/compute/cuda/matmul-kernels.ts (GC_ACT_*).
#pragma once
#include "dtype.cuh"

#define GC_ACT_NONE 0
#define GC_ACT_RELU 1
#define GC_ACT_GELU 2
#define GC_ACT_GELU_TANH 3
#define GC_ACT_SILU 4
#define GC_ACT_SIGMOID 5
#define GC_ACT_TANH 6

// Precise libdevice functions (no fast-math), so results track the CPU backend's f64 ones.
__device__ __forceinline__ float gc_activate(float v, int act) {
  switch (act) {
    case GC_ACT_RELU:
      return v > 0.f ? v : (v != v ? v : 0.f);  // keeps NaN, as the CPU backend does
    case GC_ACT_GELU:
      return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    case GC_ACT_GELU_TANH:
      return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case GC_ACT_SILU:
      return v / (1.f + expf(-v));
    case GC_ACT_SIGMOID:
      return 1.f / (1.f + expf(-v));
    case GC_ACT_TANH:
      return tanhf(v);
    default:
      return v;
  }
}

// Everything the epilogue needs besides the accumulator; passed by value to every kernel.
template <typename T> struct Epilogue {
  T* out;         // [m][n] of this batch entry
  const T* c;     // [m][n] of this batch entry, or null
  const T* bias;  // [n], or null
  float alpha;
  float beta;
  int act;
};

// Applies the epilogue to one accumulator value of element (row, col) of batch entry z.
template <typename T>
__device__ __forceinline__ T gc_epilogue_value(const Epilogue<T>& ep, float acc, const T* c_batch, int n, int row, int col) {
  float v = ep.alpha * acc;
  if (c_batch) v += ep.beta * to_float(c_batch[(idx_t)row * n + col]);
  if (ep.bias) v += to_float(ep.bias[col]);
  return from_float<T>(gc_activate(v, ep.act));
}
