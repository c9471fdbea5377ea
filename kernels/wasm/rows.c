/*
 * Row-wise ops over a [rows, cols] tensor; a thread takes rows [r0, r1).
 *
 * softmax/logSoftmax: the row maximum first, then exp(x - max)·2^64 and its sum (the factor
 * cancels in the normalisation), then the scaling; a NaN anywhere in a row, or an all -inf row,
 * gives a row of NaN, as in the JS backend. The sum runs in four f32 lanes over blocks of 1024
 * terms, the blocks' sums then added: its terms are positive, so the relative error stays near
 * 256 + cols/1024 ulps at worst. f32 softmax has a path of its own, shaped for what V8 makes of
 * it (see softmax_f32).
 * layerNorm: mean and biased variance by two passes in f64, as the JS backend; the normalised
 * value (x - mean)/sqrt(var + eps) also in f64, then gamma and beta in f32. f32 layerNorm takes
 * its statistics in f32 arithmetic instead, re-centred so they keep that accuracy (see
 * layernorm_f32), and falls back to this path for rows they cannot serve.
 */
#include "common.h"
#include "vmath.h"

/* Terms each lane of the exponentials' sum adds before the partial joins the row's total. */
#define SUM_BLOCK 1024

/* The row maximum by pmax (one instruction; a NaN element is skipped here but its exp makes the
   sum NaN, so the whole row still comes out NaN, as the JS backend's Math.max gives). */
