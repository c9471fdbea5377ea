// What differs between CUDA (NVRTC) and HIP (hiprtc) for the portable kernels, in one place:
// the warp (wavefront) width, warp shuffles, f16 and float→int conversions, and loads that
// must see other blocks' writes. CUDA keeps its exact instructions (inline PTX, the *_sync
// shuffles); HIP uses clang builtins (HIP 5.2 has no *_sync shuffles, and no PTX).
//
// GC_WARP_SIZE is 32 on CUDA and the target's wavefront size on HIP (64 on CDNA/GCN, 32 on
// RDNA): the host defines it from the device, and it is checked against the compiler's own
// value so a kernel can never be built for the wrong width.
#pragma once

#if defined(__HIPCC_RTC__) || defined(__HIP__)
#define GC_HIP 1
#endif

#ifndef GC_WARP_SIZE
#define GC_WARP_SIZE 32
#endif
#if GC_WARP_SIZE != 32 && GC_WARP_SIZE != 64
#error "GC_WARP_SIZE must be 32 or 64"
#endif
#if defined(GC_HIP) && defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE != GC_WARP_SIZE
#error "GC_WARP_SIZE differs from the target's wavefront size"
#endif
#if !defined(GC_HIP) && GC_WARP_SIZE != 32
#error "CUDA warps are 32 threads wide"
#endif

// Lane of the calling thread in its warp, and its warp's index in a 1-D block.
__device__ __forceinline__ int gc_lane() { return (int)(threadIdx.x & (GC_WARP_SIZE - 1)); }
__device__ __forceinline__ int gc_warp() { return (int)(threadIdx.x / GC_WARP_SIZE); }

// The value of `v` held by lane (lane ^ mask), all lanes of the warp taking part.
template <typename V> __device__ __forceinline__ V gc_shfl_xor(V v, int mask) {
#ifdef GC_HIP
  return __shfl_xor(v, mask, GC_WARP_SIZE);
#else
  return __shfl_xor_sync(0xffffffffu, v, mask);
#endif
}

// IEEE half bits → float (exact).
__device__ __forceinline__ float gc_f16_bits_to_float(unsigned short bits) {
#ifdef GC_HIP
  return (float)__builtin_bit_cast(_Float16, bits);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
#endif
}

// float → IEEE half bits, rounding to nearest even.
__device__ __forceinline__ unsigned short gc_float_to_f16_bits(float x) {
#ifdef GC_HIP
  return __builtin_bit_cast(unsigned short, (_Float16)x);
#else
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return h;
#endif
}

// float → int truncating toward zero, saturating at the int range, NaN → 0 (PTX cvt.rzi).
__device__ __forceinline__ int gc_float_to_int_rz(float x) {
#ifdef GC_HIP
  if (x != x) return 0;
  if (x >= 2147483648.0f) return 2147483647;
  if (x <= -2147483648.0f) return (int)0x80000000u;
  return (int)x;
#else
  int r;
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
#endif
}

// 2^x on the special-function unit (relative error ~2^-22), results below 2^-126 flushed to zero
// (no denormal fix-up around the instruction); 2^-inf = +0.
__device__ __forceinline__ float gc_exp2(float x) {
#ifdef GC_HIP
  return exp2f(x);
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

// A load that bypasses the non-coherent L1, for values other blocks of the grid wrote
// (after their __threadfence).
__device__ __forceinline__ float gc_load_coherent(const float* p) {
#ifdef GC_HIP
  float v;
  __atomic_load(p, &v, __ATOMIC_RELAXED);
  return v;
#else
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
#endif
}
__device__ __forceinline__ int gc_load_coherent(const int* p) {
#ifdef GC_HIP
  int v;
  __atomic_load(p, &v, __ATOMIC_RELAXED);
  return v;
#else
  int v;
  asm volatile("ld.global.cg.s32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
#endif
}
