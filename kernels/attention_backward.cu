// Attention backward on CUDA cores (every dtype, any GPU), FlashAttention-2's algorithm:
//
//   attention_bwd_dot (attention_backward_dot.cuh): D[row] = rowsum(dOut ∘ out).
//   attention_bwd_simt: a block owns GC_BC keys of one (batch, k/v head) and walks the query rows
//     of every query head that reads that k/v head (grouped-query attention sums there), GC_BR
//     rows at a time. Per chunk it recomputes the scores S = q·kᵀ, P = 2^(S·scale·log2 e − lse·log2 e)
//     from the forward's log-sum-exp, dP = dOut·vᵀ and dS = P∘(dP − D); dK and dV accumulate
//     dSᵀ·q and Pᵀ·dOut in registers over all chunks and are stored once (dK scaled), and
//     scale·dS·k is added to an f32 dq accumulator with atomics (the host zeroes it first, and
//     casts it to dq when the dtype is 16-bit). No score matrix beyond one GC_BR × GC_BC tile.
//
// Masks as the forward: key j is visible to row i when j < clamp(key_lengths[b], 0, Sk) and, under
// the causal mask, j ≤ i (top-left aligned), so a block skips the chunks wholly above its keys. A
// row that saw no key has lse = −∞ and P = 0. A block whose keys are all padding stores zeros.
//
// Thread layout (256 threads): for the score tile a 16 × 16 grid, thread (ty, tx) owning RM rows
// and RN keys; for dK/dV, 256/BC threads per key, each owning every (256/BC)-th column; for dq,
// 256/BR threads per row likewise. Tiles are kept transposed (head dim major) so the dot products
// read consecutive rows/keys, and padded by 4 floats per line.
//
// Module defines: GC_DTYPE, GC_HEAD_DIM (the head dim padded to a multiple of 16; columns past
// the real one are zero), GC_BR and GC_BC (multiples of 16 dividing 256).
// Dynamic shared memory: (2·DP·LK + 2·DP·LQ + 2·BR·LP + 2·BR) floats (the host computes it too).
#include "attention_backward_dot.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM, BR = GC_BR, BC = GC_BC;
constexpr int THREADS = 256;
constexpr int RM = BR / 16, RN = BC / 16;
constexpr int LQ = BR + 4, LK = BC + 4, LP = BC + 1;
// dK/dV: KT threads per key, each owning DP / KT columns; dq: QT threads per query row.
constexpr int KT = THREADS / BC, KC = DP / KT;
constexpr int QT = THREADS / BR, QC = DP / QT;
static_assert(BR % 16 == 0 && BC % 16 == 0 && DP % 16 == 0, "tiles are multiples of 16");
static_assert(THREADS % BC == 0 && THREADS % BR == 0 && DP % KT == 0 && DP % QT == 0, "the threads split the tiles evenly");
static_assert(RM <= 4 && RN <= 4, "at most 4 x 4 scores per thread");

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_bwd_simt(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, const T* __restrict__ d_out,
                       const float* __restrict__ lse, const float* __restrict__ delta, const int* __restrict__ key_lengths,
                       float* __restrict__ dq, T* __restrict__ dk, T* __restrict__ dv, int pair0, int heads, int group, int seq_q,
                       int seq_k, int d, float scale, int causal) {
  extern __shared__ __align__(16) float smem[];
  float* kt = smem;          // [DP][LK]: k transposed
  float* vt = kt + DP * LK;  // [DP][LK]: v transposed
  float* qt = vt + DP * LK;  // [DP][LQ]: the chunk's q transposed
  float* ot = qt + DP * LQ;  // [DP][LQ]: the chunk's dOut transposed
  float* ps = ot + DP * LQ;  // [BR][LP]: P
  float* ds = ps + BR * LP;  // [BR][LP]: dS
  float* row_lse = ds + BR * LP;  // [BR]: lse·log2 e (+∞ for a row with no key)
  float* row_d = row_lse + BR;    // [BR]: D

  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int pair = pair0 + blockIdx.y;  // (batch, k/v head)
  const int kv_heads = heads / group;
  const int b = pair / kv_heads;
  const int k0 = blockIdx.x * BC;
  const idx_t kv_base = (idx_t)pair * seq_k * d;
  const int valid = gc_valid_keys(key_lengths, b, seq_k);
  const float scale_log2 = scale * GC_LOG2E;

  const int kc = tid / KT, kx = tid % KT;  // dK/dV: key kc, columns kx, kx + KT, ...
  float acc_k[KC], acc_v[KC];
#pragma unroll
  for (int i = 0; i < KC; i++) acc_k[i] = acc_v[i] = 0.f;

  if (k0 < valid) {
    for (int i = tid; i < BC * DP; i += THREADS) {
      const int r = i / DP, c = i % DP;
      const bool ok = k0 + r < seq_k && c < d;
      const idx_t at = kv_base + (idx_t)(k0 + r) * d + c;
      kt[c * LK + r] = ok ? to_float(k[at]) : 0.f;
      vt[c * LK + r] = ok ? to_float(v[at]) : 0.f;
    }
    // Under the causal mask rows above the block's first key see none of its keys.
    const int first_row = causal ? (k0 / BR) * BR : 0;
    for (int g = 0; g < group; g++) {
      const int h = (pair % kv_heads) * group + g;
      const idx_t row_base = ((idx_t)b * heads + h) * seq_q;
      for (int q0 = first_row; q0 < seq_q; q0 += BR) {
        __syncthreads();  // the previous chunk is done with qt, ot, ps, ds (and kt, vt are stored, the first time)
        for (int i = tid; i < BR * DP; i += THREADS) {
          const int r = i / DP, c = i % DP;
          const bool ok = q0 + r < seq_q && c < d;
          const idx_t at = (row_base + q0 + r) * d + c;
          qt[c * LQ + r] = ok ? to_float(q[at]) : 0.f;
          ot[c * LQ + r] = ok ? to_float(d_out[at]) : 0.f;
        }
        if (tid < BR) {
          const bool ok = q0 + tid < seq_q;
          const float l = ok ? lse[row_base + q0 + tid] : GC_ATTN_NEG_INF;
          row_lse[tid] = gc_bwd_lse2(l);
          row_d[tid] = ok ? delta[row_base + q0 + tid] : 0.f;
        }
        __syncthreads();

        float s[RM][RN], dp[RM][RN];
#pragma unroll
        for (int i = 0; i < RM; i++)
#pragma unroll
          for (int j = 0; j < RN; j++) s[i][j] = dp[i][j] = 0.f;
#pragma unroll 4
        for (int c = 0; c < DP; c++) {
          float a[RM], o[RM], bk[RN], bv[RN];
#pragma unroll
          for (int i = 0; i < RM; i++) {
            a[i] = qt[c * LQ + ty * RM + i];
            o[i] = ot[c * LQ + ty * RM + i];
          }
#pragma unroll
          for (int j = 0; j < RN; j++) {
            bk[j] = kt[c * LK + tx * RN + j];
            bv[j] = vt[c * LK + tx * RN + j];
          }
#pragma unroll
          for (int i = 0; i < RM; i++)
#pragma unroll
            for (int j = 0; j < RN; j++) {
              s[i][j] = fmaf(a[i], bk[j], s[i][j]);
              dp[i][j] = fmaf(o[i], bv[j], dp[i][j]);
            }
        }
#pragma unroll
        for (int i = 0; i < RM; i++) {
          const int r = ty * RM + i;
          const int limit = gc_key_limit(q0 + r, valid, causal);
#pragma unroll
          for (int j = 0; j < RN; j++) {
            const int c = tx * RN + j;
            const float p = k0 + c < limit ? gc_exp2(fmaf(s[i][j], scale_log2, -row_lse[r])) : 0.f;
            ps[r * LP + c] = p;
            ds[r * LP + c] = p * (dp[i][j] - row_d[r]);
          }
        }
        __syncthreads();

        // dV += Pᵀ·dOut and dK += dSᵀ·q for this thread's key and columns.
        for (int r = 0; r < BR; r++) {
          const float p = ps[r * LP + kc], g2 = ds[r * LP + kc];
#pragma unroll
          for (int i = 0; i < KC; i++) {
            const int x = kx + i * KT;
            acc_v[i] = fmaf(p, ot[x * LQ + r], acc_v[i]);
            acc_k[i] = fmaf(g2, qt[x * LQ + r], acc_k[i]);
          }
        }
        // dq += scale·dS·k for this thread's row and columns, added to the accumulator.
        const int qr = tid / QT, qx = tid % QT;
        if (q0 + qr < seq_q) {
          float acc_q[QC];
#pragma unroll
          for (int i = 0; i < QC; i++) acc_q[i] = 0.f;
          for (int c = 0; c < BC; c++) {
            const float g2 = ds[qr * LP + c];
#pragma unroll
            for (int i = 0; i < QC; i++) acc_q[i] = fmaf(g2, kt[(qx + i * QT) * LK + c], acc_q[i]);
          }
          float* dq_row = dq + (row_base + q0 + qr) * d;
#pragma unroll
          for (int i = 0; i < QC; i++) {
            const int x = qx + i * QT;
            if (x < d && acc_q[i] != 0.f) atomicAdd(dq_row + x, acc_q[i] * scale);
          }
        }
      }
    }
  }

  const int key = k0 + kc;
  if (key < seq_k) {
#pragma unroll
    for (int i = 0; i < KC; i++) {
      const int x = kx + i * KT;
      if (x < d) {
        dk[kv_base + (idx_t)key * d + x] = from_float<T>(acc_k[i] * scale);
        dv[kv_base + (idx_t)key * d + x] = from_float<T>(acc_v[i]);
      }
    }
  }
}
