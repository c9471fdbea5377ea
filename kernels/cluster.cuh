// Thread-block clusters (sm_90+): the CTA's rank, the cluster barrier in its split form, and
// loads from another CTA's shared memory. Plain PTX 7.8, so NVRTC 11.8 compiles it for sm_90.
#pragma once
#include "cp_async.cuh"

__device__ __forceinline__ unsigned gc_cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

__device__ __forceinline__ unsigned gc_cluster_size() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}

// Arrive (release: this CTA's shared-memory writes become visible to the cluster) ...
__device__ __forceinline__ void gc_cluster_arrive() { asm volatile("barrier.cluster.arrive.aligned;\n" ::: "memory"); }
// ... and wait (acquire) for every thread of every CTA of the cluster to have arrived.
__device__ __forceinline__ void gc_cluster_wait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void gc_cluster_sync() {
  gc_cluster_arrive();
  gc_cluster_wait();
}

// The float at `p` in the shared memory of the cluster's CTA `rank`.
__device__ __forceinline__ float gc_cluster_load(const float* p, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(gc_smem_addr(p)), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

// The double at `p` in the shared memory of the cluster's CTA `rank`.
__device__ __forceinline__ double gc_cluster_load(const double* p, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(gc_smem_addr(p)), "r"(rank));
  double v;
  asm volatile("ld.shared::cluster.f64 %0, [%1];\n" : "=d"(v) : "r"(remote) : "memory");
  return v;
}
