// Helpers shared by the tensor-core attention kernels (attention_mma.cu, attention_wgmma.cu):
// GC_DTYPE is GC_F16 or GC_BF16, and T its storage type.
#pragma once
#include "dtype.cuh"

#if GC_DTYPE != GC_F16 && GC_DTYPE != GC_BF16
#error "the tensor-core attention kernels need GC_DTYPE GC_F16 or GC_BF16"
#endif

// Two f32 values rounded to nearest-even into one register of 16-bit values, x0 in the low half:
// P's fragments for the tensor cores, and pairs of outputs.
__device__ __forceinline__ unsigned gc_pack2(float x0, float x1) {
  unsigned r;
#if GC_DTYPE == GC_F16
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x1), "f"(x0));
#else
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x1), "f"(x0));
#endif
  return r;
}
