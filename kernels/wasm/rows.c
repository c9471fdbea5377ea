/*
 * Row-wise ops over a [rows, cols] tensor; a thread takes rows [r0, r1).
 *
 * softmax/logSoftmax: the row maximum first, then exp(x - max)·2^64 and its sum (the factor
 * cancels in the normalisation), then the scaling; a NaN anywhere in a row, or an all -inf row,
 * gives a row of NaN, as in the JS backend. The sum runs in four f32 lanes over blocks of 1024
 * terms, the blocks' sums then added: its terms are positive, so the relative error stays near
 * 256 + cols/1024 ulps at worst.
 * layerNorm: mean and biased variance by two passes in f64, as the JS backend; the normalised
 * value (x - mean)/sqrt(var + eps) also in f64, then gamma and beta in f32.
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
    case DT_F32: softmax_rows(DT_F32, x, y, cols, r0, r1, log); break;
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

/* (x - mean)/sqrt(var + eps)·gamma + beta over rows [r0, r1); gamma/beta are [cols] or null. */
EXPORT(layer_norm) void layer_norm(int dt, const void *x, const void *gamma, const void *beta, void *y, size_t cols,
                                   size_t r0, size_t r1, double eps) {
  switch (dt) {
    case DT_F32: layernorm_rows(DT_F32, x, gamma, beta, y, cols, r0, r1, eps); break;
    case DT_F16: layernorm_rows(DT_F16, x, gamma, beta, y, cols, r0, r1, eps); break;
    default: layernorm_rows(DT_BF16, x, gamma, beta, y, cols, r0, r1, eps); break;
  }
}
