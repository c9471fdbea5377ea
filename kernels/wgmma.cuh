// What the Hopper (sm_90a) wgmma kernels share: the shared-memory matrix descriptor of a
// 128-byte-swizzled tile, and the fence / commit / wait around asynchronous wgmma groups.
#pragma once

// A shared-memory matrix descriptor with the 128-byte swizzle (addresses and offsets in bytes).
__device__ __forceinline__ unsigned long long gc_wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

// Orders register and shared-memory writes before the wgmma that reads them.
__device__ __forceinline__ void gc_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes the group of wgmma issued since the last commit.
__device__ __forceinline__ void gc_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed groups are still running.
template <int N> __device__ __forceinline__ void gc_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
