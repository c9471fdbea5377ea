// Reduction operators and warp/block reductions over them. A reduction op defines its
// accumulator type `Acc`, `identity()` and an associative, commutative `combine` (so the
// xor-butterfly leaves the same bits in every lane and results are deterministic).
// NaN semantics follow the CPU backend: max/min propagate NaN; argmax returns the first
// NaN, else the first maximum.
#pragma once
#include "dtype.cuh"

struct ArgAcc {
  float v;
  int i;
};
struct ArgAccInt {
  int v;
  int i;
};

__device__ __forceinline__ float shfl_xor(float v, int mask) { return gc_shfl_xor(v, mask); }
__device__ __forceinline__ int shfl_xor(int v, int mask) { return gc_shfl_xor(v, mask); }
__device__ __forceinline__ ArgAcc shfl_xor(ArgAcc a, int mask) {
  ArgAcc r;
  r.v = gc_shfl_xor(a.v, mask);
  r.i = gc_shfl_xor(a.i, mask);
  return r;
}
__device__ __forceinline__ ArgAccInt shfl_xor(ArgAccInt a, int mask) {
  ArgAccInt r;
  r.v = gc_shfl_xor(a.v, mask);
  r.i = gc_shfl_xor(a.i, mask);
  return r;
}

// max / min that propagate NaN (fmaxf/fminf drop it): one instruction on sm_80+ instead of two
// compares and a select.
#if !defined(GC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ float nan_max(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
__device__ __forceinline__ float nan_min(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#else
__device__ __forceinline__ float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float nan_min(float a, float b) { return (a < b || a != a) ? a : b; }
#endif

// Each op is templated on the compute type V (float, or int for i32).
template <typename V> struct ReduceSum;
template <> struct ReduceSum<float> {
  typedef float Acc;
  static __device__ __forceinline__ Acc identity() { return 0.0f; }
  static __device__ __forceinline__ Acc make(float v, idx_t) { return v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a + b; }
};
template <> struct ReduceSum<int> {
  typedef int Acc;  // wraps modulo 2^32 like the CPU backend's `| 0`
  static __device__ __forceinline__ Acc identity() { return 0; }
  static __device__ __forceinline__ Acc make(int v, idx_t) { return v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return (int)((unsigned int)a + (unsigned int)b); }
};

template <typename V> struct ReduceMax;
template <> struct ReduceMax<float> {
  typedef float Acc;
  static __device__ __forceinline__ Acc identity() { return -__int_as_float(0x7f800000); }
  static __device__ __forceinline__ Acc make(float v, idx_t) { return v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return nan_max(a, b); }
};
template <> struct ReduceMax<int> {
  typedef int Acc;
  static __device__ __forceinline__ Acc identity() { return (int)0x80000000u; }
  static __device__ __forceinline__ Acc make(int v, idx_t) { return v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a > b ? a : b; }
};

template <typename V> struct ReduceMin;
template <> struct ReduceMin<float> {
  typedef float Acc;
  static __device__ __forceinline__ Acc identity() { return __int_as_float(0x7f800000); }
  static __device__ __forceinline__ Acc make(float v, idx_t) { return v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return nan_min(a, b); }
};
template <> struct ReduceMin<int> {
  typedef int Acc;
  static __device__ __forceinline__ Acc identity() { return 0x7fffffff; }
  static __device__ __forceinline__ Acc make(int v, idx_t) { return v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a < b ? a : b; }
};

// Index of the maximum along the axis (an i32: the front-end keeps axes below 2^31).
template <typename V> struct ReduceArgmax;
template <> struct ReduceArgmax<float> {
  typedef ArgAcc Acc;
  static __device__ __forceinline__ Acc identity() {
    Acc a;
    a.v = -__int_as_float(0x7f800000);
    a.i = 0x7fffffff;
    return a;
  }
  static __device__ __forceinline__ Acc make(float v, idx_t i) {
    Acc a;
    a.v = v;
    a.i = (int)i;
    return a;
  }
  // NaN beats everything; among equals (or two NaNs) the lower index wins.
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    const bool aNan = a.v != a.v, bNan = b.v != b.v;
    if (aNan != bNan) return aNan ? a : b;
    if (!aNan && a.v != b.v) return a.v > b.v ? a : b;
    return a.i < b.i ? a : b;
  }
};
template <> struct ReduceArgmax<int> {
  typedef ArgAccInt Acc;
  static __device__ __forceinline__ Acc identity() {
    Acc a;
    a.v = (int)0x80000000u;
    a.i = 0x7fffffff;
    return a;
  }
  static __device__ __forceinline__ Acc make(int v, idx_t i) {
    Acc a;
    a.v = v;
    a.i = (int)i;
    return a;
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    if (a.v != b.v) return a.v > b.v ? a : b;
    return a.i < b.i ? a : b;
  }
};

template <typename Op> __device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc v) {
#pragma unroll
  for (int mask = GC_WARP_SIZE / 2; mask > 0; mask >>= 1) v = Op::combine(v, shfl_xor(v, mask));
  return v;
}

// Reduces over a 1-D block of whole warps with one barrier; every thread gets the result. `smem`
// holds 32 accumulators (one per warp) and must not be in use by an earlier call still being
// read: give each call its own, or alternate two (no thread passes call k + 1's barrier before
// every thread has finished reading call k's).
template <typename Op>
__device__ __forceinline__ typename Op::Acc block_reduce_once(typename Op::Acc v, typename Op::Acc* smem) {
  const int lane = gc_lane();
  v = warp_reduce<Op>(v);
  if (lane == 0) smem[gc_warp()] = v;
  __syncthreads();
  const int warps = (blockDim.x + GC_WARP_SIZE - 1) / GC_WARP_SIZE;
  v = lane < warps ? smem[lane] : Op::identity();
  return warp_reduce<Op>(v);
}

// block_reduce_once whose `smem` may be reused by the next call (the leading barrier protects it).
template <typename Op>
__device__ __forceinline__ typename Op::Acc block_reduce(typename Op::Acc v, typename Op::Acc* smem) {
  __syncthreads();
  return block_reduce_once<Op>(v, smem);
}