INLINE float row_max(int dt, const char *x, size_t cols) {
  size_t es = dtype_size(dt), j = 0;
  v128_t a = F32(-__builtin_inff()), b = a;
  for (; j + 8 <= cols; j += 8) {
    f32x8 v = load8(dt, x + j * es);
    a = wasm_f32x4_pmax(a, v.lo);
    b = wasm_f32x4_pmax(b, v.hi);
  }
  a = wasm_f32x4_pmax(a, b);
  for (; j < cols; j++) a = wasm_f32x4_pmax(a, F32(load1(dt, x, j)));
  a = wasm_f32x4_pmax(a, wasm_i32x4_shuffle(a, a, 2, 3, 0, 1));
  a = wasm_f32x4_pmax(a, wasm_i32x4_shuffle(a, a, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(a, 0);
}

/* Σ exp(x - m)·2^64; also stores the terms into y when y is not null (f32 rows only). When `next`
   is not null, the next row's maximum is taken in the same loop, so its loads from memory overlap
   this row's arithmetic instead of stalling a pass of their own. */
INLINE float exp_sum(int dt, const char *x, float *y, size_t cols, float m, const char *next, float *next_max) {
  size_t es = dtype_size(dt), j = 0;
  v128_t mv = F32(m), total = F32(0.0f), na = F32(-__builtin_inff());
  /* Two levels: each lane sums SUM_BLOCK/4 terms, then the block's sums are added up, so the
     rounding grows with SUM_BLOCK/4 + cols/SUM_BLOCK, not with cols/4. */
  while (j + 4 <= cols) {
    size_t end = cols - j > SUM_BLOCK ? j + SUM_BLOCK : cols;
    v128_t a = F32(0.0f);
    /* One vector a step: two would need more registers than V8 has on x64 (constants spill). */
    for (; j + 4 <= end; j += 4) {
      if (next) na = wasm_f32x4_pmax(na, load4(dt, next + j * es));
      v128_t e = v_exp_nonpos_2p64(wasm_f32x4_sub(load4(dt, x + j * es), mv));
      if (y) wasm_v128_store(y + j, e);
      a = wasm_f32x4_add(a, e);
    }
    total = wasm_f32x4_add(total, a);
  }
  float s = hsum(total);
  if (next) {
    for (size_t t = j; t < cols; t++) na = wasm_f32x4_pmax(na, F32(load1(dt, next, t)));
    na = wasm_f32x4_pmax(na, wasm_i32x4_shuffle(na, na, 2, 3, 0, 1));
    na = wasm_f32x4_pmax(na, wasm_i32x4_shuffle(na, na, 1, 0, 3, 2));
    *next_max = wasm_f32x4_extract_lane(na, 0);
  }
  for (; j < cols; j++) {
    float e = wasm_f32x4_extract_lane(v_exp_nonpos_2p64(F32(load1(dt, x, j) - m)), 0);
    if (y) y[j] = e;
    s += e;
  }
  return s;
}

/* ---------------------------------------------------------------- f32 softmax
 * What V8 (TurboFan, Node 20-22, x64) makes of the generic path above, read with
 * --print-wasm-code: every v128.const splat is rebuilt at each use inside a loop (a 64-bit
 * immediate move, a move to xmm and a shuffle), which puts ~22 instructions of the exp loop on the
 * shuffle port; and in a large function, values carried around a loop (the sum, the next row's
 * maximum) live in stack slots, so each step waits on a store-to-load round trip. Here the
 * constants are loaded from memory once (`softmax_exp_constants`, written nowhere but not const,
 * so the compiler cannot fold the loads back into v128.const) and the loops are small functions
 * of their own, where V8 keeps the accumulators and nearly every constant in registers.
 *
 * The exponential is e^d·2^64 for d = x - max ≤ 0 (clamped at -128), as v_exp_nonpos_2p64, but
 * with e^r of degree 5 (fit/fit_coefficients.py: 1 + r + r²Q(r), Q of degree 3, fit error
 * 1.1e-7 relative on |r| ≤ ln2/2) instead of 6, and 2^(n + 64) straight from the shifted rounding
 * sum (its magic number carries the bias). The relaxed build takes r = d - n·ln2 in one FMA with
 * ln2 rounded to f32: n·(ln2 - fl(ln2)) is below 5e-8 for the terms that are more than 2^-24 of
 * the largest (n ≥ -24); the plain build keeps the two-part ln2, whose first product is exact.
 * That leaves 12 arithmetic instructions per vector (14 with the sum and the next row's maximum),
 * all on the two FP ports of x64 cores, which bound the loop. */

/* -128 (the clamp), log2(e), 1.5·2^23 + 191, -ln2 (hi), ln2's low part, Q's coefficients from the
   highest degree, 1. Not const: see above. */
#ifdef __wasm_relaxed_simd__
float softmax_exp_constants[10] = {-128.0f, 1.44269504f, 12583103.0f, -0.693147182f, 0.0f,
                                   0.008312529f, 0.04189013f, 0.16667114f, 0.4999923f, 1.0f};
#else
float softmax_exp_constants[10] = {-128.0f, 1.44269504f, 12583103.0f, -0.693359375f, 2.12194440e-4f,
                                   0.008312529f, 0.04189013f, 0.16667114f, 0.4999923f, 1.0f};
#endif

typedef struct {
  v128_t lo, log2e, magic, ln2_hi, ln2_lo, q3, q2, q1, q0, one;
} softmax_exp_k;

INLINE softmax_exp_k softmax_exp_load(void) {
  const float *k = softmax_exp_constants;
  softmax_exp_k K = {wasm_v128_load32_splat(k),     wasm_v128_load32_splat(k + 1), wasm_v128_load32_splat(k + 2),
                     wasm_v128_load32_splat(k + 3), wasm_v128_load32_splat(k + 4), wasm_v128_load32_splat(k + 5),
                     wasm_v128_load32_splat(k + 6), wasm_v128_load32_splat(k + 7), wasm_v128_load32_splat(k + 8),
                     wasm_v128_load32_splat(k + 9)};
  return K;
}

/* e^(x - m)·2^64, x - m clamped at -128 (a normal number; NaN stays NaN). t = d·log2(e) rounded by
   adding 1.5·2^23 + 191 holds n + 191 in its low bits, so t << 23 is 2^(n + 64). */
INLINE v128_t softmax_exp(v128_t x, v128_t mv, const softmax_exp_k *K) {
  v128_t d = wasm_f32x4_pmax(wasm_f32x4_sub(x, mv), K->lo);
  v128_t t = FMA(d, K->log2e, K->magic);
  v128_t n = wasm_f32x4_sub(t, K->magic);
  v128_t r = FMA(n, K->ln2_hi, d);
#ifndef __wasm_relaxed_simd__
  r = FMA(n, K->ln2_lo, r);
#endif
  v128_t p = FMA(K->q3, r, K->q2);
  p = FMA(p, r, K->q1);
  p = FMA(p, r, K->q0);
  p = FMA(p, r, K->one);
  p = FMA(p, r, K->one);
  return wasm_f32x4_mul(p, wasm_i32x4_shl(t, 23));
}

#define NOINLINE static __attribute__((noinline))

/* One row's exp pass over n4 vectors: y = e^(x - m)·2^64, their sum (each lane over blocks of
   SUM_BLOCK/4 vectors, as exp_sum), and into *next_max the lanes' maximum of `next` over the same
   vectors, so the next row's loads from memory overlap this row's arithmetic. */
NOINLINE float softmax_exp_pass(const float *x, float *y, const float *next, size_t n4, float m, v128_t *next_max) {
  softmax_exp_k K = softmax_exp_load();
  v128_t mv = F32(m), na = F32(-__builtin_inff()), total = F32(0.0f);
  size_t j = 0;
  while (j < n4) {
    size_t end = n4 - j > SUM_BLOCK / 4 ? j + SUM_BLOCK / 4 : n4;
    v128_t a = F32(0.0f);
    for (; j < end; j++) {
      na = wasm_f32x4_pmax(na, wasm_v128_load(next + 4 * j));
      v128_t e = softmax_exp(wasm_v128_load(x + 4 * j), mv, &K);
      wasm_v128_store(y + 4 * j, e);
      a = wasm_f32x4_add(a, e);
    }
    total = wasm_f32x4_add(total, a);
  }
  *next_max = na;
  return hsum(total);
}

/* y *= s over n elements. */
NOINLINE void softmax_scale_pass(float *y, size_t n, float s) {
  v128_t sv = F32(s);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    wasm_v128_store(y + j, wasm_f32x4_mul(wasm_v128_load(y + j), sv));
    wasm_v128_store(y + j + 4, wasm_f32x4_mul(wasm_v128_load(y + j + 4), sv));
  }
  for (; j < n; j++) y[j] *= s;
}

/* f32 softmax over rows [r0, r1): each row's terms go to y, are summed, then scaled in place; the
   next row's maximum comes from the same exp pass (the last row takes its own, unused). */
static void softmax_f32(const float *x, float *y, size_t cols, size_t r0, size_t r1) {
  softmax_exp_k K = softmax_exp_load();
  float m = r0 < r1 ? row_max(DT_F32, (const char *)(x + r0 * cols), cols) : 0.0f;
  size_t n4 = cols / 4;
  for (size_t r = r0; r < r1; r++) {
    const float *xr = x + r * cols, *next = r + 1 < r1 ? xr + cols : xr;
    float *yr = y + r * cols;
    v128_t na;
    float s = softmax_exp_pass(xr, yr, next, n4, m, &na);
    for (size_t j = 4 * n4; j < cols; j++) {
      na = wasm_f32x4_pmax(na, F32(next[j]));
      float e = wasm_f32x4_extract_lane(softmax_exp(F32(xr[j]), F32(m), &K), 0);
      yr[j] = e;
      s += e;
    }
    softmax_scale_pass(yr, cols, 1.0f / s);
    na = wasm_f32x4_pmax(na, wasm_i32x4_shuffle(na, na, 2, 3, 0, 1));
    na = wasm_f32x4_pmax(na, wasm_i32x4_shuffle(na, na, 1, 0, 3, 2));
    m = wasm_f32x4_extract_lane(na, 0);
  }
}

INLINE void softmax_rows(int dt, const char *x, char *y, size_t cols, size_t r0, size_t r1, int log) {
  size_t es = dtype_size(dt), row_bytes = cols * es;
  float m = r0 < r1 ? row_max(dt, x + r0 * row_bytes, cols) : 0.0f;
  for (size_t r = r0; r < r1; r++) {
    const char *xr = x + r * row_bytes;
    char *yr = y + r * row_bytes;
    /* f32 softmax keeps the terms in the output and scales them in place. */
    int keep = dt == DT_F32 && !log;
    float next_max = 0.0f;
    float s = exp_sum(dt, xr, keep ? (float *)yr : 0, cols, m, r + 1 < r1 ? xr + row_bytes : 0, &next_max);
    size_t j = 0;
    if (log) {
      /* (x - m) - log(sum), not x - (m + log(sum)): the sum would round away a large m's low bits. */
      float ls = wasm_f32x4_extract_lane(v_log(F32(s * TWO_M64)), 0);
      v128_t mv = F32(m), lv = F32(ls);
      for (; j + 8 <= cols; j += 8) {
        f32x8 v = load8(dt, xr + j * es);
        v.lo = wasm_f32x4_sub(wasm_f32x4_sub(v.lo, mv), lv);
        v.hi = wasm_f32x4_sub(wasm_f32x4_sub(v.hi, mv), lv);
        store8(dt, yr + j * es, v);
      }
      for (; j < cols; j++) store1(dt, yr, j, (load1(dt, xr, j) - m) - ls);
    } else if (keep) {
      v128_t inv = F32(1.0f / s);
      float *o = (float *)yr;
      for (; j + 8 <= cols; j += 8) {
        wasm_v128_store(o + j, wasm_f32x4_mul(wasm_v128_load(o + j), inv));
        wasm_v128_store(o + j + 4, wasm_f32x4_mul(wasm_v128_load(o + j + 4), inv));
      }
      for (; j < cols; j++) o[j] *= 1.0f / s;
    } else {
      v128_t mv = F32(m), inv = F32(1.0f / s);
      for (; j + 8 <= cols; j += 8) {
        f32x8 v = load8(dt, xr + j * es);
        v.lo = wasm_f32x4_mul(v_exp_nonpos_2p64(wasm_f32x4_sub(v.lo, mv)), inv);
        v.hi = wasm_f32x4_mul(v_exp_nonpos_2p64(wasm_f32x4_sub(v.hi, mv)), inv);
        store8(dt, yr + j * es, v);
      }
      for (; j < cols; j++) store1(dt, yr, j, wasm_f32x4_extract_lane(v_exp_nonpos_2p64(F32(load1(dt, xr, j) - m)), 0) * (1.0f / s));
    }
    m = next_max;
  }
}

/* Softmax (log = 0) or logSoftmax over rows [r0, r1); x and y point at row 0. */
EXPORT(softmax) void softmax(int dt, const void *x, void *y, size_t cols, size_t r0, size_t r1, int log) {
  switch (dt) {
    case DT_F32:
      if (log) softmax_rows(DT_F32, x, y, cols, r0, r1, 1);
      else softmax_f32(x, y, cols, r0, r1);
      break;
    case DT_F16: softmax_rows(DT_F16, x, y, cols, r0, r1, log); break;
    default: softmax_rows(DT_BF16, x, y, cols, r0, r1, log); break;
  }
}

/* ---------------------------------------------------------------- layerNorm */

INLINE v128_t hi_half(v128_t v) { return wasm_i32x4_shuffle(v, v, 2, 3, 0, 1); }

INLINE double f64_total(v128_t v) { return wasm_f64x2_extract_lane(v, 0) + wasm_f64x2_extract_lane(v, 1); }

INLINE void layernorm_rows(int dt, const char *x, const char *gamma, const char *beta, char *y, size_t cols, size_t r0,
                           size_t r1, double eps) {
  size_t es = dtype_size(dt);
  for (size_t r = r0; r < r1; r++) {
    const char *xr = x + r * cols * es;
    char *yr = y + r * cols * es;
    size_t j = 0;
    v128_t s0 = wasm_f64x2_splat(0), s1 = s0;
    for (; j + 4 <= cols; j += 4) {
      v128_t v = load4(dt, xr + j * es);
      s0 = wasm_f64x2_add(s0, wasm_f64x2_promote_low_f32x4(v));
      s1 = wasm_f64x2_add(s1, wasm_f64x2_promote_low_f32x4(hi_half(v)));
    }
    double sum = f64_total(wasm_f64x2_add(s0, s1));
    for (; j < cols; j++) sum += load1(dt, xr, j);
    double mean = sum / (double)cols;
    v128_t mv = wasm_f64x2_splat(mean);
    s0 = s1 = wasm_f64x2_splat(0);
    for (j = 0; j + 4 <= cols; j += 4) {
      v128_t v = load4(dt, xr + j * es);
      v128_t d0 = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(v), mv);
      v128_t d1 = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(hi_half(v)), mv);
      s0 = wasm_f64x2_add(s0, wasm_f64x2_mul(d0, d0));
      s1 = wasm_f64x2_add(s1, wasm_f64x2_mul(d1, d1));
    }
    double squares = f64_total(wasm_f64x2_add(s0, s1));
    for (; j < cols; j++) {
      double d = load1(dt, xr, j) - mean;
      squares += d * d;
    }
    double inv_std = 1.0 / __builtin_sqrt(squares / (double)cols + eps);
    v128_t iv = wasm_f64x2_splat(inv_std);
    for (j = 0; j + 4 <= cols; j += 4) {
      v128_t v = load4(dt, xr + j * es);
      v128_t n0 = wasm_f64x2_mul(wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(v), mv), iv);
      v128_t n1 = wasm_f64x2_mul(wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(hi_half(v)), mv), iv);
      v128_t n = wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(n0), wasm_f32x4_demote_f64x2_zero(n1), 0, 1, 4, 5);
      if (gamma) n = wasm_f32x4_mul(n, load4(dt, gamma + j * es));
      if (beta) n = wasm_f32x4_add(n, load4(dt, beta + j * es));
      store4(dt, yr + j * es, n);
    }
    for (; j < cols; j++) {
      float n = (float)((load1(dt, xr, j) - mean) * inv_std);
      if (gamma) n *= load1(dt, gamma, j);
      if (beta) n += load1(dt, beta, j);
      store1(dt, yr, j, n);
    }
  }
}

