// Hopper (sm_90a) attention backward for f16/bf16 with wgmma and TMA, FlashAttention-2's
// algorithm in FlashAttention-3's warp-specialised form, at head dims that are multiples of 8 up
// to 128: compiled for 64 and 128, a smaller head dim padded up (TMA reads the columns past it as
// zeros, and only its own columns are stored).
//
//   attention_bwd_wgmma_prep: per query row, D = rowsum(dOut ∘ out) and the log-sum-exp in base-2
//     units, laid out per 64-row tile ([pair][tile][lse2 | D][64]; rows past the sequence +∞ and 0)
//     so a tile's statistics are read without bounds checks.
//   attention_bwd_wgmma: a block owns 128 keys of one (batch, k/v head) and walks 64-row query
//     tiles of every query head that reads that k/v head (under the causal mask, from the tile
//     holding its first key). Warpgroup 0 is the producer: one thread loads K and V once, then
//     each tile's Q and dOut into a two-stage ring (TMA, "full" and "empty" mbarriers).
//     Consumer warpgroups 1 and 2 own 64 keys each and, per tile (its statistics copied into
//     shared memory by cp.async one tile ahead):
//       Sᵀ = K·Qᵀ and dPᵀ = V·dOutᵀ (both operands K-major in shared memory),
//       Pᵀ = 2^(Sᵀ·scale·log2 e − lse2) (0 where masked), dSᵀ = Pᵀ ∘ (dPᵀ − D),
//       dV += Pᵀ·dOut (running while dSᵀ is computed) and dK += dSᵀ·Q (Pᵀ and dSᵀ from
//       registers, dOut and Q N-major),
//     with dK and dV in registers for the whole walk. dSᵀ also goes to shared memory (swizzled as
//     a wgmma operand, double-buffered), and after a barrier of the two consumers each computes
//     half the columns of dq = scale·dS·K over all 128 keys (dS read transposed from dSᵀ, K
//     N-major) into an f32 tile. A second producer warp adds that tile to the f32 dq accumulator
//     with bulk reductions (cp.reduce.async.bulk, one per row; no per-element atomics), handing it
//     back through "dq full" and "dq empty" mbarriers: the consumers wait only until the previous
//     tile has been read, never for the adds.
//
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (64 or 128).
// Parameters of attention_bwd_wgmma: the tensor maps of q and dOut ([batch·heads][seq_q][d],
// boxes of 64 columns × 64 rows) and of k and v ([batch·kv heads][seq_k][d], boxes of 64 × 128),
// the statistics, key lengths (or null), dq (f32, zeroed), dk, dv, pair0, heads, group, seq_q,
// seq_k, d (a multiple of 8, at most GC_HEAD_DIM), scale, causal.
// Grid: (ceil(seq_k / 128), pairs of (batch, k/v head)); block 384; dynamic shared memory as
// backwardSharedBytes of attention-backward-kernels.ts counts it (the layout of smem_layout).
#include "attention.cuh"
#include "attention_backward.cuh"
#include "attention_tc.cuh"
#include "attention_wgmma_ops.cuh"
#include "cp_async.cuh"
#include "hopper_pipeline.cuh"
#include "wgmma.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM;
constexpr int BC = 128;        // keys per block, 64 per consumer warpgroup
constexpr int BR = 64;         // query rows per tile
constexpr int STAGES = 2;
constexpr int ROW = 128;       // bytes of one swizzled row: 64 elements
constexpr int COL_BLOCKS = DP / 64;
constexpr int KV_BYTES = BC * DP * 2, TILE_BYTES = BR * DP * 2, STATS_BYTES = 2 * BR * 4;
constexpr int DS_BYTES = BC * BR * 2;
constexpr int DQ_LD = DP + 8;  // f32 row stride of the dq tile: 32 bytes of padding spread a warp's rows over the banks
constexpr int DQ_BYTES = BR * DQ_LD * 4;
constexpr int CONSUMER_WARPS = 8;
constexpr int DQ_COLS = DP / 2;  // dq columns per consumer warpgroup
constexpr int THREADS = 384, CONSUMER_THREADS = 256;
constexpr int PRODUCER_REGS = 24, CONSUMER_REGS = 240;
// Named barriers over the consumers (0 is __syncthreads): both halves of dSᵀ are stored; the
// first tile's statistics are.
constexpr int DS_BARRIER = 1, STATS_BARRIER = 2;
static_assert(DP == 64 || DP == 128, "head dims 64 and 128");
static_assert(128 * (PRODUCER_REGS + 2 * CONSUMER_REGS) <= 65536, "the register file holds every warpgroup's budget");

