// FlashAttention-2 style forward for f16/bf16 on sm_80 and up with two groups of four warps
// taking turns at the tensor cores (the tile pieces, softmax and module defines are described in
// attention_mma.cuh; GC_WARPS is 8). Warp w runs on scheduler w % 4, so each scheduler holds one
// warp of each group: while one group runs its softmax (exponentials, FP32 work), the other
// issues its matrix products, and the tensor cores are not left idle by both softmaxes at once.
//
// Group g's turn p ("phase p") is O += P(p−1)·V(p−1) then S(p) = Q·K(p)ᵀ; its softmax of S(p)
// follows outside the turn. Turns alternate through two named barriers (group 0 first): group 0
// starts phase p once group 1 has issued phase p − 1, group 1 once group 0 has issued phase p.
// Tiles wholly above the causal diagonal of the block are skipped.
//
// K/V tiles stream through a ring of GC_STAGES ≥ 3 stages with no block-wide barrier: at the
// start of its phase p each group loads its half of tile p + STAGES − 2 (whose stage last held
// tile p − 2, consumed by both groups' phases up to p − 1, which are finished by then), and before
// passing the turn it waits for its half of tile p + 1, which the turn barrier then publishes to
// the other group (and, one turn later, back to its own warps).
#include "attention_mma.cuh"

static_assert(WARPS == 8, "two groups of four warps");
static_assert(STAGES >= 3, "tiles load one phase ahead of a ring stage's release");

namespace {

constexpr int GROUP_THREADS = 128;
constexpr int TURN_BARRIER = 1;  // barriers 1 and 2: group g waits on 1 + g; 0 is __syncthreads

// Barrier ids as immediates (one branch each), so ptxas reserves only the barriers used.
__device__ __forceinline__ void await_turn(int group) {
  if (group == 0) asm volatile("bar.sync %0, %1;\n" ::"n"(TURN_BARRIER), "n"(THREADS) : "memory");
  else asm volatile("bar.sync %0, %1;\n" ::"n"(TURN_BARRIER + 1), "n"(THREADS) : "memory");
}

__device__ __forceinline__ void pass_turn(int group) {
  if (group == 0) asm volatile("bar.arrive %0, %1;\n" ::"n"(TURN_BARRIER + 1), "n"(THREADS) : "memory");
  else asm volatile("bar.arrive %0, %1;\n" ::"n"(TURN_BARRIER), "n"(THREADS) : "memory");
}

// This group's half of the K and V rows of tile `tile` into its ring stage.
__device__ __forceinline__ void load_half_tile(T* ring, const T* kg, const T* vg, int tile, int seq_k, int d, int group) {
  T* st = ring + (tile % STAGES) * STAGE + group * (BC / 2) * LD;
  const int first = tile * BC + group * (BC / 2);
  const int tid = threadIdx.x % GROUP_THREADS;
  load_tile<BC / 2, GROUP_THREADS>(st, kg, first, seq_k, d, tid);
  load_tile<BC / 2, GROUP_THREADS>(st + BC * LD, vg, first, seq_k, d, tid);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    attention_mma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                  float* __restrict__ lse, const int* __restrict__ key_lengths, int bh0, int heads, int group_size, int seq_q,
                  int seq_k, int d, float scale_log2, int causal) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sq = reinterpret_cast<T*>(smem_raw);  // [BR][LD]
  T* ring = sq + BR * LD;                  // STAGES × ([BC][LD] of K, then [BC][LD] of V)

  const AttnBlock blk = gc_attn_block(bh0, heads, group_size, seq_q, seq_k, d, BR, key_lengths, causal);
  const int warp = threadIdx.x / 32, group = warp / 4;
  const int wr0 = warp * 16 * MI;                   // the warp's first row within the block
  const int tiles = (blk.key_end + BC - 1) / BC;
  const float c = folded_scale(scale_log2);
  const T* kg = k + blk.kv_base;
  const T* vg = v + blk.kv_base;

  // Q and the first STAGES − 2 tiles (each group its half), published by one block barrier.
  load_tile<BR, THREADS>(sq, q + blk.q_base, blk.q0, seq_q, d, threadIdx.x);
  for (int s = 0; s < STAGES - 2 && s < tiles; s++) load_half_tile(ring, kg, vg, s, seq_k, d, group);
  gc_cp_async_commit();
  gc_cp_async_wait<0>();
  __syncthreads();
  if (scale_log2 < 0.f) negate_q_rows(sq, wr0);
  // This lane's ldmatrix addresses: the warp's Q rows, and stage 0's K and V tiles.
  const unsigned q_addr = gc_smem_addr(sq) + wr0 * LD * 2 + a_lane_offset();
  const unsigned k_addr = gc_smem_addr(ring) + b_lane_offset();
  const unsigned v_addr = gc_smem_addr(ring) + BC * LD * 2 + bt_lane_offset();
  unsigned qf[MI][KD][4];  // Q's A fragments, [m-tile][k-step]
  if (Q_REGS) load_q_fragments(qf, q_addr);

  RowState rows;
  init_rows(rows);
  unsigned pf[MI][NS / 2][4];  // P of the previous tile, as the A fragments of P·V
  if (group == 1) pass_turn(group);  // group 0 goes first

  // Phases 0..tiles: phase p multiplies P(p−1)·V(p−1) (p ≥ 1) and computes S(p) (p < tiles). A
  // warp whose rows all end before a tile still computes it (its P is zero): skipping it per warp
  // keeps the previous P alive beside S and spills.
  for (int p = 0; p < tiles; p++) {
    await_turn(group);
    if (p + STAGES - 2 < tiles) load_half_tile(ring, kg, vg, p + STAGES - 2, seq_k, d, group);
    gc_cp_async_commit();
    if (p > 0) accumulate_values(rows, pf, v_addr + (p - 1) % STAGES * STAGE * 2);
    const int k0 = p * BC;
    float s[MI][NS][4];
    tile_scores(s, qf, q_addr, k_addr + p % STAGES * STAGE * 2);
    gc_cp_async_wait<STAGES - 3>();  // this group's half of tile p + 1 landed (the newest group may still fly)
    pass_turn(group);
    // Only tiles that reach past the last valid key or cross this warp's causal diagonal need a mask.
    const bool masked = k0 + BC > blk.valid || (causal && k0 + BC - 1 > blk.q0 + wr0);
    online_softmax(s, pf, rows, masked, blk.q0 + wr0, k0, blk.valid, causal, c);
  }
  await_turn(group);
  if (tiles > 0) accumulate_values(rows, pf, v_addr + (tiles - 1) % STAGES * STAGE * 2);
  if (group == 0) pass_turn(group);  // group 1's last turn is passed to no one
  gc_cp_async_wait<0>();
  store_rows(rows, blk, wr0, out, lse, seq_q, d);
}
