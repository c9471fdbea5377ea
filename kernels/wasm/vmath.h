/*
 * Vectorised f32 elementary functions for the unary ops, their derivatives, softmax, the matmul
 * epilogue, the GRU and attention. Every function is defined over the whole f32 line: NaN in,
 * NaN out; infinities and subnormals give the limits the float64 definitions give.
 *
 * Polynomials are near-minimax fits made by fit/fit_coefficients.py (coefficients lowest degree
 * first in the comments there); the measured errors are in test/unit/cpu-simd/.
 *
 * Forms chosen so tails keep their relative accuracy where a textbook formula cancels:
 * - sigmoid from e = exp(-|x|): s(x) = 1/(1+e) or e/(1+e), never 1 - something;
 * - tanh' = 4e/(1+e)^2 with e = exp(-2|x|), not 1 - tanh^2;
 * - Φ(-u) = φ(u)·M(u) with the Mills ratio M fitted as t·P(t), t = 1/(1 + 0.3u), and
 *   φ(u) = exp(-u²/2) computed from the exact product u·u = p + err (Dekker), so exact GELU and
 *   its derivative stay accurate down to where they underflow;
 * - GELU's tanh form as x·sigmoid(2y) (1 + tanh y = 2·sigmoid(2y)).
 */
#ifndef GPUCOMPUTE_WASM_VMATH_H
#define GPUCOMPUTE_WASM_VMATH_H

#include "common.h"

INLINE v128_t v_abs(v128_t x) { return wasm_f32x4_abs(x); }

/* Sign bit of x ORed into y (y ≥ 0). */
INLINE v128_t v_with_sign(v128_t y, v128_t x) {
  return wasm_v128_or(y, wasm_v128_and(x, I32((int32_t)0x80000000u)));
}

/* e^x: x = n·ln2 + r with |r| ≤ ln2/2, e^r = 1 + r + r²·Q(r), times 2^n applied in two halves so
   results down to the subnormals round once. */
INLINE v128_t v_exp(v128_t x) {
  x = wasm_f32x4_min(wasm_f32x4_max(x, F32(-104.0f)), F32(89.0f)); /* keeps NaN */
  v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(x, F32(1.44269504f)));
  v128_t r = FMA(n, F32(-0.693359375f), x); /* n·ln2_hi is exact: ln2_hi has 9 bits */
  r = FMA(n, F32(2.12194440e-4f), r);
  v128_t q = FMA(F32(0.0013814606f), r, F32(0.008368712f));
  q = FMA(q, r, F32(0.04166839f));
  q = FMA(q, r, F32(0.16666521f));
  q = FMA(q, r, F32(0.49999994f));
  v128_t p = wasm_f32x4_add(FMA(wasm_f32x4_mul(r, r), q, r), F32(1.0f));
  v128_t ni = wasm_i32x4_trunc_sat_f32x4(n);
  v128_t n1 = wasm_i32x4_shr(ni, 1);
  v128_t n2 = wasm_i32x4_sub(ni, n1);
  v128_t s1 = wasm_i32x4_shl(wasm_i32x4_add(n1, I32(127)), 23);
  v128_t s2 = wasm_i32x4_shl(wasm_i32x4_add(n2, I32(127)), 23);
  return wasm_f32x4_mul(wasm_f32x4_mul(p, s1), s2);
}

/* Natural logarithm: x = 2^e·m with m in [√½, √2), log(m) = f - f²/2 + f³·P(f), f = m - 1. */
INLINE v128_t v_log(v128_t x) {
  v128_t subnormal = wasm_f32x4_lt(x, F32(1.17549435e-38f));
  v128_t xs = wasm_v128_bitselect(wasm_f32x4_mul(x, F32(8388608.0f)), x, subnormal);
  v128_t e = wasm_i32x4_sub(wasm_u32x4_shr(xs, 23), I32(127));
  e = wasm_i32x4_sub(e, wasm_v128_and(subnormal, I32(23)));
  v128_t m = wasm_v128_or(wasm_v128_and(xs, I32(0x007fffff)), I32(0x3f800000));
  v128_t big = wasm_f32x4_gt(m, F32(1.41421356f));
  m = wasm_v128_bitselect(wasm_f32x4_mul(m, F32(0.5f)), m, big);
  e = wasm_i32x4_sub(e, big); /* big is -1 where set */
  v128_t f = wasm_f32x4_sub(m, F32(1.0f));
  v128_t p = FMA(F32(-0.07634344f), f, F32(0.12761515f));
  p = FMA(p, f, F32(-0.13160211f));
  p = FMA(p, f, F32(0.14201768f));
  p = FMA(p, f, F32(-0.16623355f));
  p = FMA(p, f, F32(0.20001227f));
  p = FMA(p, f, F32(-0.25000823f));
  p = FMA(p, f, F32(0.3333333f));
  v128_t z = wasm_f32x4_mul(f, f);
  v128_t ef = wasm_f32x4_convert_i32x4(e);
  v128_t y = FMA(wasm_f32x4_mul(f, z), p, wasm_f32x4_mul(z, F32(-0.5f)));
  y = FMA(ef, F32(-2.12194440e-4f), y);
  v128_t r = wasm_f32x4_add(f, y);
  r = FMA(ef, F32(0.693359375f), r);
  /* log(±0) = -inf, log(+inf) = +inf, log(x < 0) and log(NaN) = NaN. */
  r = wasm_v128_bitselect(F32(-__builtin_inff()), r, wasm_f32x4_eq(x, F32(0.0f)));
  r = wasm_v128_bitselect(x, r, wasm_f32x4_eq(x, F32(__builtin_inff())));
  v128_t invalid = wasm_v128_or(wasm_f32x4_lt(x, F32(0.0f)), wasm_f32x4_ne(x, x));
  return wasm_v128_bitselect(F32(__builtin_nanf("")), r, invalid);
}

