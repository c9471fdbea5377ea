// FlashAttention-2 style forward for f16/bf16 on sm_80 and up (mma.sync m16n8k16, f32
// accumulation). A block of GC_WARPS warps owns BR = GC_WARPS·16·GC_M_TILES query rows of one
// (batch, head); each warp owns 16·GC_M_TILES of them end to end, so softmax statistics never
// leave a warp. K and V tiles of GC_BC keys stream through a GC_STAGES-deep ring of shared
// memory filled by cp.async, so the next tile's loads are in flight while the tensor cores work.
//
// Per tile and warp: S = Q·Kᵀ with Q's fragments in registers (GC_Q_REGS=1) or re-read from
// shared memory (0, fewer registers), K read with ldmatrix (k rows are head-dim contiguous, the
// "col" operand as stored); the scores are scaled, masked (only on tiles that cross the causal
// diagonal or the last valid key), and folded into the running max/sum; P = exp2(S - max) is
// repacked from the accumulator layout straight into A fragments (no shared memory round trip)
// and O += P·V reads V with ldmatrix.trans. Tiles wholly above the causal diagonal are skipped.
//
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (the head dim rounded up to a
// multiple of 16; padding columns read as zero), GC_WARPS, GC_M_TILES, GC_BC, GC_STAGES,
// GC_Q_REGS, GC_ALIGNED (1: rows of q/k/v are whole 16-byte chunks at 16-byte-aligned bases,
// so tiles load with cp.async; 0: element by element).
// Dynamic shared memory: (BR + GC_STAGES·2·GC_BC) · LD elements, LD = GC_HEAD_DIM + 8.
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

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if GC_DTYPE == GC_F16
  gc_mma_f16(d, a, b0, b1);
#else
  gc_mma_bf16(d, a, b0, b1);
#endif
}
static_assert(DP % 16 == 0 && BC % 16 == 0, "tiles are multiples of 16");
static_assert(STAGES >= 2, "at least double buffering");


// Copies `rows` rows of DP elements (the first `d` real, row stride `d` in global memory) from
// `src` into shared memory of stride LD, zero-filling rows past `limit` and columns past `d`.
template <int ROWS>
__device__ __forceinline__ void load_tile(T* dst, const T* __restrict__ src, int first, int limit, int d) {
  constexpr int CHUNKS = ROWS * DP / CHUNK;
#pragma unroll
  for (int f = threadIdx.x; f < CHUNKS; f += THREADS) {
    const int r = f / (DP / CHUNK), c = (f % (DP / CHUNK)) * CHUNK;
    const int row = first + r;
    T* to = dst + r * LD + c;
    const T* from = src + (idx_t)row * d + c;
    if (ALIGNED) {
      const bool ok = row < limit && c < d;
      gc_cp_async16(to, ok ? from : src, ok);
    } else {
      T e[CHUNK];
#pragma unroll
      for (int j = 0; j < CHUNK; j++) e[j] = row < limit && c + j < d ? from[j] : from_float<T>(0.f);
      *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(e);
    }
  }
}

// A fragments of Q rows [m_base, m_base + 16), head-dim columns [16·kk, 16·kk + 16).
__device__ __forceinline__ void q_fragment(unsigned (&f)[4], const T* sq, int m_base, int kk) {
  const int lane = threadIdx.x % 32;
  gc_ldmatrix_x4(f, sq + (m_base + lane % 16) * LD + kk * 16 + (lane / 16) * 8);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_mma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                  float* __restrict__ lse, const int* __restrict__ key_lengths, int bh0, int heads, int group, int seq_q,
                  int seq_k, int d, float scale_log2, int causal) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sq = reinterpret_cast<T*>(smem_raw);  // [BR][LD]
  T* ring = sq + BR * LD;                  // STAGES × ([BC][LD] of K, then [BC][LD] of V)

  const AttnBlock blk = gc_attn_block(bh0, heads, group, seq_q, seq_k, d, BR, key_lengths, causal);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;  // accumulator row group and column pair
  const int q8 = lane / 8, r8 = lane % 8;  // ldmatrix: which 8x8 matrix this lane addresses, and its row
  const int wr0 = warp * 16 * MI;          // the warp's first row within the block
  const int tiles = (blk.key_end + BC - 1) / BC;
  const T* kg = k + blk.kv_base;
  const T* vg = v + blk.kv_base;

  load_tile<BR>(sq, q + blk.q_base, blk.q0, seq_q, d);
  gc_cp_async_commit();
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < tiles) {
      T* st = ring + s * 2 * BC * LD;
      load_tile<BC>(st, kg, s * BC, seq_k, d);
      load_tile<BC>(st + BC * LD, vg, s * BC, seq_k, d);
    }
    gc_cp_async_commit();
  }

  unsigned qf[MI][KD][4];  // Q's A fragments, [m-tile][k-step]
  float o[MI][DP / 8][4];
  float m[MI][2], l[MI][2];
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      m[mi][h] = GC_ATTN_NEG_INF;
      l[mi][h] = 0.f;
    }
#pragma unroll
    for (int n = 0; n < DP / 8; n++)