// The block's shared memory, from a 1024-byte-aligned base: K, V, the Q / dOut ring, two dSᵀ
// buffers, two buffers of statistics, the dq tile, then the mbarriers.
struct Smem {
  unsigned k, v, q, d_out, ds, stats, dq;
  unsigned kv_full, full, empty, dq_full, dq_empty;  // full + 8·s is stage s's barrier, as is empty + 8·s
  __device__ __forceinline__ unsigned q_stage(int s) const { return q + s * TILE_BYTES; }
  __device__ __forceinline__ unsigned d_out_stage(int s) const { return d_out + s * TILE_BYTES; }
  __device__ __forceinline__ unsigned ds_buffer(int it) const { return ds + (it & 1) * DS_BYTES; }
  __device__ __forceinline__ unsigned stats_buffer(int it) const { return stats + (it & 1) * STATS_BYTES; }
};

__device__ __forceinline__ Smem smem_layout(unsigned base) {
  Smem m;
  m.k = base;
  m.v = m.k + KV_BYTES;
  m.q = m.v + KV_BYTES;
  m.d_out = m.q + STAGES * TILE_BYTES;
  m.ds = m.d_out + STAGES * TILE_BYTES;
  m.stats = m.ds + 2 * DS_BYTES;
  m.dq = m.stats + 2 * STATS_BYTES;
  m.kv_full = m.dq + DQ_BYTES;
  m.full = m.kv_full + 8;
  m.empty = m.full + 8 * STAGES;
  m.dq_full = m.empty + 8 * STAGES;
  m.dq_empty = m.dq_full + 8;
  return m;
}

// Orders this thread's generic-proxy shared-memory writes before async-proxy reads (wgmma, bulk copies).
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Adds `bytes` of f32 from shared memory into global memory (element-wise reduction).
__device__ __forceinline__ void bulk_reduce_add(float* dst, unsigned src, unsigned bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}

// Where query tile `it` of a block's walk is: the query head (of the k/v head's group) and first row.
struct QueryTile {
  int h, q0;
};

