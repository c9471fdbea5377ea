// Hopper (sm_90a) flash-attention forward for f16/bf16 at head dims 64 and 128, with wgmma.
//
// A block of GC_WARPGROUPS warpgroups owns 64 query rows per warpgroup of one (batch, head); K and
// V tiles of GC_BC keys stream through a GC_STAGES-deep ring of shared memory filled by cp.async in
// the 128-byte-swizzled layout wgmma's descriptors read (each tile stored as 64-column blocks
// of [rows][64], 16-byte chunk c of row r at chunk c ^ (r mod 8), as TMA's SWIZZLE_128B writes).
// Per tile and warpgroup: S = Q·Kᵀ is one chain of wgmma with both operands in shared memory
// (K-major), the softmax runs on the accumulators in registers exactly as in attention_mma.cu
// (a warp's 16 rows of the 64 × N accumulator have mma.sync's fragment layout), P is packed to
// 16 bits straight into A fragments, and O += P·V is a wgmma chain with A from registers and V
// through an N-major descriptor. The warpgroups of a block share the K/V ring; one's softmax
// overlaps tensor-core work of another block's (or warpgroup's) products.
//
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (64 or 128; the real head dim, whose
// rows are 16-byte aligned), GC_WARPGROUPS (1 or 2), GC_BC (64 or 128), GC_STAGES.
// Dynamic shared memory: 1024 (alignment) + (64·GC_WARPGROUPS + GC_STAGES·2·GC_BC)·D·2 bytes.
#include "attention_wgmma.cuh"
#include "cp_async.cuh"

namespace {

constexpr int STAGES = GC_STAGES;
constexpr int THREADS = 128 * GC_WARPGROUPS, BR = 64 * GC_WARPGROUPS;
constexpr int Q_BYTES = BR * DP * 2, KV_BYTES = BC * DP * 2, STAGE_BYTES = 2 * KV_BYTES;
static_assert(STAGES >= 2, "at least double buffering");

// Byte offset of 16-byte chunk `c` (along the head dim) of row `r` in a swizzled tile of `rows` rows.
__device__ __forceinline__ unsigned swizzled(int rows, int r, int c) {
  return (c / 8) * rows * ROW + r * ROW + (((c % 8) ^ (r % 8)) * 16);
}

// Copies rows [first, first + ROWS) of a [*, DP] matrix into a swizzled tile, zero-filling rows at or past `limit`.
template <int ROWS>
__device__ __forceinline__ void load_tile(unsigned char* dst, const T* __restrict__ src, int first, int limit) {
  constexpr int CHUNKS = ROWS * DP / 8;
#pragma unroll
  for (int f = threadIdx.x; f < CHUNKS; f += THREADS) {
    const int r = f / (DP / 8), c = f % (DP / 8);
    const int row = first + r;
    const bool ok = row < limit;
    gc_cp_async16(dst + swizzled(ROWS, r, c), ok ? src + (idx_t)row * DP + c * 8 : src, ok);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    attention_wgmma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                    float* __restrict__ lse, const int* __restrict__ key_lengths, int bh0, int heads, int group, int seq_q,
                    int seq_k, int d, float scale_log2, int causal) {
  extern __shared__ unsigned char smem_raw[];
  // The swizzle repeats every 1024 bytes: tiles start on such a boundary.
  unsigned char* const sq = smem_raw + ((1024u - (gc_smem_addr(smem_raw) & 1023u)) & 1023u);
  unsigned char* const ring = sq + Q_BYTES;

  const AttnBlock blk = gc_attn_block(bh0, heads, group, seq_q, seq_k, d, BR, key_lengths, causal);
  const int wg = threadIdx.x / 128, warp = (threadIdx.x % 128) / 32;
  const int wr0 = wg * 64 + warp * 16;  // the warp's first row within the block
  const int tiles = (blk.key_end + BC - 1) / BC;
  const T* kg = k + blk.kv_base;
  const T* vg = v + blk.kv_base;

  load_tile<BR>(sq, q + blk.q_base, blk.q0, seq_q);
  gc_cp_async_commit();
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < tiles) {
      load_tile<BC>(ring + s * STAGE_BYTES, kg, s * BC, seq_k);
      load_tile<BC>(ring + s * STAGE_BYTES + KV_BYTES, vg, s * BC, seq_k);
    }
    gc_cp_async_commit();
  }

  const unsigned q_addr = gc_smem_addr(sq) + wg * 64 * ROW;  // this warpgroup's rows in each column block
  float o[DP / 2];
#pragma unroll
  for (int i = 0; i < DP / 2; i++) o[i] = 0.f;
  float m[2] = {GC_ATTN_NEG_INF, GC_ATTN_NEG_INF}, l[2] = {0.f, 0.f};

  for (int j = 0; j < tiles; j++) {
    gc_cp_async_wait<STAGES - 2>();
    // This thread's cp.async writes become visible to wgmma's (async proxy) reads, then to everyone.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();  // tile j (and q) landed for everyone; tile j-1's stage is free
    {
      const int next = j + STAGES - 1;
      if (next < tiles) {
        unsigned char* st = ring + (next % STAGES) * STAGE_BYTES;
        load_tile<BC>(st, kg, next * BC, seq_k);
        load_tile<BC>(st + KV_BYTES, vg, next * BC, seq_k);
      }
      gc_cp_async_commit();
    }
    const unsigned k_addr = gc_smem_addr(ring + (j % STAGES) * STAGE_BYTES);
    const unsigned v_addr = k_addr + KV_BYTES;
    const int k0 = j * BC;

    float s[BC / 2];
    gc_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < DP / 16; kk++) wgmma_scores(s, kmajor_desc(q_addr, BR, kk), kmajor_desc(k_addr, BC, kk), kk > 0);
    gc_wgmma_commit();
    gc_wgmma_wait<0>();
    pin(s);

    // Only tiles that reach past the last valid key or cross this warp's causal diagonal need a mask.
    const bool masked = k0 + BC > blk.valid || (causal && k0 + BC - 1 > blk.q0 + wr0);
    unsigned pf[BC / 16][4];
    online_softmax(s, pf, o, m, l, blk.q0 + wr0, k0, blk.valid, causal, masked, scale_log2);

    gc_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BC / 16; kk++) wgmma_values(o, pf[kk], v_desc(v_addr, kk));
    gc_wgmma_commit();
    gc_wgmma_wait<0>();
    pin(o);
    pin(pf);
  }
  gc_cp_async_wait<0>();
  store_rows(out, lse, blk, blk.q0 + wr0, seq_q, o, m, l);
}
