// The pieces of the mma.sync (m16n8k16, f32 accumulation) flash-attention forward kernels for
// f16/bf16 on sm_80 and up: attention_mma.cu (every warp of a block in step) and
// attention_mma_pingpong.cu (two groups of warps taking turns at the tensor cores).
//
// A warp owns 16·GC_M_TILES query rows end to end, so softmax statistics never leave it. Per key
// tile of GC_BC keys: S = Q·Kᵀ with Q's A fragments in registers (GC_Q_REGS=1) or re-read from
// shared memory (0, fewer registers) and K read with ldmatrix (its rows are head-dim contiguous,
// the "col" operand as stored); the online softmax; P repacked from the accumulator layout
// straight into A fragments; O += P·V with V read by ldmatrix.trans.
//
// The softmax works in base-2 units with the scale folded into one FFMA per score:
// p = 2^(s·c − m), where c = |scale|·log2(e) and m is the row's reference maximum (scaled). A
// negative scale is applied by negating Q once in shared memory, so the maximum of the raw scores
// is always the maximum of the scaled ones. The reference maximum moves only when a tile's maximum
// exceeds it by more than RESCALE_THRESHOLD (then O and the row sum are rescaled, skipped for a
// whole warp when none of its rows needs it, which after the first tiles is the rule): p ≤
// 2^RESCALE_THRESHOLD in between, far inside f16/bf16 and f32 range, and out = O / sum is exact
// whatever reference is used.
//
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (the head dim rounded up to a
// multiple of 16; padding columns read as zero), GC_WARPS, GC_M_TILES, GC_BC, GC_STAGES,
// GC_Q_REGS, GC_ALIGNED (1: rows of q/k/v are whole 16-byte chunks at 16-byte-aligned bases, so
// tiles load with cp.async; 0: element by element).
// Dynamic shared memory: (BR + GC_STAGES·2·GC_BC) · LD elements, LD = GC_HEAD_DIM + 8: Q's BR
// rows, then a ring of stages each holding a K tile and a V tile.
#pragma once
#include "attention.cuh"
#include "attention_tc.cuh"
#include "matmul_mma.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM, WARPS = GC_WARPS, MI = GC_M_TILES, BC = GC_BC, STAGES = GC_STAGES;
constexpr bool Q_REGS = GC_Q_REGS, ALIGNED = GC_ALIGNED;
constexpr int THREADS = WARPS * 32;
constexpr int BR = WARPS * 16 * MI;
constexpr int KD = DP / 16;  // k-steps of Q·Kᵀ, and 16-column groups of O
constexpr int NS = BC / 8;   // 8-key score tiles per row block
// Row stride in shared memory: 16 bytes of padding make the 8 rows of an ldmatrix hit distinct banks.
constexpr int LD = DP + 8;
constexpr int CHUNK = 8;  // elements per 16-byte copy
constexpr int STAGE = 2 * BC * LD;  // elements of one ring stage: K tile, then V tile
// Base-2 units a tile's maximum may exceed the reference maximum before O is rescaled: p ≤ 256.
constexpr float RESCALE_THRESHOLD = 8.f;
static_assert(DP % 16 == 0 && BC % 16 == 0, "tiles are multiples of 16");

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if GC_DTYPE == GC_F16
  gc_mma_f16(d, a, b0, b1);
#else
  gc_mma_bf16(d, a, b0, b1);
#endif
}

// Byte offsets, within a tile of stride LD, of the row this lane addresses for ldmatrix: of a
// 16x16 A fragment (Q), of two 8-key B fragments (K, keys as rows), and of two 8-column B
// fragments of a transposed load (V, keys as rows).
__device__ __forceinline__ unsigned a_lane_offset() {
  const int lane = threadIdx.x % 32;
  return ((lane % 16) * LD + (lane / 16) * 8) * 2;
}
__device__ __forceinline__ unsigned b_lane_offset() {
  const int q8 = threadIdx.x % 32 / 8, r8 = threadIdx.x % 8;
  return (((q8 / 2) * 8 + r8) * LD + (q8 % 2) * 8) * 2;
}
__device__ __forceinline__ unsigned bt_lane_offset() {
  const int q8 = threadIdx.x % 32 / 8, r8 = threadIdx.x % 8;
  return (((q8 % 2) * 8 + r8) * LD + (q8 / 2) * 8) * 2;
}

