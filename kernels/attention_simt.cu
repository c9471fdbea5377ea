// Attention forward on CUDA cores (f32 inputs on every GPU, f16/bf16 before sm_80): a block of
// 256 threads owns GC_BR query rows of one (batch, head) and streams GC_BC keys at a time
// through shared memory with an online softmax, so no score matrix beyond one tile exists.
//
// The 256 threads form a 16 × 16 grid over the GC_BR × GC_BC score tile; thread (ty, tx) owns
// RM consecutive rows and RN consecutive keys, so each step of the q·k loop reads RM values of
// qᵀ and RN of kᵀ as one vector each. For the product with v it owns the same rows and DC of
// the GC_HEAD_DIM output columns (CW consecutive ones, CG groups 16·CW apart). q and k are held
// transposed (head dim major) and p = exp(s - max) reuses k's buffer once the scores are done.
// Row statistics: the maximum is reduced over the 16 threads of a row (one half-warp) each
// tile; the sum stays per thread and is reduced once at the end.
//
// Module defines: GC_DTYPE (GC_F32, GC_F16, GC_BF16), GC_HEAD_DIM (the head dim rounded up to
// a multiple of 16; columns past the real one are zero), GC_BR and GC_BC (multiples of 16).
// Dynamic shared memory: (DP·LQ + max(DP·LK, BC·LQ) + BC·DP) floats (the host computes it too).
#include "attention.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM, BR = GC_BR, BC = GC_BC;
constexpr int THREADS = 256;
constexpr int RM = BR / 16, RN = BC / 16;
constexpr int DC = DP / 16;
constexpr int CW = DC % 4 == 0 ? 4 : DC % 2 == 0 ? 2 : 1;
constexpr int CG = DC / CW;
// Row strides of the transposed tiles: a multiple of 4 floats keeps vector reads aligned.
constexpr int LQ = BR + 4, LK = BC + 4;
constexpr int KP_FLOATS = DP * LK > BC * LQ ? DP * LK : BC * LQ;
static_assert(BR % 16 == 0 && BC % 16 == 0 && DP % 16 == 0, "tiles are multiples of 16");
static_assert(RM <= 4 && RN <= 4, "at most 4 x 4 scores per thread");