/* log(1 + t) for t ≥ 0: u = 1 + t rounded, plus the rounding error c = t - (u - 1) over u. */
INLINE v128_t v_log1p_pos(v128_t t) {
  v128_t u = wasm_f32x4_add(t, F32(1.0f));
  v128_t c = wasm_f32x4_sub(t, wasm_f32x4_sub(u, F32(1.0f)));
  return wasm_f32x4_add(v_log(u), wasm_f32x4_div(c, u));
}

/* The logistic function at x and at -x (= 1 - sigmoid(x), without the cancellation). */
typedef struct {
  v128_t pos, neg;
} sigmoid_pair;

INLINE sigmoid_pair v_sigmoid_pair(v128_t x) {
  v128_t e = v_exp(wasm_f32x4_neg(v_abs(x)));
  v128_t d = wasm_f32x4_add(e, F32(1.0f));
  v128_t big = wasm_f32x4_div(F32(1.0f), d); /* sigmoid(|x|) */
  v128_t small = wasm_f32x4_div(e, d);       /* sigmoid(-|x|) */
  v128_t nonneg = wasm_f32x4_ge(x, F32(0.0f));
  sigmoid_pair s = {wasm_v128_bitselect(big, small, nonneg), wasm_v128_bitselect(small, big, nonneg)};
  return s;
}

INLINE v128_t v_sigmoid(v128_t x) {
  v128_t e = v_exp(wasm_f32x4_neg(v_abs(x)));
  v128_t d = wasm_f32x4_add(e, F32(1.0f));
  return wasm_f32x4_div(wasm_v128_bitselect(F32(1.0f), e, wasm_f32x4_ge(x, F32(0.0f))), d);
}

/* tanh: x + x³·P(x²) below 0.625, else (1 - e)/(1 + e) with e = exp(-2|x|), signed. */
INLINE v128_t v_tanh(v128_t x) {
  v128_t a = v_abs(x);
  v128_t s = wasm_f32x4_mul(x, x);
  v128_t p = FMA(F32(-0.005704968f), s, F32(0.020639068f));
  p = FMA(p, s, F32(-0.053739708f));
  p = FMA(p, s, F32(0.13331442f));
  p = FMA(p, s, F32(-0.3333328f));
  v128_t small = FMA(wasm_f32x4_mul(x, s), p, x);
  v128_t e = v_exp(wasm_f32x4_mul(a, F32(-2.0f)));
  v128_t large = v_with_sign(wasm_f32x4_div(wasm_f32x4_sub(F32(1.0f), e), wasm_f32x4_add(F32(1.0f), e)), x);
  return wasm_v128_bitselect(small, large, wasm_f32x4_lt(a, F32(0.625f)));
}

/* 1 - tanh(x)² = 4e/(1 + e)², e = exp(-2|x|). */
INLINE v128_t v_tanh_grad(v128_t x) {
  v128_t e = v_exp(wasm_f32x4_mul(v_abs(x), F32(-2.0f)));
  v128_t d = wasm_f32x4_add(e, F32(1.0f));
  return wasm_f32x4_div(wasm_f32x4_mul(e, F32(4.0f)), wasm_f32x4_mul(d, d));
}

/* sigmoid(x)·(1 - sigmoid(x)) = e/(1 + e)², e = exp(-|x|). */
INLINE v128_t v_sigmoid_grad(v128_t x) {
  v128_t e = v_exp(wasm_f32x4_neg(v_abs(x)));
  v128_t d = wasm_f32x4_add(e, F32(1.0f));
  return wasm_f32x4_div(e, wasm_f32x4_mul(d, d));
}

/* log(1 + eˣ) = max(x, 0) + log1p(exp(-|x|)). */
INLINE v128_t v_softplus(v128_t x) {
  return wasm_f32x4_add(wasm_f32x4_max(x, F32(0.0f)), v_log1p_pos(v_exp(wasm_f32x4_neg(v_abs(x)))));
}

