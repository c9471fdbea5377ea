/*
 * Attention forward, softmax(scale·q·kᵀ + mask)·v, by tiled online softmax (the semantics of
 * src/compute/core/attention-params.ts: causal aligned top-left, GQA, key lengths, rows that see
 * no key give 0 and a log-sum-exp of -inf). A unit is BQ query rows of one (batch, head); a
 * thread takes units [u0, u1). For each block of BK keys, K (transposed) and V are converted to
 * f32 in scratch, scores come from the 4×8 micro-kernel, each row's running max, sum and output
 * are rescaled when the max grows, and P·V goes through the micro-kernel again. Products
 * accumulate in f32; statistics are f32.
 *
 * attention_probs is the middle step of the other route, where a BLAS computes S = scale·Q·Kᵀ
 * for a block of query rows and then O = P·V: it turns each row of S into P in place, masked
 * (causal, key lengths) and normalised, and writes the row's log-sum-exp. attention_grad_scores
 * is the middle step of the backward by products: P from S and the saved log-sum-exp, and
 * dS = P ∘ (dP − rowsum(dOut ∘ out)) from dP, both in place.
 */
#include "common.h"
#include "microkernel.h"
#include "vmath.h"

#define BQ 16
#define BK 64
#define MAX_HEAD_DIM 256

typedef struct {
  const char *q, *k, *v;
  char *out;
  float *lse;                 /* [B, Hq, Sq] or null */
  const int32_t *key_lengths; /* [B] or null */
  int32_t dtype, batch, heads, kv_heads, seq_q, seq_k, head_dim, causal;
  float scale;
} attention_params;

/* Scratch floats: Q block, Kᵀ block, V block, scores, output accumulators, max and sum. */
#define ATTN_SCRATCH ((size_t)(BQ * MAX_HEAD_DIM + MAX_HEAD_DIM * BK + BK * MAX_HEAD_DIM + BQ * BK + BQ * MAX_HEAD_DIM + 2 * BQ) * sizeof(float))

EXPORT(attention_scratch_bytes) size_t attention_scratch_bytes(void) { return ATTN_SCRATCH; }

INLINE size_t round8(size_t x) { return (x + 7) & ~(size_t)7; }