/* ---------------------------------------------------------------- f32 layerNorm
 * Statistics in f32 arithmetic, shaped like the f32 softmax for V8 (small functions, two
 * accumulators), instead of widening every element to f64 (about 20 FP-port instructions per
 * vector over the generic path's three passes, against 8 here, gamma and beta aside):
 * - mean: m = x0 + Σ(x - x0)/n with x0 the row's first element, so the terms are the size of the
 *   spread, not of the mean (rows far from zero);
 * - moments about m: c = Σ(x - m) and q = Σ(x - m)²; x - m is exact wherever x is within a factor
 *   of two of m (Sterbenz); the mean is m + c/n and the variance q/n - (c/n)², in f64 from there;
 *   where c/n is more than 1/32 of the spread, m moves to m + c/n and the moments are taken again;
 * - y = ((x - m) - c/n)·(1/√(var + eps)), so the mean's correction never meets x's magnitude.
 * Each sum runs per lane over blocks of LN_BLOCK terms (two accumulators), the blocks' sums added
 * in f64: at most 32 terms per lane-accumulator between f64 additions. A row whose sums are not
 * finite (NaN, ±inf, or squares past f32) or whose variance is below 2^-90 goes through the f64
 * path above, which gives those rows their meaning. */

#define LN_BLOCK 256

