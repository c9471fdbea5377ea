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

// The activation out of line: one copy of its code for a loop over many outputs.
__device__ __noinline__ float gc_activate_outlined(float v, int act) { return gc_activate(v, act); }

// The activation for epilogue loops: none and ReLU inline (a uniform branch, no jump table per
// element, which left the tensor cores idle for a quarter of a Hopper GEMM), the others called.
__device__ __forceinline__ float gc_activate_in_loop(float v, int act) {
  if (act == GC_ACT_NONE) return v;
  if (act == GC_ACT_RELU) return v > 0.f ? v : (v != v ? v : 0.f);
  return gc_activate_outlined(v, act);
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

// alpha · acc + beta · C + bias of element (row, col), before the activation.
template <typename T> __device__ __forceinline__ float gc_epilogue_linear(const Epilogue<T>& ep, float acc, int n, int row, int col) {
  float v = ep.alpha * acc;
  if (ep.c) v += ep.beta * to_float(ep.c[(idx_t)row * n + col]);
  if (ep.bias) v += to_float(ep.bias[col]);
  return v;
}

// Applies the epilogue to one accumulator value of element (row, col).
template <typename T> __device__ __forceinline__ T gc_epilogue_value(const Epilogue<T>& ep, float acc, int n, int row, int col) {
  return from_float<T>(gc_activate(gc_epilogue_linear(ep, acc, n, row, col), ep.act));
}

// Four consecutive outputs in one store (p aligned to four elements).
template <typename T> __device__ __forceinline__ void gc_store4(T* p, const T (&v)[4]) {
  if constexpr (sizeof(T) == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    *reinterpret_cast<uint2*>(p) = make_uint2(v[0].bits | ((unsigned)v[1].bits << 16), v[2].bits | ((unsigned)v[3].bits << 16));
  }
}

// Finishes the outputs (row, col … col + 3) from their accumulators: one vector store where
// `vec` (n and out aligned to four elements) and all four lie inside the matrix, else element by
// element up to column n.
template <typename T>
__device__ __forceinline__ void gc_finish_quad(const Epilogue<T>& ep, float4 acc, int n, int row, int col, bool vec) {
  const float a[4] = {acc.x, acc.y, acc.z, acc.w};
  T v[4];
#pragma unroll
  for (int q = 0; q < 4; q++) v[q] = col + q < n ? from_float<T>(gc_activate_in_loop(gc_epilogue_linear(ep, a[q], n, row, col + q), ep.act)) : T();
  T* const dst = ep.out + (idx_t)row * n + col;
  if (vec && col + 3 < n) {
    gc_store4(dst, v);
  } else {
#pragma unroll
    for (int q = 0; q < 4; q++) {
      if (col + q < n) dst[q] = v[q];
    }
  }
}
