// Hopper (sm_90a) flash-attention forward for f16/bf16 with wgmma and TMA, warp-specialised (the
// structure of FlashAttention-3), at head dims that are multiples of 8 up to 256: compiled for
// 64, 128, 192 and 256, a smaller head dim padded up (TMA reads the columns past it as zeros, and
// only its own columns are stored).
//
// A block owns 64·GC_CONSUMERS query rows of one (batch, head) and has GC_CONSUMERS + 1
// warpgroups. Warpgroup 0 is the producer: one thread loads Q once, then K and V tiles of
// GC_KEY_TILE keys with TMA into GC_STAGES-deep rings (K(j + 1) before V(j), the order the
// consumers need them), each stage guarded by a "full" mbarrier (transaction bytes) and an
// "empty" one (one arrival per consumer warp); setmaxnreg hands its registers to the consumers.
// The tensor maps are 3-D [batch·heads][seq][head dim], so rows past the sequence of a head (and
// columns past its head dim) read as zeros, and K/V are indexed by the kv head (grouped-query
// attention). Tile layout: 64-column blocks of [rows][128 B] with the 128-byte swizzle, the
// layout attention_wgmma.cuh's descriptors read.
//
// The grid is persistent: a block walks work items (a query block of one (batch, head)), so the
// producer loads the next item's K, V and Q while the consumers still finish and store the current
// one. Q has one buffer, freed by an "empty" mbarrier once every consumer's last S = Q·Kᵀ completed;
// ring positions and mbarrier phases run on across items. Items are numbered head by head, query
// blocks from the last (the longest under the causal mask) first, and dealt to blocks in snake order
// (round r takes items r·G ... r·G + G - 1, odd rounds backwards), so a block that drew a long causal
// item in one round draws a short one in the next while a round stays within a head. When a head
// has more query blocks than half the grid, rounds straddle heads and the deal loses its balance:
// the host then launches one block per item (wgmmaPersistent in attention-kernels.ts).
//
// Each consumer warpgroup owns 64 rows and never meets the others at a block barrier:
// - within a warpgroup, S(j) = Q·K(j)ᵀ and O += P(j-1)·V(j-1) are issued together; the softmax of
//   tile j runs while P·V(j-1) is still in flight, and O is rescaled once that product completed;
// - across warpgroups, named barriers hand the right to issue wgmma round-robin, so one
//   warpgroup's softmax runs while the next one's products occupy the tensor cores;
// - a warpgroup multiplies only the key tiles its own rows see (under the causal mask the block's
//   last tiles may lie wholly past its diagonal; rows past the sequence see none): it waits for
//   and releases the others without computing.
//
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (64, 128, 192 or 256), GC_KEY_TILE
// (64 to 128 in steps of 16; the rings must fit shared memory), GC_CONSUMERS (2 or 3), GC_STAGES.
// Parameters: the tensor maps of q, k, v (by value), out, lse (or null), key lengths (or null),
// pairs (batch·heads), heads, group (q heads per kv head), seq_q, seq_k, d (the head dim: at most
// GC_HEAD_DIM, a multiple of 8), scale·log2(e), causal.
// Grid: any number of blocks up to the item count ceil(seq_q / (64·GC_CONSUMERS))·pairs (one per SM
// is the persistent launch). Block: 128·(GC_CONSUMERS + 1).
// Dynamic shared memory: 1024 (alignment) + (64·GC_CONSUMERS + 2·GC_STAGES·GC_KEY_TILE)·GC_HEAD_DIM·2 + 8·(2 + 4·GC_STAGES) bytes.
#include "attention_wgmma.cuh"
#include "cp_async.cuh"
#include "hopper_pipeline.cuh"

namespace {

constexpr int CONSUMERS = GC_CONSUMERS, STAGES = GC_STAGES;
constexpr int THREADS = 128 * (CONSUMERS + 1), BR = 64 * CONSUMERS;
constexpr int Q_BYTES = BR * DP * 2, KV_BYTES = BC * DP * 2;
constexpr int COL_BLOCKS = DP / 64;
// Registers per thread after the hand-over: the block owns the whole register file (one block per SM).
constexpr int PRODUCER_REGS = CONSUMERS == 2 ? 24 : 32;
constexpr int CONSUMER_REGS = CONSUMERS == 2 ? 240 : 160;
// Named barriers 1.. order the consumers' wgmma issue (0 is __syncthreads).
constexpr int ISSUE_BARRIER = 1;
static_assert(CONSUMERS == 2 || CONSUMERS == 3, "two or three consumer warpgroups");
static_assert(STAGES >= 2, "at least double buffering");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "the register file holds every warpgroup's budget");

