// cp.async (sm_80+): 16-byte copies from global to shared memory that run while the thread
// goes on, for kernels that stage their next tile or row. Inline PTX, so NVRTC 11.8 compiles it
// without CUDA headers.
#pragma once
#include "portable.cuh"

#ifdef GC_HIP
// HIP has no asynchronous global → shared copy: the copy happens at once (each thread reads back
// only what it copied, so the callers' ordering holds), and commit/wait have nothing to do.
__device__ __forceinline__ void gc_cp_async16(void* smem, const void* gmem, bool valid) {
  uint4 v = make_uint4(0u, 0u, 0u, 0u);
  if (valid) v = *reinterpret_cast<const uint4*>(gmem);
  *reinterpret_cast<uint4*>(smem) = v;
}
__device__ __forceinline__ void gc_cp_async_commit() {}
template <int N> __device__ __forceinline__ void gc_cp_async_wait() {}
#else
__device__ __forceinline__ unsigned gc_smem_addr(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// Copies 16 bytes, or writes 16 zero bytes when !valid (src is then not read).
__device__ __forceinline__ void gc_cp_async16(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(gc_smem_addr(smem)), "l"(gmem), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void gc_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N> __device__ __forceinline__ void gc_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
#endif