EXPORT(attention) void attention(const attention_params *p, size_t u0, size_t u1, float *scratch) {
  int dt = p->dtype;
  size_t es = dtype_size(dt), D = (size_t)p->head_dim, Dp = round8(D);
  size_t Sq = (size_t)p->seq_q, Sk = (size_t)p->seq_k, heads = (size_t)p->heads;
  size_t group = heads / (size_t)p->kv_heads, qblocks = (Sq + BQ - 1) / BQ;
  float *qs = scratch, *kt = qs + BQ * Dp, *vs = kt + Dp * BK, *s = vs + BK * Dp, *acc = s + BQ * BK;
  float *rmax = acc + BQ * Dp, *rsum = rmax + BQ;
  v128_t scale = F32(p->scale);
  for (size_t u = u0; u < u1; u++) {
    size_t bh = u / qblocks, q0 = (u % qblocks) * BQ, b = bh / heads, h = bh % heads;
    size_t rows = Sq - q0 < BQ ? Sq - q0 : BQ, groups = (rows + 3) / 4;
    const char *q = p->q + (bh * Sq + q0) * D * es;
    size_t kv = b * (size_t)p->kv_heads + h / group;
    const char *kbase = p->k + kv * Sk * D * es, *vbase = p->v + kv * Sk * D * es;
    int32_t len = p->key_lengths ? p->key_lengths[b] : (int32_t)Sk;
    size_t valid = len < 0 ? 0 : (size_t)len > Sk ? Sk : (size_t)len;
    size_t key_end = p->causal && q0 + rows < valid ? q0 + rows : valid;
    for (size_t r = 0; r < groups * 4; r++) {
      for (size_t d = 0; d < Dp; d += 4) {
        v128_t x = r < rows && d < D ? load_n(dt, q + (r * D + d) * es, D - d) : F32(0.0f);
        wasm_v128_store(qs + r * Dp + d, x);
        wasm_v128_store(acc + r * Dp + d, F32(0.0f));
      }
      rmax[r] = -__builtin_inff();
      rsum[r] = 0.0f;
    }
    for (size_t k0 = 0; k0 < key_end; k0 += BK) {
      size_t kb = key_end - k0 < BK ? key_end - k0 : BK, cgroups = (kb + 7) / 8;
      /* Kᵀ (Dp × BK) and V (BK × Dp) in f32, zero beyond the live keys and dims. */
      for (size_t c = 0; c < cgroups * 8; c++) {
        const char *krow = kbase + (k0 + c) * D * es, *vrow = vbase + (k0 + c) * D * es;
        for (size_t d = 0; d < Dp; d += 4) {
          int live = c < kb && d < D;
          v128_t kv4 = live ? load_n(dt, krow + d * es, D - d) : F32(0.0f);
          v128_t vv4 = live ? load_n(dt, vrow + d * es, D - d) : F32(0.0f);
          for (int l = 0; l < 4; l++) kt[(d + (size_t)l) * BK + c] = ((float *)&kv4)[l];
          wasm_v128_store(vs + c * Dp + d, vv4);
        }
      }
      /* Scores: S = scale·Q·Kᵀ over the live row and key groups. */
      for (size_t g = 0; g < groups; g++) {
        for (size_t cg = 0; cg < cgroups; cg++) {
          tile4x8 t;
          micro_4x8(qs + g * 4 * Dp, Dp, 1, kt + cg * 8, BK, Dp, &t);
          for (int r = 0; r < 4; r++) {
            wasm_v128_store(s + (g * 4 + (size_t)r) * BK + cg * 8, wasm_f32x4_mul(t.c[r][0], scale));
            wasm_v128_store(s + (g * 4 + (size_t)r) * BK + cg * 8 + 4, wasm_f32x4_mul(t.c[r][1], scale));
          }
        }
      }
      /* Online softmax per row: mask, new max, rescale, probabilities in place of the scores. */
      for (size_t r = 0; r < groups * 4; r++) {
        float *sr = s + r * BK;
        size_t i = q0 + r;
        size_t visible = r >= rows ? 0 : !p->causal ? kb : i + 1 <= k0 ? 0 : i + 1 - k0 < kb ? i + 1 - k0 : kb;
        if (visible == 0) {
          for (size_t c = 0; c < cgroups * 8; c++) sr[c] = 0.0f;
          continue;
        }
        /* Masked keys become -inf, so they weigh exp(-inf) = 0. */
        v128_t lane = wasm_i32x4_make(0, 1, 2, 3), bmv = F32(-__builtin_inff());
        for (size_t c = 0; c < cgroups * 8; c += 4) {
          v128_t live = wasm_u32x4_lt(wasm_i32x4_add(I32((int32_t)c), lane), I32((int32_t)visible));
          v128_t x = wasm_v128_bitselect(wasm_v128_load(sr + c), F32(-__builtin_inff()), live);
          wasm_v128_store(sr + c, x);
          bmv = wasm_f32x4_max(bmv, x);
        }
        float old = rmax[r], m = wasm_f32x4_extract_lane(wasm_f32x4_max(F32(old), F32(hmax(bmv))), 0);
        float rescale = old == -__builtin_inff() ? 0.0f : wasm_f32x4_extract_lane(v_exp_nonpos(F32(old - m)), 0);
        v128_t mv = F32(m), sum = F32(0.0f);
        for (size_t c = 0; c < cgroups * 8; c += 4) {
          v128_t live = wasm_u32x4_lt(wasm_i32x4_add(I32((int32_t)c), lane), I32((int32_t)visible));
          v128_t e = wasm_v128_and(v_exp_nonpos(wasm_f32x4_sub(wasm_v128_load(sr + c), mv)), live);
          wasm_v128_store(sr + c, e);
          sum = wasm_f32x4_add(sum, e);
        }
        rsum[r] = rsum[r] * rescale + hsum(sum);
        rmax[r] = m;
        if (rescale != 1.0f) {
          v128_t rv = F32(rescale);
          for (size_t d = 0; d < Dp; d += 4) wasm_v128_store(acc + r * Dp + d, wasm_f32x4_mul(wasm_v128_load(acc + r * Dp + d), rv));
        }
      }
      /* O += P·V. */
      for (size_t g = 0; g < groups; g++) {
        for (size_t d = 0; d < Dp; d += 8) {
          tile4x8 t;
          micro_4x8(s + g * 4 * BK, BK, 1, vs + d, Dp, cgroups * 8, &t);
          for (int r = 0; r < 4; r++) {
            float *ar = acc + (g * 4 + (size_t)r) * Dp + d;
            wasm_v128_store(ar, wasm_f32x4_add(wasm_v128_load(ar), t.c[r][0]));
            wasm_v128_store(ar + 4, wasm_f32x4_add(wasm_v128_load(ar + 4), t.c[r][1]));
          }
        }
      }
    }
    char *out = p->out + (bh * Sq + q0) * D * es;
    for (size_t r = 0; r < rows; r++) {
      float sum = rsum[r];
      v128_t inv = F32(sum > 0.0f ? 1.0f / sum : 0.0f);
      for (size_t d = 0; d < D; d += 4) store_n(dt, out + (r * D + d) * es, wasm_f32x4_mul(wasm_v128_load(acc + r * Dp + d), inv), D - d);
      if (p->lse) {
        float l = sum > 0.0f ? rmax[r] + wasm_f32x4_extract_lane(v_log(F32(sum)), 0) : -__builtin_inff();
        p->lse[bh * Sq + q0 + r] = l;
      }
    }
  }
}

