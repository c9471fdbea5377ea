// Inline-PTX wrappers for the sm_80+ tensor-core instructions the matmul kernels use, beside
// cp.async (cp_async.cuh): ldmatrix (shared → mma fragments, optionally transposed) and
// mma.sync (f16, bf16, tf32 inputs with f32 accumulation). No CUDA header is needed, so NVRTC 11.8 compiles them.
#pragma once

#include "cp_async.cuh"

// Four 8x8 b16 matrices; lane l gives the row address of matrix l/8, row l%8. The overloads
// taking a 32-bit shared-window address let a kernel keep its fragment addresses as one base plus
// immediates instead of converting a 64-bit generic pointer per load.
__device__ __forceinline__ void gc_ldmatrix_x4(unsigned (&r)[4], unsigned smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

__device__ __forceinline__ void gc_ldmatrix_x4_trans(unsigned (&r)[4], unsigned smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

__device__ __forceinline__ void gc_ldmatrix_x4(unsigned (&r)[4], const void* smem) { gc_ldmatrix_x4(r, gc_smem_addr(smem)); }

__device__ __forceinline__ void gc_ldmatrix_x4_trans(unsigned (&r)[4], const void* smem) { gc_ldmatrix_x4_trans(r, gc_smem_addr(smem)); }

// cp.async of 16 bytes to a 32-bit shared-window address (zero-filled, src not read, when !valid).
__device__ __forceinline__ void gc_cp_async16_at(unsigned smem_addr, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gmem), "r"(valid ? 16 : 0));
}

// The mma wrappers touch registers only, so they are not volatile: the compiler may interleave
// them with the (volatile, shared-memory-reading) ldmatrix of the next k-step.

// d += a·b for a 16x8x16 tile, a row-major and b column-major (k contiguous).
__device__ __forceinline__ void gc_mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void gc_mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// d += a·b for a 16x8x8 tf32 tile (operands already rounded with gc_to_tf32).
__device__ __forceinline__ void gc_mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// f32 → tf32, round to nearest (ties away), as cuBLAS's TF32 mode does.
__device__ __forceinline__ unsigned gc_to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