__device__ __forceinline__ QueryTile query_tile(int it, int tiles_per_head, int first_tile, int hk, int group) {
  return {hk * group + it / tiles_per_head, (first_tile + it % tiles_per_head) * BR};
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256)
    attention_bwd_wgmma_prep(const T* __restrict__ out, const T* __restrict__ d_out, const float* __restrict__ lse, float* __restrict__ stats,
                             int pairs, int seq_q, int d) {
  const int tiles = (seq_q + BR - 1) / BR;
  const idx_t slot = (idx_t)blockIdx.x * 8 + threadIdx.x / 32;  // a warp per padded row
  if (slot >= (idx_t)pairs * tiles * BR) return;
  const int bh = (int)(slot / (tiles * BR)), i = (int)(slot % (tiles * BR));
  const int lane = threadIdx.x % 32;
  float sum = 0.f;
  const idx_t row = (idx_t)bh * seq_q + i;
  if (i < seq_q) {
    for (int x = lane; x < d; x += 32) sum = fmaf(to_float(out[row * d + x]), to_float(d_out[row * d + x]), sum);
  }
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) {
    float* tile = stats + ((idx_t)bh * tiles + i / BR) * 2 * BR;
    tile[i % BR] = i < seq_q ? gc_bwd_lse2(lse[row]) : __int_as_float(0x7f800000);
    tile[BR + i % BR] = sum;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    attention_bwd_wgmma(const __grid_constant__ GcTensorMap tm_q, const __grid_constant__ GcTensorMap tm_d_out,
                        const __grid_constant__ GcTensorMap tm_k, const __grid_constant__ GcTensorMap tm_v, const float* __restrict__ stats,
                        const int* __restrict__ key_lengths, float* __restrict__ dq, T* __restrict__ dk, T* __restrict__ dv, int pair0,
                        int heads, int group, int seq_q, int seq_k, int d, float scale, int causal) {
  extern __shared__ unsigned char smem_raw[];
  // TMA's 128-byte swizzle repeats every 1024 bytes: tiles start on such a boundary.
  const Smem sm = smem_layout((gc_smem_addr(smem_raw) + 1023u) & ~1023u);
  const int wg = threadIdx.x / 128;
  const int pair = pair0 + blockIdx.y;
  const int kv_heads = heads / group;
  const int b = pair / kv_heads, hk = pair % kv_heads;
  const int k0 = blockIdx.x * BC;
  const int valid = gc_valid_keys(key_lengths, b, seq_k);
  const int q_tiles = (seq_q + BR - 1) / BR;
  // Under the causal mask rows above the block's first key see none of its keys.
  const int first_tile = causal ? min(k0 / BR, q_tiles) : 0;
  const int tiles_per_head = q_tiles - first_tile;
  const int tiles = k0 < valid ? group * tiles_per_head : 0;

  if (threadIdx.x == 0) {
    gc_mbar_init(sm.kv_full, 1);
    for (int s = 0; s < STAGES; s++) {
      gc_mbar_init(sm.full + 8 * s, 1);
      gc_mbar_init(sm.empty + 8 * s, CONSUMER_WARPS);
    }
    gc_mbar_init(sm.dq_full, CONSUMER_WARPS);
    gc_mbar_init(sm.dq_empty, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
    if (threadIdx.x == 0 && tiles > 0) {
      gc_mbar_expect_tx(sm.kv_full, 2 * KV_BYTES);
#pragma unroll
      for (int cb = 0; cb < COL_BLOCKS; cb++) {
        gc_tma_load_3d(sm.k + cb * BC * ROW, &tm_k, sm.kv_full, cb * 64, k0, pair);
        gc_tma_load_3d(sm.v + cb * BC * ROW, &tm_v, sm.kv_full, cb * 64, k0, pair);
      }
      for (int it = 0; it < tiles; it++) {
        const int s = it % STAGES;
        const QueryTile tile = query_tile(it, tiles_per_head, first_tile, hk, group);
        const int bh = b * heads + tile.h;
        gc_mbar_wait(sm.empty + 8 * s, ((it / STAGES) & 1) ^ 1);
        gc_mbar_expect_tx(sm.full + 8 * s, 2 * TILE_BYTES);
#pragma unroll
        for (int cb = 0; cb < COL_BLOCKS; cb++) {
          gc_tma_load_3d(sm.q_stage(s) + cb * BR * ROW, &tm_q, sm.full + 8 * s, cb * 64, tile.q0, bh);
          gc_tma_load_3d(sm.d_out_stage(s) + cb * BR * ROW, &tm_d_out, sm.full + 8 * s, cb * 64, tile.q0, bh);
        }
      }
    } else if (threadIdx.x / 32 == 1) {
      // The dq reducer: adds each tile's rows (lanes take rows lane and lane + 32) once the
      // consumers stored them, and frees the tile once the copies have read it.
      const int lane = threadIdx.x % 32;
      for (int it = 0; it < tiles; it++) {
        const QueryTile tile = query_tile(it, tiles_per_head, first_tile, hk, group);
        gc_mbar_wait(sm.dq_full, it & 1);
        const idx_t row_base = ((idx_t)b * heads + tile.h) * seq_q + tile.q0;
        for (int r = lane; r < BR && tile.q0 + r < seq_q; r += 32) bulk_reduce_add(dq + (row_base + r) * d, sm.dq + r * DQ_LD * 4, d * 4);
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        __syncwarp();
        if (lane == 0) gc_mbar_arrive(sm.dq_empty);
      }
      // The reductions complete before the block exits.
      asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
  const int c = wg - 1, warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int keys0 = k0 + c * 64;  // the warpgroup's first key
  const float scale_log2 = scale * GC_LOG2E;

  // Threads 0-31 of the consumers copy a tile's statistics (32 chunks of 16 bytes) into buffer it & 1.
  const int ct = threadIdx.x - 128;
  auto fetch_stats = [&](int it) {
    const QueryTile tile = query_tile(it, tiles_per_head, first_tile, hk, group);
    const float* src = stats + ((idx_t)(b * heads + tile.h) * q_tiles + tile.q0 / BR) * 2 * BR;
    if (ct < STATS_BYTES / 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sm.stats_buffer(it) + ct * 16), "l"(src + ct * 4) : "memory");
    gc_cp_async_commit();
  };

  float acc_k[DP / 2], acc_v[DP / 2];
#pragma unroll
  for (int i = 0; i < DP / 2; i++) acc_k[i] = acc_v[i] = 0.f;

  if (tiles > 0) {
    fetch_stats(0);
    gc_cp_async_wait<0>();
    gc_named_sync<CONSUMER_THREADS>(STATS_BARRIER);
    gc_mbar_wait(sm.kv_full, 0);
  }
  for (int it = 0; it < tiles; it++) {
    const int s = it % STAGES;
    const QueryTile tile = query_tile(it, tiles_per_head, first_tile, hk, group);
    // The next tile's statistics, into the buffer tile it − 1 read before the last DS_BARRIER.
    if (it + 1 < tiles) fetch_stats(it + 1);
    gc_mbar_wait(sm.full + 8 * s, (it / STAGES) & 1);

    float sc[BR / 2], dp[BR / 2];
    gc_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < DP / 16; kk++) gc_attn_wgmma_ss(sc, gc_attn_kmajor_desc(sm.k + c * 64 * ROW, BC, kk), gc_attn_kmajor_desc(sm.q_stage(s), BR, kk), kk > 0);
    gc_wgmma_commit();
#pragma unroll
    for (int kk = 0; kk < DP / 16; kk++)
      gc_attn_wgmma_ss(dp, gc_attn_kmajor_desc(sm.v + c * 64 * ROW, BC, kk), gc_attn_kmajor_desc(sm.d_out_stage(s), BR, kk), kk > 0);
    gc_wgmma_commit();

    // Pᵀ: accumulator element 4n + 2h + e is key keys0 + 16·warp + g + 8h, query q0 + 8n + 2t + e.
    const float* lse2 = reinterpret_cast<const float*>(smem_raw + (sm.stats_buffer(it) - gc_smem_addr(smem_raw)));
    const float* delta = lse2 + BR;
    // Only tiles that reach past the last valid key or cross the causal diagonal need a mask.
    const bool masked = keys0 + 64 > valid || (causal && keys0 + 63 > tile.q0);
    gc_wgmma_wait<1>();
    gc_attn_pin(sc);
#pragma unroll
    for (int n = 0; n < BR / 8; n++) {
      const float2 l2 = *reinterpret_cast<const float2*>(lse2 + n * 8 + 2 * t);
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int key = keys0 + warp * 16 + g + 8 * h;
#pragma unroll
        for (int e = 0; e < 2; e++) {
          const float p = gc_exp2(fmaf(sc[4 * n + 2 * h + e], scale_log2, -(e ? l2.y : l2.x)));
          sc[4 * n + 2 * h + e] = masked && key >= gc_key_limit(tile.q0 + n * 8 + 2 * t + e, valid, causal) ? 0.f : p;
        }
      }
    }
    // Pᵀ as A fragments over the queries (k-step n / 2); dV += Pᵀ·dOut runs while dSᵀ is computed.
    unsigned pf[BR / 16][4], df[BR / 16][4];
#pragma unroll
    for (int n = 0; n < BR / 8; n++)
#pragma unroll
      for (int h = 0; h < 2; h++) pf[n / 2][(n % 2) * 2 + h] = gc_pack2(sc[4 * n + 2 * h], sc[4 * n + 2 * h + 1]);
    gc_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BR / 16; kk++) gc_attn_wgmma_rs(acc_v, pf[kk], gc_attn_nmajor_desc(sm.d_out_stage(s), BR, kk));
    gc_wgmma_commit();

    gc_wgmma_wait<1>();  // dPᵀ is complete; dV may still run
    gc_attn_pin(dp);
    // dSᵀ as A fragments, and into shared memory: row = key (warpgroup c's rows c·64...), the
    // 16-byte chunk of query 8n swizzled by the row.
#pragma unroll
    for (int n = 0; n < BR / 8; n++) {
      const float2 dl = *reinterpret_cast<const float2*>(delta + n * 8 + 2 * t);
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const unsigned ds = gc_pack2(sc[4 * n + 2 * h] * (dp[4 * n + 2 * h] - dl.x), sc[4 * n + 2 * h + 1] * (dp[4 * n + 2 * h + 1] - dl.y));
        df[n / 2][(n % 2) * 2 + h] = ds;
        const int row = c * 64 + warp * 16 + g + 8 * h;
        const unsigned at = sm.ds_buffer(it) + row * ROW + ((n ^ (row % 8)) * 16) + 4 * t;
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at), "r"(ds) : "memory");
      }
    }
    gc_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BR / 16; kk++) gc_attn_wgmma_rs(acc_k, df[kk], gc_attn_nmajor_desc(sm.q_stage(s), BR, kk));
    gc_wgmma_commit();

    // Both warpgroups' dSᵀ and the next tile's statistics are stored. Past this barrier both have
    // also finished the dq product of tile it − 1, the last reader of the dSᵀ buffer that tile
    // it + 1 writes, and read this tile's statistics, whose buffer tile it + 1 refills for it + 2.
    gc_cp_async_wait<0>();
    fence_async_shared();
    gc_named_sync<CONSUMER_THREADS>(DS_BARRIER);

    // This warpgroup's columns c·DQ_COLS... of dq = dS·K over the block's keys.
    float acc_q[DQ_COLS / 2];
    gc_wgmma_fence();
    const unsigned k_cols = sm.k + (c * DQ_COLS / 64) * BC * ROW + (c * DQ_COLS % 64) * 2;
