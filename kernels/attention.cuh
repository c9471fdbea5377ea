// Pieces shared by the attention forward kernels (attention_simt.cu, attention_mma.cu).
//
// Both kernels take the same arguments and launch the same way: blockIdx.x walks the query
// tiles from the last to the first (under a causal mask the last tiles see the most keys, so the
// longest blocks start first), blockIdx.y + bh0 is the (batch, head) pair. Scores are kept in
// base-2 units (scale·log2(e)·q·k) so each exponential is one ex2 instruction; the row's
// log-sum-exp is converted back to natural log on store.
#pragma once
#include "dtype.cuh"

#define GC_ATTN_NEG_INF __int_as_float(0xff800000)

// Keys of batch entry b that are not padding: clamp(key_lengths[b], 0, seq_k), or all of them.
__device__ __forceinline__ int gc_valid_keys(const int* __restrict__ key_lengths, int b, int seq_k) {
  if (!key_lengths) return seq_k;
  return min(max(key_lengths[b], 0), seq_k);
}

// Keys a query row may see: [0, limit). Causal masks are PyTorch's is_causal (top-left aligned).
__device__ __forceinline__ int gc_key_limit(int row, int valid, int causal) { return causal ? min(valid, row + 1) : valid; }

// Where one block works: its (batch, head), first query row, the offsets of its q/out rows and of
// its k/v head, and how many keys any of its rows may see.
struct AttnBlock {
  int b, bh, q0, valid, key_end;
  idx_t q_base, kv_base;
};

__device__ __forceinline__ AttnBlock gc_attn_block(int bh0, int heads, int group, int seq_q, int seq_k, int d, int rows,
                                                   const int* __restrict__ key_lengths, int causal) {
  AttnBlock a;
  a.bh = bh0 + blockIdx.y;
  a.b = a.bh / heads;
  const int h = a.bh - a.b * heads;
  const int kv_heads = heads / group;
  a.q0 = (gridDim.x - 1 - blockIdx.x) * rows;
  a.q_base = (idx_t)a.bh * seq_q * d;
  a.kv_base = ((idx_t)a.b * kv_heads + h / group) * seq_k * d;
  a.valid = gc_valid_keys(key_lengths, a.b, seq_k);
  // Under the causal mask no row of the block sees a key past its last row: those tiles are skipped.
  a.key_end = causal ? min(a.valid, a.q0 + rows) : a.valid;
  return a;
}

// Final step of a row: out = acc / sum (0 when the row saw no key) and its natural-log lse.
__device__ __forceinline__ float gc_attn_inverse(float sum) { return sum > 0.f ? 1.f / sum : 0.f; }

__device__ __forceinline__ float gc_attn_lse(float max2, float sum) {
  return sum > 0.f ? (max2 + log2f(sum)) * 0.6931471805599453f : GC_ATTN_NEG_INF;
}
