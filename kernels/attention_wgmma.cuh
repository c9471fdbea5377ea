// Device helpers of the Hopper attention kernel (attention_wgmma.cu): shared-memory descriptors
// of the 128-byte-swizzled tiles, the two wgmma chains of one key tile, register pinning around
// asynchronous wgmma, the online softmax of a key tile and the output rows.
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (64 or 128), GC_BC (64 or 128).
#pragma once
#include "attention.cuh"
#include "attention_tc.cuh"
#include "attention_wgmma_ops.cuh"
#include "wgmma.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM, BC = GC_BC;
constexpr int ROW = 128;  // bytes of one swizzled row: 64 elements
static_assert(DP == 64 || DP == 128, "the Hopper kernels are built for head dims 64 and 128");
static_assert(BC == 64 || BC == 128, "key tiles of 64 or 128");

// K-major operand (Q, K) of `rows` rows: k-step kk is 64-column block kk/4, 32 bytes per step within it.
__device__ __forceinline__ unsigned long long kmajor_desc(unsigned base, int rows, int kk) {
  return gc_wgmma_desc(base + (kk / 4) * rows * ROW + (kk % 4) * 32, 16, 1024);
}

// N-major V: 64-column blocks of BC key rows (BC·128 bytes apart), a k-step is 16 key rows.
__device__ __forceinline__ unsigned long long v_desc(unsigned base, int kk) { return gc_wgmma_desc(base + kk * 16 * ROW, BC * ROW, 1024); }

__device__ __forceinline__ void wgmma_scores(float (&s)[BC / 2], unsigned long long da, unsigned long long db, int accumulate) {
#if GC_DTYPE == GC_F16 && GC_BC == 64
  gc_attn_wgmma_ss_n64_f16(s, da, db, accumulate);
#elif GC_DTYPE == GC_F16
  gc_attn_wgmma_ss_n128_f16(s, da, db, accumulate);
#elif GC_BC == 64
  gc_attn_wgmma_ss_n64_bf16(s, da, db, accumulate);
#else
  gc_attn_wgmma_ss_n128_bf16(s, da, db, accumulate);
#endif
}

__device__ __forceinline__ void wgmma_values(float (&o)[DP / 2], const unsigned (&a)[4], unsigned long long db) {
#if GC_DTYPE == GC_F16 && GC_HEAD_DIM == 64
  gc_attn_wgmma_rs_n64_f16(o, a, db);
#elif GC_DTYPE == GC_F16
  gc_attn_wgmma_rs_n128_f16(o, a, db);
#elif GC_HEAD_DIM == 64
  gc_attn_wgmma_rs_n64_bf16(o, a, db);
#else
  gc_attn_wgmma_rs_n128_bf16(o, a, db);
#endif
}

// Ties registers an asynchronous wgmma reads or writes to this point of the program, so the
// compiler neither reads accumulators before the wait nor reuses operand registers early.
template <int N> __device__ __forceinline__ void pin(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; i++) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> __device__ __forceinline__ void pin(unsigned (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) asm volatile("" : "+r"(r[i][j])::"memory");
}

// One key tile of the online softmax for a warp's 16 rows (first row `row0`): s[4n + 2h + e] is
// row g + 8h, key k0 + 8n + 2t + e (g = lane / 4, t = lane % 4). Scales and masks the scores,
// folds them into the running max `m` and sum `l`, packs P = exp2(S - max) into the A fragments
// of P·V (k-step n / 2) and rescales O.
__device__ __forceinline__ void online_softmax(float (&s)[BC / 2], unsigned (&pf)[BC / 16][4], float (&o)[DP / 2], float (&m)[2],
                                               float (&l)[2], int row0, int k0, int valid, int causal, bool masked,
                                               float scale_log2) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int limit = gc_key_limit(row0 + g + 8 * h, valid, causal);
    float mx = GC_ATTN_NEG_INF;
#pragma unroll
    for (int n = 0; n < BC / 8; n++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        float x = s[4 * n + 2 * h + e] * scale_log2;
        if (masked && k0 + n * 8 + 2 * t + e >= limit) x = GC_ATTN_NEG_INF;
        s[4 * n + 2 * h + e] = x;
        mx = fmaxf(mx, x);
      }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[h], mx);
    // A row with nothing visible yet keeps a zero base, so exp2 gives 0 rather than NaN.
    const float base = m_new == GC_ATTN_NEG_INF ? 0.f : m_new;
    const float corr = gc_exp2(m[h] - base);
    m[h] = m_new;
    float sum = 0.f;
#pragma unroll
    for (int n = 0; n < BC / 8; n++) {
      const float p0 = gc_exp2(s[4 * n + 2 * h] - base), p1 = gc_exp2(s[4 * n + 2 * h + 1] - base);
      sum += p0 + p1;
      pf[n / 2][(n % 2) * 2 + h] = gc_pack2(p0, p1);
    }
    l[h] = l[h] * corr + sum;
#pragma unroll
    for (int n = 0; n < DP / 8; n++) {
      o[4 * n + 2 * h] *= corr;
      o[4 * n + 2 * h + 1] *= corr;
    }
  }
}

// Writes a warp's 16 rows (first row `row0`) of out = O / sum, and their log-sum-exp.
__device__ __forceinline__ void store_rows(T* __restrict__ out, float* __restrict__ lse, const AttnBlock& blk, int row0, int seq_q,
                                           const float (&o)[DP / 2], const float (&m)[2], const float (&l)[2]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    float sum = l[h];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int row = row0 + g + 8 * h;
    if (row >= seq_q) continue;
    const float inv = gc_attn_inverse(sum);
    T* dst = out + blk.q_base + (idx_t)row * DP;
#pragma unroll
    for (int n = 0; n < DP / 8; n++) {
      *reinterpret_cast<unsigned*>(dst + n * 8 + 2 * t) = gc_pack2(o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
    }
    if (lse && t == 0) lse[(idx_t)blk.bh * seq_q + row] = gc_attn_lse(m[h], sum);
  }
}

}  // namespace