/* Adds a block's two accumulators into the f64 pair sum (lanes 0-1 and 2-3). */
INLINE void ln_flush(v128_t a, v128_t b, v128_t *lo, v128_t *hi) {
  v128_t s = wasm_f32x4_add(a, b);
  *lo = wasm_f64x2_add(*lo, wasm_f64x2_promote_low_f32x4(s));
  *hi = wasm_f64x2_add(*hi, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(s, s, 2, 3, 0, 1)));
}

INLINE double ln_total(v128_t lo, v128_t hi) {
  v128_t s = wasm_f64x2_add(lo, hi);
  return wasm_f64x2_extract_lane(s, 0) + wasm_f64x2_extract_lane(s, 1);
}

/* Σ(x - x0) over n elements. */
NOINLINE double ln_shifted_sum(const float *x, size_t n, float x0) {
  v128_t xv = F32(x0), lo = wasm_f64x2_splat(0), hi = lo;
  size_t j = 0;
  while (j + 8 <= n) {
    size_t left = n - j, end = j + (left > LN_BLOCK ? LN_BLOCK : (left & ~(size_t)7));
    v128_t a = F32(0.0f), b = a;
    for (; j < end; j += 8) {
      a = wasm_f32x4_add(a, wasm_f32x4_sub(wasm_v128_load(x + j), xv));
      b = wasm_f32x4_add(b, wasm_f32x4_sub(wasm_v128_load(x + j + 4), xv));
    }
    ln_flush(a, b, &lo, &hi);
  }
  double s = ln_total(lo, hi);
  for (; j < n; j++) s += x[j] - x0;
  return s;
}

