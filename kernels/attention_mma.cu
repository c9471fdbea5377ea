// FlashAttention-2 style forward for f16/bf16 on sm_80 and up, every warp of the block in step
// (the tile pieces, softmax and module defines are described in attention_mma.cuh). A block of
// GC_WARPS warps owns BR = GC_WARPS·16·GC_M_TILES query rows of one (batch, head). K and V tiles
// stream through a GC_STAGES-deep ring of shared memory filled by cp.async, one block barrier per
// tile, so the next tiles' loads are in flight while the tensor cores work. Tiles wholly above
// the causal diagonal are skipped for the block, and for a warp whose rows all end before them.
#include "attention_mma.cuh"

static_assert(STAGES >= 2, "at least double buffering");

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_mma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                  float* __restrict__ lse, const int* __restrict__ key_lengths, int bh0, int heads, int group, int seq_q,
                  int seq_k, int d, float scale_log2, int causal) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sq = reinterpret_cast<T*>(smem_raw);  // [BR][LD]
  T* ring = sq + BR * LD;                  // STAGES × ([BC][LD] of K, then [BC][LD] of V)

  const AttnBlock blk = gc_attn_block(bh0, heads, group, seq_q, seq_k, d, BR, key_lengths, causal);
  const int warp = threadIdx.x / 32;
  const int wr0 = warp * 16 * MI;                 // the warp's first row within the block
  const int last_row = blk.q0 + wr0 + 16 * MI - 1;  // the warp's last row (absolute)
  const int tiles = (blk.key_end + BC - 1) / BC;
  const float c = folded_scale(scale_log2);
  const T* kg = k + blk.kv_base;
  const T* vg = v + blk.kv_base;

  load_tile<BR, THREADS>(sq, q + blk.q_base, blk.q0, seq_q, d, threadIdx.x);
  gc_cp_async_commit();
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < tiles) {
      T* st = ring + s * STAGE;
      load_tile<BC, THREADS>(st, kg, s * BC, seq_k, d, threadIdx.x);
      load_tile<BC, THREADS>(st + BC * LD, vg, s * BC, seq_k, d, threadIdx.x);
    }
    gc_cp_async_commit();
  }

  // This lane's ldmatrix addresses: the warp's Q rows, and stage 0's K and V tiles.
  const unsigned q_addr = gc_smem_addr(sq) + wr0 * LD * 2 + a_lane_offset();
  const unsigned k_addr = gc_smem_addr(ring) + b_lane_offset();
  const unsigned v_addr = gc_smem_addr(ring) + BC * LD * 2 + bt_lane_offset();
  unsigned qf[MI][KD][4];  // Q's A fragments, [m-tile][k-step]
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
        load_tile<BC, THREADS>(st, kg, next * BC, seq_k, d, threadIdx.x);
        load_tile<BC, THREADS>(st + BC * LD, vg, next * BC, seq_k, d, threadIdx.x);
      }
      gc_cp_async_commit();
    }
    const int k0 = j * BC;
    if (causal && k0 > last_row) continue;  // every score of the tile is masked for this warp's rows
    const unsigned stage = (j % STAGES) * STAGE * 2;

    float s[MI][NS][4];
    unsigned pf[MI][NS / 2][4];  // P as the A fragments of P·V, one per 16 keys
    tile_scores(s, qf, q_addr, k_addr + stage);
    // Only tiles that reach past the last valid key or cross this warp's causal diagonal need a mask.
    const bool masked = k0 + BC > blk.valid || (causal && k0 + BC - 1 > blk.q0 + wr0);
    online_softmax(s, pf, rows, masked, blk.q0 + wr0, k0, blk.valid, causal, c);
    accumulate_values(rows, pf, v_addr + stage);
  }
  gc_cp_async_wait<0>();
  store_rows(rows, blk, wr0, out, lse, seq_q, d);
}