// The block's shared memory: Q, the K ring, the V ring, then the mbarriers.
struct Smem {
  unsigned q, k, v;
  unsigned q_full, q_empty, full_k, full_v, empty_k, empty_v;  // full_k + 8·s is stage s's barrier, and so on
  __device__ __forceinline__ unsigned k_stage(int s) const { return k + s * KV_BYTES; }
  __device__ __forceinline__ unsigned v_stage(int s) const { return v + s * KV_BYTES; }
};

__device__ __forceinline__ Smem smem_layout(unsigned base) {
  Smem m;
  m.q = base;
  m.k = m.q + Q_BYTES;
  m.v = m.k + STAGES * KV_BYTES;
  m.q_full = m.v + STAGES * KV_BYTES;
  m.q_empty = m.q_full + 8;
  m.full_k = m.q_empty + 8;
  m.full_v = m.full_k + 8 * STAGES;
  m.empty_k = m.full_v + 8 * STAGES;
  m.empty_v = m.empty_k + 8 * STAGES;
  return m;
}

// Ring positions count the block's key tiles over all its items: position g is stage g % STAGES in
// phase g / STAGES.

// Loads key tile j (rows j·BC...) of one of K and V into ring position g once the consumers freed the stage.
__device__ __forceinline__ void produce_tile(const GcTensorMap* map, unsigned stages, unsigned full, unsigned empty, int g, int j, int kv_bh) {
  const int s = g % STAGES;
  gc_mbar_wait(empty + 8 * s, ((g / STAGES) & 1) ^ 1);
  gc_mbar_expect_tx(full + 8 * s, KV_BYTES);
#pragma unroll
  for (int cb = 0; cb < COL_BLOCKS; cb++) gc_tma_load_3d(stages + s * KV_BYTES + cb * BC * ROW, map, full + 8 * s, cb * 64, j * BC, kv_bh);
}

// Waits until the tile at ring position g has landed.
__device__ __forceinline__ void await_tile(unsigned full, int g) { gc_mbar_wait(full + 8 * (g % STAGES), (g / STAGES) & 1); }

// Frees ring position g's stage: one arrival per consumer warp, after its wgmma reads completed.
__device__ __forceinline__ void release_tile(unsigned empty, int g) {
  if (threadIdx.x % 32 == 0) gc_mbar_arrive(empty + 8 * (g % STAGES));
}

// A tile this warpgroup does not multiply: freed once it landed, so arrivals keep the ring's phase order.
__device__ __forceinline__ void drain_tile(unsigned full, unsigned empty, int j) {
  await_tile(full, j);
  release_tile(empty, j);
}

// S = Q·Kᵀ for the warpgroup's 64 rows (Q at q_addr within its column blocks of BR rows) as one wgmma group.
__device__ __forceinline__ void issue_scores(float (&s)[BC / 2], unsigned q_addr, unsigned k_addr) {
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) gc_attn_wgmma_ss(s, gc_attn_kmajor_desc(q_addr, BR, kk), gc_attn_kmajor_desc(k_addr, BC, kk), kk > 0);
  gc_wgmma_commit();
}

// O += P·V as one wgmma group.
__device__ __forceinline__ void issue_values(float (&o)[DP / 2], const unsigned (&pf)[BC / 16][4], unsigned v_addr) {
#pragma unroll
  for (int kk = 0; kk < BC / 16; kk++) gc_attn_wgmma_rs(o, pf[kk], gc_attn_nmajor_desc(v_addr, BC, kk));
  gc_wgmma_commit();
}

// The right to issue wgmma passes from consumer c to c + 1 (round-robin): waiting for it, and passing it on.
__device__ __forceinline__ void await_turn(int c) { gc_named_sync<256>(ISSUE_BARRIER + c); }
__device__ __forceinline__ void pass_turn(int c) { gc_named_arrive<256>(ISSUE_BARRIER + (c + 1) % CONSUMERS); }

// The block's n-th work item in snake order (items at or past the count end the block's walk).
__device__ __forceinline__ int item_of(int n) {
  const int g = gridDim.x, round = n / 2;
  return round * 2 * g + (n % 2 == 0 ? (int)blockIdx.x : 2 * g - 1 - (int)blockIdx.x);
}