/* c = Σ(x - m) and q = Σ(x - m)² over n elements, and *next_sum = Σ(next - x0) over the same
   elements of `next`, the next row, so its loads from memory overlap this row's arithmetic. */
NOINLINE void ln_moments(const float *x, size_t n, float m, double *c, double *q, const float *next, float x0, double *next_sum) {
  v128_t mv = F32(m), xv = F32(x0), clo = wasm_f64x2_splat(0), chi = clo, qlo = clo, qhi = clo, slo = clo, shi = clo;
  size_t j = 0;
  while (j + 8 <= n) {
    size_t left = n - j, end = j + (left > LN_BLOCK ? LN_BLOCK : (left & ~(size_t)7));
    v128_t ca = F32(0.0f), cb = ca, qa = ca, qb = ca, sa = ca, sb = ca;
    for (; j < end; j += 8) {
      v128_t d0 = wasm_f32x4_sub(wasm_v128_load(x + j), mv), d1 = wasm_f32x4_sub(wasm_v128_load(x + j + 4), mv);
      sa = wasm_f32x4_add(sa, wasm_f32x4_sub(wasm_v128_load(next + j), xv));
      sb = wasm_f32x4_add(sb, wasm_f32x4_sub(wasm_v128_load(next + j + 4), xv));
      ca = wasm_f32x4_add(ca, d0);
      cb = wasm_f32x4_add(cb, d1);
      qa = FMA(d0, d0, qa);
      qb = FMA(d1, d1, qb);
    }
    ln_flush(ca, cb, &clo, &chi);
    ln_flush(qa, qb, &qlo, &qhi);
    ln_flush(sa, sb, &slo, &shi);
  }
  double cs = ln_total(clo, chi), qs = ln_total(qlo, qhi), ss = ln_total(slo, shi);
  for (; j < n; j++) {
    float d = x[j] - m;
    cs += d;
    qs += d * d;
    ss += next[j] - x0;
  }
  *c = cs;
  *q = qs;
  *next_sum = ss;
}

