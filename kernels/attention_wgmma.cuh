// Device helpers of the Hopper attention kernel (attention_wgmma.cu): the online softmax of a key
// tile and the output rows.
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (64, 128, 192 or 256: the head dim
// padded up, the padding columns reading as zeros), GC_KEY_TILE (keys per tile: 64 to 128, a
// multiple of 16).
#pragma once
#include "attention.cuh"
#include "attention_tc.cuh"
#include "attention_wgmma_ops.cuh"
#include "wgmma.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM;
constexpr int BC = GC_KEY_TILE;  // keys per tile
constexpr int ROW = 128;         // bytes of one swizzled row: 64 elements
static_assert(DP % 64 == 0 && DP <= 256, "head dims of whole 64-column blocks, up to 256");
static_assert(BC % 16 == 0 && BC >= 64 && BC <= 128, "key tiles of 64 to 128 keys in steps of 16");

// The largest of the warp's scores of row half h (NEG: of their negations) over the quad that
// shares the row, from four independent partial maxima: a dependent chain of 32 would stall.
template <bool NEG> __device__ __forceinline__ float row_max(const float (&s)[BC / 2], int h) {
  float part[4];
#pragma unroll
  for (int i = 0; i < 4; i++) part[i] = NEG ? fmaxf(-s[4 * i + 2 * h], -s[4 * i + 2 * h + 1]) : fmaxf(s[4 * i + 2 * h], s[4 * i + 2 * h + 1]);
#pragma unroll
  for (int n = 4; n < BC / 8; n++) {
    const float pair = NEG ? fmaxf(-s[4 * n + 2 * h], -s[4 * n + 2 * h + 1]) : fmaxf(s[4 * n + 2 * h], s[4 * n + 2 * h + 1]);
    part[n % 4] = fmaxf(part[n % 4], pair);
  }
  float mx = fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3]));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  return fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
}

// One key tile of the online softmax for a warp's 16 rows (first row `row0`): s[4n + 2h + e] is
// row g + 8h, key k0 + 8n + 2t + e (g = lane / 4, t = lane % 4). Masks the scores if `masked`,
// folds scale·S into the running max `m` and sum `l`, and turns the scores into
// P = exp2(scale·S - max) in place, one fused multiply-add and one ex2 per score. `corr` receives
// the factor by which each of the thread's two rows of O must be rescaled. `scale_log2` is not 0.
__device__ __forceinline__ void softmax_tile(float (&s)[BC / 2], float (&m)[2], float (&l)[2], float (&corr)[2], int row0, int k0,
                                             int valid, int causal, bool masked, float scale_log2) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const bool neg = scale_log2 < 0.f;
  if (masked) {
    // A hidden score becomes the infinity that scale·S turns into -inf.
    const float hidden = neg ? -GC_ATTN_NEG_INF : GC_ATTN_NEG_INF;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      // The thread's score 8n + e of the tile (key k0 + 8n + 2t + e) is visible while 8n + e < visible.
      const int visible = gc_key_limit(row0 + g + 8 * h, valid, causal) - k0 - 2 * t;
#pragma unroll
      for (int n = 0; n < BC / 8; n++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
          if (n * 8 + e >= visible) s[4 * n + 2 * h + e] = hidden;
        }
    }
  }
  float base[2];
#pragma unroll
  for (int h = 0; h < 2; h++) {
    // max(scale·S) = |scale|·max(sign(scale)·S); -inf when every score is hidden.
    const float mx = neg ? row_max<true>(s, h) * -scale_log2 : row_max<false>(s, h) * scale_log2;
    const float m_new = fmaxf(m[h], mx);
    // A row with nothing visible yet keeps a zero base, so exp2 gives 0 rather than NaN.
    base[h] = m_new == GC_ATTN_NEG_INF ? 0.f : m_new;
    corr[h] = gc_exp2(m[h] - base[h]);
    m[h] = m_new;
  }
#pragma unroll
  for (int i = 0; i < BC / 2; i++) s[i] = gc_exp2(fmaf(s[i], scale_log2, -base[(i / 2) % 2]));
  // Four independent partial sums per row half, as for the maxima.
#pragma unroll
  for (int h = 0; h < 2; h++) {
    float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int n = 0; n < BC / 8; n++) part[n % 4] += s[4 * n + 2 * h] + s[4 * n + 2 * h + 1];
    l[h] = l[h] * corr[h] + ((part[0] + part[1]) + (part[2] + part[3]));
  }
}

// Packs P (softmax_tile's output) to 16 bits as the A fragments of P·V: k-step n / 2.
__device__ __forceinline__ void pack_p(const float (&p)[BC / 2], unsigned (&pf)[BC / 16][4]) {
#pragma unroll
  for (int n = 0; n < BC / 8; n++)
#pragma unroll
    for (int h = 0; h < 2; h++) pf[n / 2][(n % 2) * 2 + h] = gc_pack2(p[4 * n + 2 * h], p[4 * n + 2 * h + 1]);
}

// Rescales the thread's two rows of O by softmax_tile's factors.
__device__ __forceinline__ void rescale_o(float (&o)[DP / 2], const float (&corr)[2]) {
#pragma unroll
  for (int n = 0; n < DP / 8; n++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      o[4 * n + 2 * h] *= corr[h];
      o[4 * n + 2 * h + 1] *= corr[h];
    }
}

// Writes a warp's 16 rows (first row `row0`) of out = O / sum (the first d columns: d is a
// multiple of 8, so a thread's pair of columns lies wholly inside or past them), and their
// log-sum-exp.
__device__ __forceinline__ void store_rows(T* __restrict__ out, float* __restrict__ lse, const AttnBlock& blk, int row0, int seq_q, int d,
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
    T* dst = out + blk.q_base + (idx_t)row * d;
#pragma unroll
    for (int n = 0; n < DP / 8; n++) {
      if (n * 8 + 2 * t < d) *reinterpret_cast<unsigned*>(dst + n * 8 + 2 * t) = gc_pack2(o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
    }
    if (lse && t == 0) lse[(idx_t)blk.bh * seq_q + row] = gc_attn_lse(m[h], sum);
  }
}

}  // namespace