/* ------------------------------------------------------------ attention_probs */

typedef struct {
  float *s;     /* [rows, ld]: the scaled scores of `cols` keys in, probabilities out */
  float *lse;   /* [rows] or null */
  int32_t ld, cols;
  int32_t q0;   /* the query index of row 0 */
  int32_t causal;
  int32_t valid; /* keys 0..valid-1 are not padding */
} attention_probs_params;

/* Rows [r0, r1): softmax over the keys row q0 + r sees, zeros over the rest of the `cols`; a row
   that sees no key is all zeros with a log-sum-exp of -inf, and a NaN score makes its row NaN
   (as the tiled kernel). */
EXPORT(attention_probs) void attention_probs(const attention_probs_params *p, size_t r0, size_t r1) {
  size_t cols = (size_t)p->cols, valid = p->valid < 0 ? 0 : (size_t)p->valid;
  for (size_t r = r0; r < r1; r++) {
    float *sr = p->s + r * (size_t)p->ld;
    size_t i = (size_t)p->q0 + r;
    size_t seen = p->causal && i + 1 < valid ? i + 1 : valid;
    if (seen > cols) seen = cols;
    size_t j = 0;
    if (seen == 0) {
      for (; j < cols; j++) sr[j] = 0.0f;
      if (p->lse) p->lse[r] = -__builtin_inff();
      continue;
    }
    /* pmax (one instruction) skips a NaN, but its exp makes the sum and so the row NaN. */
    v128_t mv = F32(-__builtin_inff());
    for (; j + 4 <= seen; j += 4) mv = wasm_f32x4_pmax(mv, wasm_v128_load(sr + j));
    for (; j < seen; j++) mv = wasm_f32x4_pmax(mv, F32(sr[j]));
    mv = wasm_f32x4_pmax(mv, wasm_i32x4_shuffle(mv, mv, 2, 3, 0, 1));
    mv = wasm_f32x4_pmax(mv, wasm_i32x4_shuffle(mv, mv, 1, 0, 3, 2));
    float m = wasm_f32x4_extract_lane(mv, 0);
    /* e^(s - m)·2^64: the factor cancels in the normalisation (see v_exp_nonpos_2p64). */
    v128_t sum = F32(0.0f);
    mv = F32(m);
    for (j = 0; j + 4 <= seen; j += 4) {
      v128_t e = v_exp_nonpos_2p64(wasm_f32x4_sub(wasm_v128_load(sr + j), mv));
      wasm_v128_store(sr + j, e);
      sum = wasm_f32x4_add(sum, e);
    }
    float total = hsum(sum);
    for (; j < seen; j++) {
      float e = wasm_f32x4_extract_lane(v_exp_nonpos_2p64(F32(sr[j] - m)), 0);
      sr[j] = e;
      total += e;
    }
    v128_t inv = F32(1.0f / total);
    for (j = 0; j + 4 <= seen; j += 4) wasm_v128_store(sr + j, wasm_f32x4_mul(wasm_v128_load(sr + j), inv));
    for (; j < seen; j++) sr[j] *= 1.0f / total;
    for (; j < cols; j++) sr[j] = 0.0f;
    if (p->lse) p->lse[r] = m + wasm_f32x4_extract_lane(v_log(F32(total * TWO_M64)), 0);
  }
}

