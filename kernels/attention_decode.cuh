// Pieces shared by the split-key ("flash-decoding") attention forward kernels for few query rows
// against many keys: attention_decode.cu (CUDA cores, every dtype) and attention_decode_mma.cu
// (tensor cores, f16/bf16 on sm_80+).
//
// A block takes one k/v head of one batch entry, a tile of the query rows that read it and one
// chunk of its keys, so each K/V row is read once per chunk for all of those rows. The rows of a
// k/v head are the group·seq_q rows of its q heads; q is [B][Hq][Sq][D] and the q heads of one
// k/v head are consecutive, so they are contiguous in memory and packed row r of (batch, k/v
// head) pair p is global query row p·group·seq_q + r, at causal position r % seq_q.
//
// Grid: x = split · row_tiles + row tile, y = pair − pair0. With one split a block writes out and
// lse itself; with several it writes its rows' partial state in f32, base-2 units (reference
// maximum m, sum l of 2^(s − m), unnormalised o = Σ 2^(s − m)·v) at (row·splits + split), and
// attention_decode_combine merges the splits of each row. A block whose rows see no key of its
// chunk still writes its partial (m = −∞, l = 0, o = 0), so the merge reads every split.
#pragma once
#include "attention.cuh"

// Where one block works: its first packed row r0 and how many it has, its split, and its keys
// [k_begin, k_end) (k_end ≤ k_begin: none), already cut to the valid keys and, under the causal
// mask, to seq_q.
struct DecodeBlock {
  int r0, tile_rows, split, k_begin, k_end;
  idx_t row0;     // global query row of the tile's first row
  idx_t kv_base;  // element offset of the pair's k/v head
};

__device__ __forceinline__ DecodeBlock gc_decode_block(int pair0, int kv_heads, int group, int seq_q, int seq_k, int d, int tile_size,
                                                       int row_tiles, int chunk, const int* __restrict__ key_lengths, int causal) {
  DecodeBlock a;
  const int pair = pair0 + blockIdx.y;
  const int rows = group * seq_q;
  a.split = blockIdx.x / row_tiles;
  a.r0 = (blockIdx.x - a.split * row_tiles) * tile_size;
  a.tile_rows = min(tile_size, rows - a.r0);
  a.row0 = (idx_t)pair * rows + a.r0;
  a.kv_base = (idx_t)pair * seq_k * d;
  const int valid = gc_valid_keys(key_lengths, pair / kv_heads, seq_k);
  // Causal rows sit at positions below seq_q, so no key at or past seq_q is seen.
  const int extent = causal ? min(valid, seq_q) : valid;
  a.k_begin = a.split * chunk;
  a.k_end = min(a.k_begin + chunk, extent);
  return a;
}

// The keys packed row r of a block may see: [0, limit), limit ≤ the block's k_end.
__device__ __forceinline__ int gc_decode_limit(const DecodeBlock& blk, int r, int seq_q, int causal) {
  return causal ? min(blk.k_end, r % seq_q + 1) : blk.k_end;
}

// Where a block's results go: out and lse when the keys are not split, else the partials
// (part_ml: m and l of each (row, split); part_o: o of each, d floats).
struct DecodeOut {
  T* out;
  float* lse;
  float* part_ml;
  float* part_o;
  int splits, d;
};

// Column `col` of a row's result: acc / l (inv = 1/l, 0 for a row without keys) or the partial acc.
__device__ __forceinline__ void gc_decode_store_col(const DecodeOut& o, idx_t row, int split, int col, float acc, float inv) {
  if (col >= o.d) return;
  if (o.splits == 1) {
    o.out[row * o.d + col] = from_float<T>(acc * inv);
  } else {
    o.part_o[(row * o.splits + split) * o.d + col] = acc;
  }
}

// A row's statistics: its natural-log lse (−∞ without keys) or its partial m and l.
__device__ __forceinline__ void gc_decode_store_stats(const DecodeOut& o, idx_t row, int split, float m, float l) {
  if (o.splits == 1) {
    if (o.lse) o.lse[row] = gc_attn_lse(m, l);
  } else {
    float* p = o.part_ml + 2 * (row * o.splits + split);
    p[0] = m;
    p[1] = l;
  }
}

// Merges the `splits` partials of each of `rows` query rows, a warp per row (256 threads):
// M = max m_s, L = Σ 2^(m_s − M)·l_s, out = Σ 2^(m_s − M)·o_s / L, lse = (M + log2 L)·ln 2.
// A row no split saw a key of has M = −∞ and L = 0: out 0, lse −∞, as the other kernels write.
extern "C" __global__ void __launch_bounds__(256)
    attention_decode_combine(const float* __restrict__ part_ml, const float* __restrict__ part_o, T* __restrict__ out,
                             float* __restrict__ lse, idx_t rows, int splits, int d) {
  constexpr int COLS = (GC_HEAD_DIM + 31) / 32;  // columns per lane: lane + 32·u
  const idx_t row = (idx_t)blockIdx.x * 8 + threadIdx.x / 32;
  if (row >= rows) return;  // the whole warp
  const int lane = threadIdx.x % 32;
  const float* ml = part_ml + 2 * row * splits;
  const float* po = part_o + row * splits * d;

  float m = GC_ATTN_NEG_INF;
  for (int s = lane; s < splits; s += 32) m = fmaxf(m, ml[2 * s]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  const float base = m == GC_ATTN_NEG_INF ? 0.f : m;  // 2^(−∞ − 0) = 0 for splits without keys

  float sum = 0.f;
  float acc[COLS];
#pragma unroll
  for (int u = 0; u < COLS; u++) acc[u] = 0.f;
  for (int s = 0; s < splits; s++) {
    const float w = gc_exp2(ml[2 * s] - base);
    sum = fmaf(w, ml[2 * s + 1], sum);
#pragma unroll
    for (int u = 0; u < COLS; u++) {
      const int c = lane + 32 * u;
      if (c < d) acc[u] = fmaf(w, po[(idx_t)s * d + c], acc[u]);
    }
  }
  const float inv = gc_attn_inverse(sum);
#pragma unroll
  for (int u = 0; u < COLS; u++) {
    const int c = lane + 32 * u;
    if (c < d) out[row * d + c] = from_float<T>(acc[u] * inv);
  }
  if (lse && lane == 0) lse[row] = gc_attn_lse(m, sum);
}
