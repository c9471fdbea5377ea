// Split-key attention forward on tensor cores (f16/bf16, sm_80+) for few query rows against many
// keys: the mma.sync pieces of attention_mma.cuh (S = Q·Kᵀ, online softmax, O += P·V) run over
// one chunk of keys, with the block mapping, partial results and their merge of
// attention_decode.cuh. A block of four warps owns 64 packed query rows, 16 a warp (a warp whose
// rows all lie past the k/v head's rows only helps load), and streams its chunk's K and V tiles
// through a two-stage cp.async ring as attention_mma.cu does.
//
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (the head dim rounded up to a
// multiple of 16), GC_ALIGNED (q/k/v rows are whole 16-byte chunks at 16-byte-aligned bases).
// The tile shape is fixed here: 4 warps of one m-tile, 64-key tiles (32 above head dim 128, for
// the registers), 2 stages, Q fragments in registers. Dynamic shared memory (the host computes it
// too): (64 + 2·2·BC)·(GC_HEAD_DIM + 8) 16-bit elements.
#define GC_WARPS 4
#define GC_M_TILES 1
#define GC_BC (GC_HEAD_DIM > 128 ? 32 : 64)
#define GC_STAGES 2
#define GC_Q_REGS 1
#include "attention_mma.cuh"
#include "attention_decode.cuh"

namespace {

// Masks the scores of keys [k0, k0 + BC) that a row may not see; row0 is the warp's first packed row.
__device__ __forceinline__ void mask_scores(float (&s)[MI][NS][4], const DecodeBlock& blk, int row0, int k0, int seq_q, int causal) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int limit = gc_decode_limit(blk, row0 + mi * 16 + g + 8 * h, seq_q, causal);
#pragma unroll
      for (int n = 0; n < NS; n++)
#pragma unroll
        for (int e = 0; e < 2; e++)
          if (k0 + n * 8 + 2 * t + e >= limit) s[mi][n][2 * h + e] = GC_ATTN_NEG_INF;
    }
  }
}

// Writes the warp's rows (from the block-relative row wr0): out and lse, or their partials.
__device__ __forceinline__ void store_decode_rows(const RowState& st, const DecodeBlock& blk, int wr0, const DecodeOut& dst) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float sum = st.l[mi][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int r = wr0 + mi * 16 + g + 8 * h;
      if (r >= blk.tile_rows) continue;
      const idx_t row = blk.row0 + r;
      const float inv = gc_attn_inverse(sum);
#pragma unroll
      for (int n = 0; n < DP / 8; n++) {
        const int col = n * 8 + 2 * t;
        gc_decode_store_col(dst, row, blk.split, col, st.o[mi][n][2 * h], inv);
        gc_decode_store_col(dst, row, blk.split, col + 1, st.o[mi][n][2 * h + 1], inv);
      }
      if (t == 0) gc_decode_store_stats(dst, row, blk.split, st.m[mi][h], sum);
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_decode_mma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                         float* __restrict__ lse, float* __restrict__ part_ml, float* __restrict__ part_o,
                         const int* __restrict__ key_lengths, int pair0, int kv_heads, int group, int seq_q, int seq_k, int d,
                         int row_tiles, int splits, int chunk, float scale_log2, int causal) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sq = reinterpret_cast<T*>(smem_raw);  // [BR][LD]
  T* ring = sq + BR * LD;                  // STAGES × ([BC][LD] of K, then [BC][LD] of V)

  const DecodeBlock blk = gc_decode_block(pair0, kv_heads, group, seq_q, seq_k, d, BR, row_tiles, chunk, key_lengths, causal);
  const int warp = threadIdx.x / 32;
  const int wr0 = warp * 16 * MI;            // the warp's first row within the block
  const bool active = wr0 < blk.tile_rows;  // the same for the whole warp
  const int tiles = blk.k_end > blk.k_begin ? (blk.k_end - blk.k_begin + BC - 1) / BC : 0;
  const float c = folded_scale(scale_log2);
  const T* kg = k + blk.kv_base;
  const T* vg = v + blk.kv_base;

  load_tile<BR, THREADS>(sq, q + blk.row0 * d, 0, blk.tile_rows, d, threadIdx.x);
  gc_cp_async_commit();
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < tiles) {
      T* st = ring + s * STAGE;
      load_tile<BC, THREADS>(st, kg, blk.k_begin + s * BC, blk.k_end, d, threadIdx.x);
      load_tile<BC, THREADS>(st + BC * LD, vg, blk.k_begin + s * BC, blk.k_end, d, threadIdx.x);
    }
    gc_cp_async_commit();
  }

  // This lane's ldmatrix addresses: the warp's Q rows, and stage 0's K and V tiles.
  const unsigned q_addr = gc_smem_addr(sq) + wr0 * LD * 2 + a_lane_offset();
  const unsigned k_addr = gc_smem_addr(ring) + b_lane_offset();
  const unsigned v_addr = gc_smem_addr(ring) + BC * LD * 2 + bt_lane_offset();
  unsigned qf[MI][KD][4];
  RowState rows;
  init_rows(rows);

  for (int j = 0; j < tiles; j++) {
    gc_cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile j (and q) landed for everyone; tile j-1's stage is free
    if (j == 0) {
      if (scale_log2 < 0.f) negate_q_rows(sq, wr0);
      if (Q_REGS) load_q_fragments(qf, q_addr);
    }
    {
      const int next = j + STAGES - 1;
      if (next < tiles) {
        T* st = ring + (next % STAGES) * STAGE;
        load_tile<BC, THREADS>(st, kg, blk.k_begin + next * BC, blk.k_end, d, threadIdx.x);
        load_tile<BC, THREADS>(st + BC * LD, vg, blk.k_begin + next * BC, blk.k_end, d, threadIdx.x);
      }
      gc_cp_async_commit();
    }
    if (!active) continue;
    const int k0 = blk.k_begin + j * BC;
    const unsigned stage = (j % STAGES) * STAGE * 2;

    float s[MI][NS][4];
    unsigned pf[MI][NS / 2][4];  // P as the A fragments of P·V, one per 16 keys
    tile_scores(s, qf, q_addr, k_addr + stage);
    // Keys past the chunk's end (zeros in the tile) and, under the causal mask, past a row's position.
    if (causal || k0 + BC > blk.k_end) mask_scores(s, blk, blk.r0 + wr0, k0, seq_q, causal);
    online_softmax(s, pf, rows, false, 0, 0, 0, 0, c);
    accumulate_values(rows, pf, v_addr + stage);
  }
  gc_cp_async_wait<0>();
  if (active) store_decode_rows(rows, blk, wr0, DecodeOut{out, lse, part_ml, part_o, splits, d});
}