// N consecutive floats of shared memory as one access (N = 1, 2 or 4; the address is aligned to N).
template <int N> __device__ __forceinline__ void read_vec(const float* p, float (&v)[N]) {
  if constexpr (N == 4) {
    const float4 x = *reinterpret_cast<const float4*>(p);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  } else if constexpr (N == 2) {
    const float2 x = *reinterpret_cast<const float2*>(p);
    v[0] = x.x, v[1] = x.y;
  } else {
    v[0] = p[0];
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    attention_simt(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                   float* __restrict__ lse, const int* __restrict__ key_lengths, int bh0, int heads, int group, int seq_q,
                   int seq_k, int d, float scale_log2, int causal) {
  extern __shared__ __align__(16) float smem[];
  float* qt = smem;          // [DP][LQ]: q transposed
  float* kt = qt + DP * LQ;  // [DP][LK]: k transposed; then [BC][LQ]: p transposed
  float* pt = kt;
  float* vs = kt + KP_FLOATS;  // [BC][DP]

  const AttnBlock blk = gc_attn_block(bh0, heads, group, seq_q, seq_k, d, BR, key_lengths, causal);
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int r0 = ty * RM, c0 = tx * RN;

  for (int i = tid; i < BR * DP; i += THREADS) {
    const int r = i / DP, c = i % DP;
    const int row = blk.q0 + r;
    qt[c * LQ + r] = row < seq_q && c < d ? to_float(q[blk.q_base + (idx_t)row * d + c]) : 0.f;
  }

  float o[RM][DC];
  float m[RM], l[RM];
#pragma unroll
  for (int i = 0; i < RM; i++) {
    m[i] = GC_ATTN_NEG_INF;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < DC; j++) o[i][j] = 0.f;
  }

  for (int k0 = 0; k0 < blk.key_end; k0 += BC) {
    __syncthreads();  // the previous tile's p·v is done with pt and vs (and q is stored, the first time)
    for (int i = tid; i < BC * DP; i += THREADS) {
      const int r = i / DP, c = i % DP;
      const bool ok = k0 + r < seq_k && c < d;
      const idx_t at = blk.kv_base + (idx_t)(k0 + r) * d + c;
      kt[c * LK + r] = ok ? to_float(k[at]) : 0.f;
      vs[r * DP + c] = ok ? to_float(v[at]) : 0.f;
    }
    __syncthreads();

    float s[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; i++)
#pragma unroll
      for (int j = 0; j < RN; j++) s[i][j] = 0.f;
#pragma unroll 8
    for (int c = 0; c < DP; c++) {
      float a[RM], b[RN];
      read_vec<RM>(qt + c * LQ + r0, a);
      read_vec<RN>(kt + c * LK + c0, b);
#pragma unroll
      for (int i = 0; i < RM; i++)
#pragma unroll
        for (int j = 0; j < RN; j++) s[i][j] = fmaf(a[i], b[j], s[i][j]);
    }

#pragma unroll
    for (int i = 0; i < RM; i++) {
      const int limit = gc_key_limit(blk.q0 + r0 + i, blk.valid, causal);
      float mx = GC_ATTN_NEG_INF;
#pragma unroll
      for (int j = 0; j < RN; j++) {
        s[i][j] = k0 + c0 + j < limit ? s[i][j] * scale_log2 : GC_ATTN_NEG_INF;
        mx = fmaxf(mx, s[i][j]);
      }
#pragma unroll
      for (int off = 8; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[i], mx);
      // A row with nothing visible yet keeps a zero base, so exp2 gives 0 rather than NaN.
      const float base = m_new == GC_ATTN_NEG_INF ? 0.f : m_new;
      const float corr = gc_exp2(m[i] - base);
      m[i] = m_new;
      l[i] *= corr;
#pragma unroll
      for (int j = 0; j < DC; j++) o[i][j] *= corr;
#pragma unroll
      for (int j = 0; j < RN; j++) {
        s[i][j] = gc_exp2(s[i][j] - base);
        l[i] += s[i][j];
      }
    }

    __syncthreads();  // every thread is done reading kt before p overwrites it
#pragma unroll
    for (int i = 0; i < RM; i++)
#pragma unroll
      for (int j = 0; j < RN; j++) pt[(c0 + j) * LQ + r0 + i] = s[i][j];
    __syncthreads();

#pragma unroll 4
    for (int c = 0; c < BC; c++) {
      float a[RM];
      read_vec<RM>(pt + c * LQ + r0, a);
#pragma unroll
      for (int g = 0; g < CG; g++) {
        float b[CW];
        read_vec<CW>(vs + c * DP + g * 16 * CW + tx * CW, b);
#pragma unroll
        for (int i = 0; i < RM; i++)
#pragma unroll
          for (int e = 0; e < CW; e++) o[i][g * CW + e] = fmaf(a[i], b[e], o[i][g * CW + e]);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < RM; i++) {
#pragma unroll
    for (int off = 8; off > 0; off /= 2) l[i] += __shfl_xor_sync(0xffffffffu, l[i], off);
    const int row = blk.q0 + r0 + i;
    if (row >= seq_q) continue;
    const float inv = gc_attn_inverse(l[i]);
#pragma unroll
    for (int g = 0; g < CG; g++)
#pragma unroll
      for (int e = 0; e < CW; e++) {
        const int col = g * 16 * CW + tx * CW + e;
        if (col < d) out[blk.q_base + (idx_t)row * d + col] = from_float<T>(o[i][g * CW + e] * inv);
      }
    if (lse && tx == 0) lse[(idx_t)blk.bh * seq_q + row] = gc_attn_lse(m[i], l[i]);
  }
}
