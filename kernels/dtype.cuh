// Storage types and f32 conversions for every GpuCompute dtype, with no CUDA header:
// f16 goes through portable.cuh (inline PTX cvt on CUDA, _Float16 on HIP), bf16 through PTX cvt
// on sm_80+ and bit operations elsewhere, so these kernels compile under any NVRTC (11.8 here, 13 on the GPU machines)
// without cuda_fp16.h, and under hiprtc.
//
// A module is specialised by defining GC_DTYPE to one of GC_F32, GC_F16, GC_BF16, GC_I32
// (e.g. -DGC_DTYPE=GC_F16); dtype.cuh then defines `T` (the storage type) and `C` (the
// compute type: float, or int for i32).
#pragma once
#include "portable.cuh"

#define GC_F32 1
#define GC_F16 2
#define GC_BF16 3
#define GC_I32 4

// 16-bit floats are stored as their bit pattern in distinct types so overloads can tell them apart.
struct __align__(2) f16_t {
  unsigned short bits;
};
struct __align__(2) bf16_t {
  unsigned short bits;
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(f16_t x) { return gc_f16_bits_to_float(x.bits); }
__device__ __forceinline__ float to_float(bf16_t x) { return __uint_as_float(((unsigned int)x.bits) << 16); }

// Storing converts from the compute type with round-to-nearest-even (f32 → 16-bit) or
// truncation toward zero, saturating, NaN → 0 (float → i32: PTX cvt.rzi semantics).
template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ int from_float<int>(float x) { return gc_float_to_int_rz(x); }
template <> __device__ __forceinline__ f16_t from_float<f16_t>(float x) {
  f16_t h;
  h.bits = gc_float_to_f16_bits(x);
  return h;
}
template <> __device__ __forceinline__ bf16_t from_float<bf16_t>(float x) {
  bf16_t h;
#if !defined(GC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // One instruction instead of a dozen: 16-bit rows are otherwise bound by this conversion.
  unsigned short rounded;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(rounded) : "f"(x));
  h.bits = x != x ? (unsigned short)0x7fff : rounded;  // canonical quiet NaN, as the host helpers produce
#else
  unsigned int u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) {
    h.bits = 0x7fff;  // canonical quiet NaN, as the host helpers produce
  } else {
    h.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // round half to even
  }
#endif
  return h;
}

// Compute values: f32/f16/bf16 widen to float, i32 stays int.
__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ float widen(f16_t x) { return to_float(x); }
__device__ __forceinline__ float widen(bf16_t x) { return to_float(x); }
__device__ __forceinline__ int widen(int x) { return x; }

// Narrows a compute value back to the storage type T.
template <typename T> __device__ __forceinline__ T narrow(float x) { return from_float<T>(x); }
template <typename T> __device__ __forceinline__ T narrow(int x);
template <> __device__ __forceinline__ int narrow<int>(int x) { return x; }

template <typename T> struct ComputeOf {
  typedef float type;
};
template <> struct ComputeOf<int> {
  typedef int type;
};

// Storage type of each dtype code.
template <int CODE> struct StorageOf;
template <> struct StorageOf<GC_F32> {
  typedef float type;
};
template <> struct StorageOf<GC_F16> {
  typedef f16_t type;
};
template <> struct StorageOf<GC_BF16> {
  typedef bf16_t type;
};
template <> struct StorageOf<GC_I32> {
  typedef int type;
};

#if defined(GC_DTYPE)
typedef StorageOf<GC_DTYPE>::type T;
typedef ComputeOf<T>::type C;
#endif

// Elements of T in one 16-byte vector, the unit of the vectorised paths.
template <typename T> struct VecWidth {
  static const int value = 16 / sizeof(T);
};

// Raw register type of an N-byte access (N = 4, 8 or 16).
template <int BYTES> struct RawOf;
template <> struct RawOf<4> {
  typedef unsigned int type;
};
template <> struct RawOf<8> {
  typedef uint2 type;
};
template <> struct RawOf<16> {
  typedef uint4 type;
};

// Loads W consecutive elements; one 4/8/16-byte access when W*sizeof(T) is one of those
// (the caller guarantees that alignment), element by element otherwise.
template <typename T, int W> __device__ __forceinline__ void load_pack(const T* p, T (&v)[W]) {
  constexpr int BYTES = W * (int)sizeof(T);
  if constexpr (BYTES == 4 || BYTES == 8 || BYTES == 16) {
    typedef typename RawOf<BYTES>::type R;
    union {
      R raw;
      T e[W];
    } u;
    u.raw = *reinterpret_cast<const R*>(p);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = u.e[k];
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = p[k];
  }
}

template <typename T, int W> __device__ __forceinline__ void store_pack(T* p, const T (&v)[W]) {
  constexpr int BYTES = W * (int)sizeof(T);
  if constexpr (BYTES == 4 || BYTES == 8 || BYTES == 16) {
    typedef typename RawOf<BYTES>::type R;
    union {
      R raw;
      T e[W];
    } u;
#pragma unroll
    for (int k = 0; k < W; ++k) u.e[k] = v[k];
    *reinterpret_cast<R*>(p) = u.raw;
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) p[k] = v[k];
  }
}

// 64-bit element counts and indices: tensors may exceed 2^31 elements on large GPUs.
typedef unsigned long long idx_t;