/* y = ((x - m) - corr)·inv, then ·gamma and + beta where given. */
NOINLINE void ln_normalize(const float *x, const float *gamma, const float *beta, float *y, size_t n, float m, float corr,
                           float inv) {
  v128_t mv = F32(m), cv = F32(corr), iv = F32(inv);
  size_t j = 0;
#define LN_NORM(v) wasm_f32x4_mul(wasm_f32x4_sub(wasm_f32x4_sub((v), mv), cv), iv)
  if (gamma && beta) {
    for (; j + 4 <= n; j += 4)
      wasm_v128_store(y + j, wasm_f32x4_add(wasm_f32x4_mul(LN_NORM(wasm_v128_load(x + j)), wasm_v128_load(gamma + j)), wasm_v128_load(beta + j)));
  } else if (gamma) {
    for (; j + 4 <= n; j += 4) wasm_v128_store(y + j, wasm_f32x4_mul(LN_NORM(wasm_v128_load(x + j)), wasm_v128_load(gamma + j)));
  } else if (beta) {
    for (; j + 4 <= n; j += 4) wasm_v128_store(y + j, wasm_f32x4_add(LN_NORM(wasm_v128_load(x + j)), wasm_v128_load(beta + j)));
  } else {
    for (; j + 4 <= n; j += 4) wasm_v128_store(y + j, LN_NORM(wasm_v128_load(x + j)));
  }
#undef LN_NORM
  for (; j < n; j++) {
    float v = ((x[j] - m) - corr) * inv;
    if (gamma) v *= gamma[j];
    if (beta) v += beta[j];
    y[j] = v;
  }
}