#pragma unroll
      for (int j = 0; j < 4; j++) o[mi][n][j] = 0.f;
  }

  for (int j = 0; j < tiles; j++) {
    gc_cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile j (and q) landed for everyone; tile j-1's stage is free
    if (Q_REGS && j == 0) {
#pragma unroll
      for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int kk = 0; kk < KD; kk++) q_fragment(qf[mi][kk], sq, wr0 + mi * 16, kk);
    }
    {
      const int next = j + STAGES - 1;
      if (next < tiles) {
        T* st = ring + (next % STAGES) * 2 * BC * LD;
        load_tile<BC>(st, kg, next * BC, seq_k, d);
        load_tile<BC>(st + BC * LD, vg, next * BC, seq_k, d);
      }
      gc_cp_async_commit();
    }
    const T* sk = ring + (j % STAGES) * 2 * BC * LD;
    const T* sv = sk + BC * LD;
    const int k0 = j * BC;

    float s[MI][NS][4];
    unsigned pf[MI][NS / 2][4];  // P as the A fragments of P·V, one per 16 keys
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
        for (int mi = 0; mi < MI; mi++) q_fragment(qf[mi][kk], sq, wr0 + mi * 16, kk);
      }
#pragma unroll
      for (int nj = 0; nj < NS / 2; nj++) {
        unsigned b[4];
        gc_ldmatrix_x4(b, sk + (nj * 16 + (q8 / 2) * 8 + r8) * LD + kk * 16 + (q8 % 2) * 8);
#pragma unroll
        for (int mi = 0; mi < MI; mi++) {
          mma(s[mi][2 * nj], qf[mi][kk], b[0], b[1]);
          mma(s[mi][2 * nj + 1], qf[mi][kk], b[2], b[3]);
        }
      }
    }

    // Only tiles that reach past the last valid key or cross this warp's causal diagonal need a mask.
    const bool masked = k0 + BC > blk.valid || (causal && k0 + BC - 1 > blk.q0 + wr0);
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int row = blk.q0 + wr0 + mi * 16 + g + 8 * h;
        const int limit = gc_key_limit(row, blk.valid, causal);
        float mx = GC_ATTN_NEG_INF;
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
          for (int e = 0; e < 2; e++) {
            float x = s[mi][n][2 * h + e] * scale_log2;
            if (masked && k0 + n * 8 + 2 * t + e >= limit) x = GC_ATTN_NEG_INF;
            s[mi][n][2 * h + e] = x;
            mx = fmaxf(mx, x);
          }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m[mi][h], mx);
        // A row with nothing visible yet keeps a zero base, so exp2 gives 0 rather than NaN.
        const float base = m_new == GC_ATTN_NEG_INF ? 0.f : m_new;
        const float corr = gc_exp2(m[mi][h] - base);
        m[mi][h] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int n = 0; n < NS; n++) {
          const float p0 = gc_exp2(s[mi][n][2 * h] - base), p1 = gc_exp2(s[mi][n][2 * h + 1] - base);
          sum += p0 + p1;
          // The accumulators of score tiles 2kk and 2kk+1 are exactly the A fragment of k-step kk of
          // P·V: pack them to 16 bits at once, so the f32 scores die before V's product starts.
          pf[mi][n / 2][(n % 2) * 2 + h] = gc_pack2(p0, p1);
        }
        l[mi][h] = l[mi][h] * corr + sum;
#pragma unroll
        for (int n = 0; n < DP / 8; n++) {
          o[mi][n][2 * h] *= corr;
          o[mi][n][2 * h + 1] *= corr;
        }
      }
    }

    // O += P·V, V read with ldmatrix.trans (its rows are keys, contiguous along the head dim).
#pragma unroll
    for (int kk = 0; kk < BC / 16; kk++) {
#pragma unroll
      for (int nd = 0; nd < KD; nd++) {
        unsigned b[4];
        gc_ldmatrix_x4_trans(b, sv + (kk * 16 + (q8 % 2) * 8 + r8) * LD + nd * 16 + (q8 / 2) * 8);
#pragma unroll
        for (int mi = 0; mi < MI; mi++) {
          mma(o[mi][2 * nd], pf[mi][kk], b[0], b[1]);
          mma(o[mi][2 * nd + 1], pf[mi][kk], b[2], b[3]);
        }
      }
    }
  }
  gc_cp_async_wait<0>();

#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float sum = l[mi][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int row = blk.q0 + wr0 + mi * 16 + g + 8 * h;
      if (row >= seq_q) continue;
      const float inv = gc_attn_inverse(sum);
      T* dst = out + blk.q_base + (idx_t)row * d;
#pragma unroll
      for (int n = 0; n < DP / 8; n++) {
        const int col = n * 8 + 2 * t;
        const float x0 = o[mi][n][2 * h] * inv, x1 = o[mi][n][2 * h + 1] * inv;
        if (ALIGNED) {
          // d is a multiple of 8 here, so a pair is either wholly inside the row or wholly past it.
          if (col < d) *reinterpret_cast<unsigned*>(dst + col) = gc_pack2(x0, x1);
        } else {
          if (col < d) dst[col] = from_float<T>(x0);
          if (col + 1 < d) dst[col + 1] = from_float<T>(x1);
        }
      }
      if (lse && t == 0) lse[(idx_t)blk.bh * seq_q + row] = gc_attn_lse(m[mi][h], sum);
    }
  }
}