/* The standard normal density φ(x) and the lower tail Φ(-|x|). */
typedef struct {
  v128_t density, tail;
} normal_parts;

INLINE normal_parts v_normal(v128_t x) {
  v128_t u = wasm_f32x4_min(v_abs(x), F32(20.0f)); /* φ and the tail are 0 in f32 beyond */
  /* u·u = p + err exactly (Dekker: u split into two 12-bit halves). */
  v128_t p = wasm_f32x4_mul(u, u);
  v128_t uh = wasm_v128_and(u, I32((int32_t)0xfffff000u));
  v128_t ul = wasm_f32x4_sub(u, uh);
  v128_t err = wasm_f32x4_add(wasm_f32x4_sub(wasm_f32x4_mul(uh, uh), p), wasm_f32x4_mul(wasm_f32x4_mul(uh, ul), F32(2.0f)));
  err = wasm_f32x4_add(err, wasm_f32x4_mul(ul, ul));
  /* exp(-(p + err)/2) = exp(-p/2)·(1 - err/2), |err| ≤ ulp(p)/2. */
  v128_t g = wasm_f32x4_mul(v_exp(wasm_f32x4_mul(p, F32(-0.5f))), FMA(err, F32(-0.5f), F32(1.0f)));
  v128_t density = wasm_f32x4_mul(g, F32(0.39894228f));
  v128_t t = wasm_f32x4_div(F32(1.0f), FMA(u, F32(0.3f), F32(1.0f)));
  v128_t m = FMA(F32(-0.02697369f), t, F32(0.09727991f));
  m = FMA(m, t, F32(-0.0757359f));
  m = FMA(m, t, F32(-0.082563765f));
  m = FMA(m, t, F32(0.059065018f));
  m = FMA(m, t, F32(0.03887882f));
  m = FMA(m, t, F32(0.15224926f));
  m = FMA(m, t, F32(0.21805292f));
  m = FMA(m, t, F32(0.27306312f));
  m = FMA(m, t, F32(0.2999984f));
  m = FMA(m, t, F32(0.3f));
  normal_parts r = {density, wasm_f32x4_mul(density, wasm_f32x4_mul(t, m))};
  return r;
}

/* Φ(x) from the parts: the tail below 0, one minus it above. */
INLINE v128_t v_normal_cdf(v128_t x, normal_parts n) {
  return wasm_v128_bitselect(wasm_f32x4_sub(F32(1.0f), n.tail), n.tail, wasm_f32x4_ge(x, F32(0.0f)));
}

/* Exact GELU x·Φ(x) and its derivative Φ(x) + x·φ(x). */
INLINE v128_t v_gelu(v128_t x) { return wasm_f32x4_mul(x, v_normal_cdf(x, v_normal(x))); }

INLINE v128_t v_gelu_grad(v128_t x) {
  normal_parts n = v_normal(x);
  return FMA(x, n.density, v_normal_cdf(x, n));
}

/* GELU's tanh form: y = √(2/π)·(x + 0.044715x³); 0.5x(1 + tanh y) = x·sigmoid(2y). */
INLINE v128_t v_gelu_tanh_arg(v128_t x) {
  v128_t x2 = wasm_f32x4_mul(x, x);
  return wasm_f32x4_mul(wasm_f32x4_mul(x, F32(1.5957691f)), FMA(x2, F32(0.044715f), F32(1.0f)));
}

INLINE v128_t v_gelu_tanh(v128_t x) { return wasm_f32x4_mul(x, v_sigmoid(v_gelu_tanh_arg(x))); }

/* d/dx: s + x·s(1 - s)·2√(2/π)(1 + 3·0.044715x²) with s = sigmoid(2y). */
INLINE v128_t v_gelu_tanh_grad(v128_t x) {
  sigmoid_pair s = v_sigmoid_pair(v_gelu_tanh_arg(x));
  /* x² capped so the slope stays finite where s(1 - s) is already 0 (only x = ±inf gives inf·0). */
  v128_t x2 = wasm_f32x4_min(wasm_f32x4_mul(x, x), F32(1e30f));
  v128_t slope = wasm_f32x4_mul(F32(1.5957691f), FMA(x2, F32(0.134145f), F32(1.0f)));
  return FMA(wasm_f32x4_mul(x, wasm_f32x4_mul(s.pos, s.neg)), slope, s.pos);
}

INLINE v128_t v_silu(v128_t x) { return wasm_f32x4_mul(x, v_sigmoid(x)); }

/* s·(1 + x·(1 - s)). */
INLINE v128_t v_silu_grad(v128_t x) {
  sigmoid_pair s = v_sigmoid_pair(x);
  return wasm_f32x4_mul(s.pos, FMA(x, s.neg, F32(1.0f)));
}

#endif