// Thread `tid` of `LOADERS` copies its share of ROWS rows of DP elements (the first `d` real, row
// stride `d` in global memory, rows from `first`) into shared memory of stride LD, zero-filling
// rows past `limit` and columns past `d`.
template <int ROWS, int LOADERS>
__device__ __forceinline__ void load_tile(T* dst, const T* __restrict__ src, int first, int limit, int d, int tid) {
  constexpr int CHUNKS = ROWS * DP / CHUNK;
  const unsigned dst_addr = gc_smem_addr(dst);
#pragma unroll
  for (int f = tid; f < CHUNKS; f += LOADERS) {
    const int r = f / (DP / CHUNK), c = (f % (DP / CHUNK)) * CHUNK;
    const int row = first + r;
    T* to = dst + r * LD + c;
    const T* from = src + (idx_t)row * d + c;
    if (ALIGNED) {
      const bool ok = row < limit && c < d;
      gc_cp_async16_at(dst_addr + (r * LD + c) * 2, ok ? from : src, ok);
    } else {
      T e[CHUNK];
#pragma unroll
      for (int j = 0; j < CHUNK; j++) e[j] = row < limit && c + j < d ? from[j] : from_float<T>(0.f);
      *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(e);
    }
  }
}

// The folded scale c = |scale·log2(e)| (at least the smallest normal float, so a zero scale gives
// equal weights instead of 0·∞ on masked scores).
__device__ __forceinline__ float folded_scale(float scale_log2) { return fmaxf(fabsf(scale_log2), 1.17549435e-38f); }

// Negates the warp's own Q rows [row0, row0 + 16·MI) in shared memory (flipping sign bits), for a
// negative scale. The caller has made the rows visible to the warp; they are visible again after.
__device__ __forceinline__ void negate_q_rows(T* sq, int row0) {
  constexpr int CHUNKS = 16 * MI * DP / CHUNK;
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int f = lane; f < CHUNKS; f += 32) {
    uint4* p = reinterpret_cast<uint4*>(sq + (row0 + f / (DP / CHUNK)) * LD + (f % (DP / CHUNK)) * CHUNK);
    uint4 x = *p;
    x.x ^= 0x80008000u;
    x.y ^= 0x80008000u;
    x.z ^= 0x80008000u;
    x.w ^= 0x80008000u;
    *p = x;
  }
  __syncwarp();
}

// A fragments of m-tile mi, head-dim columns [16·kk, 16·kk + 16), of the warp's Q rows whose
// lane address (with a_lane_offset) is q_addr.
__device__ __forceinline__ void q_fragment(unsigned (&f)[4], unsigned q_addr, int mi, int kk) {
  gc_ldmatrix_x4(f, q_addr + (mi * 16 * LD + kk * 16) * 2);
}

__device__ __forceinline__ void load_q_fragments(unsigned (&qf)[MI][KD][4], unsigned q_addr) {
#pragma unroll
  for (int mi = 0; mi < MI; mi++)
#pragma unroll
    for (int kk = 0; kk < KD; kk++) q_fragment(qf[mi][kk], q_addr, mi, kk);
}

// Running state of a warp's rows: O accumulators, the reference maximum m (scaled, base 2) and
// the sum of the exponentials of each row, per m-tile and accumulator row half.
struct RowState {
  float o[MI][DP / 8][4];
  float m[MI][2], l[MI][2];
};

__device__ __forceinline__ void init_rows(RowState& st) {
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      st.m[mi][h] = GC_ATTN_NEG_INF;
      st.l[mi][h] = 0.f;
    }
#pragma unroll
    for (int n = 0; n < DP / 8; n++)
#pragma unroll
      for (int j = 0; j < 4; j++) st.o[mi][n][j] = 0.f;
  }
}

// s = Q·Kᵀ for the warp's Q rows (lane address q_addr) and the key tile at lane address k_addr
// (with b_lane_offset).
__device__ __forceinline__ void tile_scores(float (&s)[MI][NS][4], unsigned (&qf)[MI][KD][4], unsigned q_addr, unsigned k_addr) {
#pragma unroll
  for (int mi = 0; mi < MI; mi++)
#pragma unroll
    for (int n = 0; n < NS; n++)
#pragma unroll
      for (int e = 0; e < 4; e++) s[mi][n][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < KD; kk++) {
    // Without GC_Q_REGS the fragments of this k-step are read just before use, so they live briefly.
    if (!Q_REGS) {
#pragma unroll
      for (int mi = 0; mi < MI; mi++) q_fragment(qf[mi][kk], q_addr, mi, kk);
    }
#pragma unroll
    for (int nj = 0; nj < NS / 2; nj++) {
      unsigned b[4];
      gc_ldmatrix_x4(b, k_addr + (nj * 16 * LD + kk * 16) * 2);
#pragma unroll
      for (int mi = 0; mi < MI; mi++) {
        mma(s[mi][2 * nj], qf[mi][kk], b[0], b[1]);
        mma(s[mi][2 * nj + 1], qf[mi][kk], b[2], b[3]);
      }
    }
  }
}