#pragma unroll
    for (int kk = 0; kk < BC / 16; kk++) gc_attn_wgmma_tt(acc_q, gc_attn_nmajor_desc(sm.ds_buffer(it), BC, kk), gc_attn_nmajor_desc(k_cols, BC, kk), kk > 0);
    gc_wgmma_commit();
    gc_wgmma_wait<0>();
    gc_attn_pin(acc_q);
    gc_attn_pin(acc_k);
    gc_attn_pin(acc_v);
    gc_attn_pin(pf);
    gc_attn_pin(df);
    // Q and dOut of this stage are no longer read.
    if (lane == 0) gc_mbar_arrive(sm.empty + 8 * s);

    // The dq tile, once the reducer has read the previous one: row = query (warp·16 + g + 8h),
    // columns c·DQ_COLS + 8n + 2t.
    gc_mbar_wait(sm.dq_empty, (it & 1) ^ 1);
    const unsigned dq_tile = sm.dq;
#pragma unroll
    for (int n = 0; n < DQ_COLS / 8; n++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const unsigned at = dq_tile + ((warp * 16 + g + 8 * h) * DQ_LD + c * DQ_COLS + n * 8 + 2 * t) * 4;
        asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(acc_q[4 * n + 2 * h] * scale), "f"(acc_q[4 * n + 2 * h + 1] * scale)
                     : "memory");
      }
    fence_async_shared();
    __syncwarp();
    if (lane == 0) gc_mbar_arrive(sm.dq_full);
  }

  // dK (scaled) and dV of the warpgroup's keys: zeros where no query saw them.
  const idx_t kv_base = (idx_t)pair * seq_k * d;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int key = keys0 + warp * 16 + g + 8 * h;
    if (key >= seq_k) continue;
    T* dk_row = dk + kv_base + (idx_t)key * d;
    T* dv_row = dv + kv_base + (idx_t)key * d;
#pragma unroll
    for (int n = 0; n < DP / 8; n++) {
      const int col = n * 8 + 2 * t;
      // d is a multiple of 8, so a pair is wholly inside the row or wholly past it.
      if (col < d) {
        *reinterpret_cast<unsigned*>(dk_row + col) = gc_pack2(acc_k[4 * n + 2 * h] * scale, acc_k[4 * n + 2 * h + 1] * scale);
        *reinterpret_cast<unsigned*>(dv_row + col) = gc_pack2(acc_v[4 * n + 2 * h], acc_v[4 * n + 2 * h + 1]);
      }
    }
  }
}
