// What the attention backward kernels share (attention_backward.cu on CUDA cores,
// attention_backward_mma.cu and attention_backward_wgmma.cu on tensor cores): the log-sum-exp in
// the base-2 units they recompute P in.
#pragma once
#include "attention.cuh"

#define GC_LOG2E 1.4426950408889634f

// A row's log-sum-exp in base-2 units; +∞ for a row that saw no key, so 2^(s − it) is 0 there.
__device__ __forceinline__ float gc_bwd_lse2(float lse) { return lse == GC_ATTN_NEG_INF ? __int_as_float(0x7f800000) : lse * GC_LOG2E; }