/* ------------------------------------------------------- attention_grad_scores */

typedef struct {
  float *p;            /* [rows, ld]: S = scale·q·kᵀ in, P out */
  float *ds;           /* [rows, ld]: dP = dOut·vᵀ in, dS out */
  const float *lse;    /* [rows]: the forward's log-sum-exp */
  const float *dout;   /* [rows, head_dim] */
  const float *out;    /* [rows, head_dim] */
  int32_t ld, cols, q0, causal, valid, head_dim;
} attention_grad_params;

/* Rows [r0, r1): P = exp(S − lse) over the keys row q0 + r sees and dS = P ∘ (dP − D) with
   D = dOut·out (f32); both 0 over the rest of the `cols`, and over a whole row whose
   log-sum-exp is -inf (it saw no key in the forward). */
EXPORT(attention_grad_scores) void attention_grad_scores(const attention_grad_params *p, size_t r0, size_t r1) {
  size_t cols = (size_t)p->cols, valid = p->valid < 0 ? 0 : (size_t)p->valid, D = (size_t)p->head_dim;
  for (size_t r = r0; r < r1; r++) {
    float *pr = p->p + r * (size_t)p->ld, *dr = p->ds + r * (size_t)p->ld;
    size_t i = (size_t)p->q0 + r;
    size_t seen = p->causal && i + 1 < valid ? i + 1 : valid;
    if (seen > cols) seen = cols;
    float lse = p->lse[r];
    if (lse == -__builtin_inff()) seen = 0;
    const float *go = p->dout + r * D, *o = p->out + r * D;
    v128_t acc = F32(0.0f);
    size_t d = 0;
    for (; d + 4 <= D; d += 4) acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(go + d), wasm_v128_load(o + d)));
    float dot = hsum(acc);
    for (; d < D; d++) dot += go[d] * o[d];
    v128_t lv = F32(lse), dv = F32(dot);
    size_t j = 0;
    for (; j + 4 <= seen; j += 4) {
      v128_t prob = v_exp_nonpos(wasm_f32x4_sub(wasm_v128_load(pr + j), lv));
      wasm_v128_store(pr + j, prob);
      wasm_v128_store(dr + j, wasm_f32x4_mul(prob, wasm_f32x4_sub(wasm_v128_load(dr + j), dv)));
    }
    for (; j < seen; j++) {
      float prob = wasm_f32x4_extract_lane(v_exp_nonpos(F32(pr[j] - lse)), 0);
      pr[j] = prob;
      dr[j] = prob * (dr[j] - dot);
    }
    for (; j < cols; j++) pr[j] = dr[j] = 0.0f;
  }
}