// The query block and (batch, head) of work item `item`: head by head, query blocks from the last.
__device__ __forceinline__ AttnBlock item_block(int item, int q_blocks, int heads, int seq_q, int seq_k, int d, const int* __restrict__ key_lengths,
                                                int causal) {
  AttnBlock a;
  a.bh = item / q_blocks;
  a.b = a.bh / heads;
  a.q0 = (q_blocks - 1 - (item - a.bh * q_blocks)) * BR;
  a.q_base = (idx_t)a.bh * seq_q * d;
  a.kv_base = 0;  // K and V are read through tensor maps
  a.valid = gc_valid_keys(key_lengths, a.b, seq_k);
  // Under the causal mask no row of the block sees a key past its last row: those tiles are skipped.
  a.key_end = causal ? min(a.valid, a.q0 + BR) : a.valid;
  return a;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    attention_wgmma(const __grid_constant__ GcTensorMap tm_q, const __grid_constant__ GcTensorMap tm_k,
                       const __grid_constant__ GcTensorMap tm_v, T* __restrict__ out, float* __restrict__ lse,
                       const int* __restrict__ key_lengths, int pairs, int heads, int group, int seq_q, int seq_k, int d,
                       float scale_log2, int causal) {
  extern __shared__ unsigned char smem_raw[];
  // TMA's 128-byte swizzle repeats every 1024 bytes: tiles start on such a boundary.
  const Smem sm = smem_layout((gc_smem_addr(smem_raw) + 1023u) & ~1023u);
  const int q_blocks = (seq_q + BR - 1) / BR, items = q_blocks * pairs;
  const int wg = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    gc_mbar_init(sm.q_full, 1);
    gc_mbar_init(sm.q_empty, 4 * CONSUMERS);
    for (int s = 0; s < STAGES; s++) {
      gc_mbar_init(sm.full_k + 8 * s, 1);
      gc_mbar_init(sm.full_v + 8 * s, 1);
      gc_mbar_init(sm.empty_k + 8 * s, 4 * CONSUMERS);
      gc_mbar_init(sm.empty_v + 8 * s, 4 * CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
    if (threadIdx.x == 0) {
      int ring = 0;  // ring position of the item's first key tile
      // The n-th item's Q is the Q buffer's phase n.
      for (int n = 0, item = item_of(0); item < items; item = item_of(++n)) {
        const AttnBlock blk = item_block(item, q_blocks, heads, seq_q, seq_k, d, key_lengths, causal);
        const int tiles = (blk.key_end + BC - 1) / BC;
        if (tiles == 0) {
          // Rows that see no key: nothing to load, but the phase passes (no transaction bytes).
          gc_mbar_wait(sm.q_empty, (n & 1) ^ 1);
          gc_mbar_arrive(sm.q_full);
          continue;
        }
        const int kv_bh = blk.b * (heads / group) + (blk.bh - blk.b * heads) / group;
        // K(0) first: its stage frees before the Q buffer does (after the previous item's last S).
        produce_tile(&tm_k, sm.k, sm.full_k, sm.empty_k, ring, 0, kv_bh);
        gc_mbar_wait(sm.q_empty, (n & 1) ^ 1);
        gc_mbar_expect_tx(sm.q_full, Q_BYTES);
#pragma unroll
        for (int cb = 0; cb < COL_BLOCKS; cb++) gc_tma_load_3d(sm.q + cb * BR * ROW, &tm_q, sm.q_full, cb * 64, blk.q0, blk.bh);
        for (int j = 0; j < tiles; j++) {
          if (j + 1 < tiles) produce_tile(&tm_k, sm.k, sm.full_k, sm.empty_k, ring + j + 1, j + 1, kv_bh);
          produce_tile(&tm_v, sm.v, sm.full_v, sm.empty_v, ring + j, j, kv_bh);
        }
        ring += tiles;
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
  const int c = wg - 1, warp = (threadIdx.x % 128) / 32;
  const unsigned q_addr = sm.q + c * 64 * ROW;  // the warpgroup's rows in each column block of Q
  // softmax_tile needs a nonzero scale (hidden scores are infinities it multiplies): 2^-100 in place
  // of 0 leaves every exponent within rounding of 0, so P and the log-sum-exp come out as for 0.
  const float scale = scale_log2 != 0.f ? scale_log2 : 0x1p-100f;
  // Issue slots: an item with `tiles` key tiles takes tiles + 1 of them (one when it has none), each
  // between await_turn and pass_turn; slot j issues S(j) and P·V(j-1) where the warpgroup's rows need
  // them. The last consumer lets the first one start the block's first item and skips only its very
  // last hand-over, so every wait on a named barrier meets exactly one arrival, and one consumer's
  // store of an item overlaps the others' products. Each wgmma group completes on the path that
  // issued it (ptxas serialises wgmma whose completion depends on a branch).
  if (c == CONSUMERS - 1 && item_of(0) < items) pass_turn(c);
  int ring = 0;  // as the producer counts it
  for (int n = 0, item = item_of(0); item < items; item = item_of(++n)) {
    const AttnBlock blk = item_block(item, q_blocks, heads, seq_q, seq_k, d, key_lengths, causal);
    const int tiles = (blk.key_end + BC - 1) / BC;
    const int rows0 = blk.q0 + c * 64;  // the warpgroup's first query row
    const int row0 = rows0 + warp * 16;  // the warp's
    // The key tiles this warpgroup's rows see; it only drains the item's later ones.
    const int own = rows0 >= seq_q ? 0 : ((causal ? min(blk.valid, rows0 + 64) : blk.valid) + BC - 1) / BC;
    float o[DP / 2];
#pragma unroll
    for (int i = 0; i < DP / 2; i++) o[i] = 0.f;
    float m[2] = {GC_ATTN_NEG_INF, GC_ATTN_NEG_INF}, l[2] = {0.f, 0.f};
    // Only tiles that reach past the last valid key or cross this warp's causal diagonal need a mask.
    auto masked = [&](int k0) { return k0 + BC > blk.valid || (causal && k0 + BC - 1 > row0); };
    auto pass = [&](int slot) {
      if (slot < tiles || c != CONSUMERS - 1 || item_of(n + 1) < items) pass_turn(c);
    };
    // Q's buffer is free for the next item once each consumer warp's last S completed (or it has none).
    auto release_q = [&]() {
      if (threadIdx.x % 32 == 0) gc_mbar_arrive(sm.q_empty);
    };

    if (tiles == 0) {
      await_turn(c);
      pass(0);
      gc_mbar_wait(sm.q_full, n & 1);
      release_q();
    } else {
      if (own > 0) {
        float s[BC / 2], corr[2];
        unsigned pf[BC / 16][4];
        await_turn(c);
        gc_mbar_wait(sm.q_full, n & 1);
        await_tile(sm.full_k, ring);
        gc_wgmma_fence();
        issue_scores(s, q_addr, sm.k_stage(ring % STAGES));
        pass(0);
        gc_wgmma_wait<0>();
        gc_attn_pin(s);
        release_tile(sm.empty_k, ring);
        if (own == 1) release_q();
        softmax_tile(s, m, l, corr, row0, 0, blk.valid, causal, masked(0), scale);
        pack_p(s, pf);  // O is still zero: nothing to rescale

        for (int j = 1; j < own; j++) {
          await_turn(c);
          await_tile(sm.full_k, ring + j);
          gc_wgmma_fence();
          issue_scores(s, q_addr, sm.k_stage((ring + j) % STAGES));
          await_tile(sm.full_v, ring + j - 1);
          gc_wgmma_fence();  // after the wait's branch: the fence must precede the chain in the same block
          issue_values(o, pf, sm.v_stage((ring + j - 1) % STAGES));
          pass(j);
          gc_wgmma_wait<1>();  // S(j) is complete, P·V(j-1) may still run
          gc_attn_pin(s);
          release_tile(sm.empty_k, ring + j);
          if (j == own - 1) release_q();
          softmax_tile(s, m, l, corr, row0, j * BC, blk.valid, causal, masked(j * BC), scale);
          gc_wgmma_wait<0>();
          gc_attn_pin(o);
          gc_attn_pin(pf);
          release_tile(sm.empty_v, ring + j - 1);
          rescale_o(o, corr);
          pack_p(s, pf);
        }

        // Slot `own`: the last P·V.
        await_turn(c);
        await_tile(sm.full_v, ring + own - 1);
        gc_wgmma_fence();
        issue_values(o, pf, sm.v_stage((ring + own - 1) % STAGES));
        pass(own);
        gc_wgmma_wait<0>();
        gc_attn_pin(o);
        gc_attn_pin(pf);
        release_tile(sm.empty_v, ring + own - 1);
        if (own < tiles) drain_tile(sm.full_k, sm.empty_k, ring + own);
      } else {
        await_turn(c);
        pass(0);
        // Q(item) landed, so the producer is done waiting for the previous item's arrivals: this one counts for this item.
        gc_mbar_wait(sm.q_full, n & 1);
        release_q();
        drain_tile(sm.full_k, sm.empty_k, ring);
      }
      // The item's tiles past this warpgroup's rows.
      for (int j = own + 1; j <= tiles; j++) {
        await_turn(c);
        pass(j);
        drain_tile(sm.full_v, sm.empty_v, ring + j - 1);
        if (j < tiles) drain_tile(sm.full_k, sm.empty_k, ring + j);
      }
      ring += tiles;
    }
    store_rows(out, lse, blk, row0, seq_q, d, o, m, l);
  }
}
