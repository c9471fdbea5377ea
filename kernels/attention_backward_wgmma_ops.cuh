// wgmma.mma_async wrapper of the Hopper attention backward (attention_backward_wgmma.cu) that the
// forward's (attention_wgmma_ops.cuh) lacks: both operands from shared memory and both transposed
// (M-major A, N-major B), for dq = dS·K with dS read from the stored dSᵀ. N = 32 or 64 (half the
// head dim of 64 or 128), overloaded on the accumulator length N / 2. The element types come from
// GC_DTYPE, so one function serves f16 and bf16.
// `accumulate` 0 overwrites the accumulators (the first k-step), 1 adds to them.
#pragma once

#if GC_DTYPE == GC_F16
#define GC_BWD_WGMMA_AB "f16.f16"
#else
#define GC_BWD_WGMMA_AB "bf16.bf16"
#endif

__device__ __forceinline__ void gc_bwd_wgmma_tt(float (&d)[16], unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." GC_BWD_WGMMA_AB " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ __forceinline__ void gc_bwd_wgmma_tt(float (&d)[32], unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." GC_BWD_WGMMA_AB " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
