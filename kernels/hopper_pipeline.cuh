// What the warp-specialised Hopper (sm_90a) kernels share (matmul_wgmma.cu, attention_wgmma.cu):
// the tensor map parameter, the mbarriers that hand ring stages between a TMA producer and the
// consumers, the 3-D TMA tile load, and named barriers that order subsets of a block's warps.
// Shared-memory addresses are 32-bit `shared::cta` addresses (gc_smem_addr).
#pragma once

// A CUtensorMap (128 opaque bytes, 64-byte aligned), passed by value as `const __grid_constant__`.
struct __align__(64) GcTensorMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ void gc_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

// The producer's arrival, announcing `bytes` of TMA transactions that complete the phase.
__device__ __forceinline__ void gc_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void gc_mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Waits until the phase of parity `parity` has completed (a fresh barrier counts its
// phase "before 0", parity 1, as complete).
__device__ __forceinline__ void gc_mbar_wait(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// Copies the box at coordinates (c0, c1, c2) of `map` into shared memory at `dst`, completing
// transaction bytes on mbarrier `bar`.
__device__ __forceinline__ void gc_tma_load_3d(unsigned dst, const GcTensorMap* map, unsigned bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// Named barrier `id` (0 is __syncthreads) over THREADS threads: waits for all of them.
template <int THREADS> __device__ __forceinline__ void gc_named_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}

// Counts the calling warps towards named barrier `id` (over THREADS threads) without waiting.
template <int THREADS> __device__ __forceinline__ void gc_named_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}