// Folds the scores of keys [k0, k0 + BC) into the row state and leaves P = 2^(s·c − m) packed as
// the A fragments of P·V, one per 16 keys. `masked`: some score of the tile lies past a row's
// key limit (causal diagonal or last valid key); row0 is the warp's first absolute query row.
__device__ __forceinline__ void online_softmax(float (&s)[MI][NS][4], unsigned (&pf)[MI][NS / 2][4], RowState& st, bool masked, int row0,
                                               int k0, int valid, int causal, float c) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float x = GC_ATTN_NEG_INF;
      if (masked) {
        const int limit = gc_key_limit(row0 + mi * 16 + g + 8 * h, valid, causal);
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
          for (int e = 0; e < 2; e++)
            if (k0 + n * 8 + 2 * t + e >= limit) s[mi][n][2 * h + e] = GC_ATTN_NEG_INF;
      }
#pragma unroll
      for (int n = 0; n < NS; n++) x = fmaxf(x, fmaxf(s[mi][n][2 * h], s[mi][n][2 * h + 1]));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
      const float mx = x * c;  // c > 0: the scaled maximum; −∞ stays −∞
      // Rescale only when a row of the warp outgrew its reference; then every row takes its new maximum.
      // One vote per row half: the half's scores die as soon as its P is packed, which keeps them in registers.
      if (__any_sync(0xffffffffu, mx > st.m[mi][h] + RESCALE_THRESHOLD)) {
        const float m_new = fmaxf(st.m[mi][h], mx);
        // A row with nothing visible yet keeps −∞; its O and sum are zero, so any factor does.
        const float corr = gc_exp2(st.m[mi][h] - (m_new == GC_ATTN_NEG_INF ? 0.f : m_new));
        st.m[mi][h] = m_new;
        st.l[mi][h] *= corr;
#pragma unroll
        for (int n = 0; n < DP / 8; n++) {
          st.o[mi][n][2 * h] *= corr;
          st.o[mi][n][2 * h + 1] *= corr;
        }
      }
      // −∞ only while the row has seen no visible key; its scores are then all −∞ and p = 0.
      const float neg_base = st.m[mi][h] == GC_ATTN_NEG_INF ? 0.f : -st.m[mi][h];
      float sum = 0.f;
#pragma unroll
      for (int n = 0; n < NS; n++) {
        const float p0 = gc_exp2(fmaf(s[mi][n][2 * h], c, neg_base)), p1 = gc_exp2(fmaf(s[mi][n][2 * h + 1], c, neg_base));
        sum += p0 + p1;
        // The accumulators of score tiles 2kk and 2kk+1 are exactly the A fragment of k-step kk of
        // P·V: pack them to 16 bits at once, so the f32 scores die before V's product starts.
        pf[mi][n / 2][(n % 2) * 2 + h] = gc_pack2(p0, p1);
      }
      st.l[mi][h] += sum;
    }
  }
}

// O += P·V for the value tile at lane address v_addr (with bt_lane_offset; its rows are keys,
// contiguous along the head dim).
__device__ __forceinline__ void accumulate_values(RowState& st, const unsigned (&pf)[MI][NS / 2][4], unsigned v_addr) {
#pragma unroll
  for (int kk = 0; kk < BC / 16; kk++) {
#pragma unroll
    for (int nd = 0; nd < KD; nd++) {
      unsigned b[4];
      gc_ldmatrix_x4_trans(b, v_addr + (kk * 16 * LD + nd * 16) * 2);
#pragma unroll
      for (int mi = 0; mi < MI; mi++) {
        mma(st.o[mi][2 * nd], pf[mi][kk], b[0], b[1]);
        mma(st.o[mi][2 * nd + 1], pf[mi][kk], b[2], b[3]);
      }
    }
  }
}

// Writes out = O / sum for the warp's rows (from the block-relative row0) and their log-sum-exp.
__device__ __forceinline__ void store_rows(const RowState& st, const AttnBlock& blk, int row0, T* __restrict__ out, float* __restrict__ lse,
                                           int seq_q, int d) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float sum = st.l[mi][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int row = blk.q0 + row0 + mi * 16 + g + 8 * h;
      if (row >= seq_q) continue;
      const float inv = gc_attn_inverse(sum);
      T* dst = out + blk.q_base + (idx_t)row * d;
#pragma unroll
      for (int n = 0; n < DP / 8; n++) {
        const int col = n * 8 + 2 * t;
        const float x0 = st.o[mi][n][2 * h] * inv, x1 = st.o[mi][n][2 * h + 1] * inv;
        if (ALIGNED) {
          // d is a multiple of 8 here, so a pair is either wholly inside the row or wholly past it.
          if (col < d) *reinterpret_cast<unsigned*>(dst + col) = gc_pack2(x0, x1);
        } else {
          if (col < d) dst[col] = from_float<T>(x0);
          if (col + 1 < d) dst[col + 1] = from_float<T>(x1);
        }
      }
      if (lse && t == 0) lse[(idx_t)blk.bh * seq_q + row] = gc_attn_lse(st.m[mi][h], sum);
    }
  }
}

}  // namespace