/* f32 layerNorm over rows [r0, r1): the first row's shifted sum alone, then per row its moments
   (with the next row's shifted sum; the last row takes its own again, unused) and the
   normalisation. */
static void layernorm_f32(const float *x, const float *gamma, const float *beta, float *y, size_t cols, size_t r0, size_t r1,
                          double eps) {
  double n = (double)cols;
  double s = r0 < r1 ? ln_shifted_sum(x + r0 * cols, cols, x[r0 * cols]) : 0;
  for (size_t r = r0; r < r1; r++) {
    const float *xr = x + r * cols, *next = r + 1 < r1 ? xr + cols : xr;
    float x0 = xr[0];
    float m = (float)(x0 + s / n);
    double c, q, next_s;
    ln_moments(xr, cols, m, &c, &q, next, next[0], &next_s);
    double corr = c / n, var = q / n - corr * corr;
    if (corr * corr * 1024 > var) {
      /* m was off by more than 1/32 of the spread: the moments again about m + c/n. */
      m = (float)(m + corr);
      ln_moments(xr, cols, m, &c, &q, next, next[0], &next_s);
      corr = c / n;
      var = q / n - corr * corr;
    }
    /* Not finite anywhere (q is also +inf where a square passed f32), or too small to trust. */
    if (var >= 0x1p-90 && var < __builtin_inf() && s - s == 0)
      ln_normalize(xr, gamma, beta, y + r * cols, cols, m, (float)corr, (float)(1.0 / __builtin_sqrt(var + eps)));
    else
      layernorm_rows(DT_F32, (const char *)x, (const char *)gamma, (const char *)beta, (char *)y, cols, r, r + 1, eps);
    s = next_s;
  }
}

/* (x - mean)/sqrt(var + eps)·gamma + beta over rows [r0, r1); gamma/beta are [cols] or null. */
EXPORT(layer_norm) void layer_norm(int dt, const void *x, const void *gamma, const void *beta, void *y, size_t cols,
                                   size_t r0, size_t r1, double eps) {
  switch (dt) {
    case DT_F32: layernorm_f32(x, gamma, beta, y, cols, r0, r1, eps); break;
    case DT_F16: layernorm_rows(DT_F16, x, gamma, beta, y, cols, r0, r1, eps); break;
    default: layernorm_rows(DT_BF16, x, gamma, beta, y, cols, r0, r1, eps); break;
  }
}
