/*
 * Vectorised f32 elementary functions for the unary ops, their derivatives, softmax, the matmul
 * epilogue, the GRU and attention. Every function is defined over the whole f32 line: NaN in,
 * NaN out; infinities and subnormals give the limits the float64 definitions give.
 *
 * Polynomials are near-minimax fits made by fit/fit_coefficients.py (coefficients lowest degree
 * first in the comments there); the measured errors are in test/unit/cpu-simd/.
 *
 * Forms chosen so results keep their relative accuracy where a textbook formula cancels:
 * - sigmoid from e = exp(-|x|): σ(x) = 1/(1+e) or e/(1+e), never 1 - something;
 * - tanh' = 4e/(1+e)² with e = exp(-2|x|), not 1 - tanh²;
 * - Φ(-u) = φ(u)·M(u) with the Mills ratio M fitted as t·P(t), t = 1/(1 + 0.3u), and
 *   φ(u) = exp(-u²/2) computed from the exact product u·u = p + err (Dekker);
 * - GELU's tanh form as x·σ(2y) (1 + tanh y = 2σ(2y)), with 2y formed in f64;
 * - tiny results: exp returns a normal mantissa and a power of two, applied last (one rounding
 *   into the subnormals);
 * - the derivatives of GELU (both forms) and SiLU cross zero; near the root they are evaluated
 *   as (x - x0)·Q(x) with x0 in two f32 parts.
 */
#ifndef GPUCOMPUTE_WASM_VMATH_H
#define GPUCOMPUTE_WASM_VMATH_H

#include "common.h"

INLINE v128_t v_abs(v128_t x) { return wasm_f32x4_abs(x); }

/* Sign bit of x ORed into y (y ≥ 0). */
INLINE v128_t v_with_sign(v128_t y, v128_t x) {
  return wasm_v128_or(y, wasm_v128_and(x, I32((int32_t)0x80000000u)));
}

/* e^x as p·s: p = e^r·2^(n∓64), always a normal number, and s = 2^±64. Callers multiply p by a
   normal-range factor first and apply s last, so a result that lands among the subnormals (or
   overflows) is rounded once. x = n·ln2 + r with |r| ≤ ln2/2; e^r by Horner's rule of degree 6.
   Written for what V8 emits on x64 (measured with --print-wasm-code): n comes from adding
   1.5·2^23, which rounds x·log2(e) to an integer held in the low mantissa bits, and 2^(n±64) is
   built from those bits, because wasm's saturating float→int conversion and its NaN-exact min/max
   become long instruction sequences; pmax/pmin (one instruction each, NaN passes) clamp x
   to [-128, 89], beyond which e^x is 0 or inf in f32. */
#define TWO_M64 5.42101086e-20f /* 2^-64 */

typedef struct {
  v128_t p, s;
} exp_parts;

/* p·2^(n + k), the power built from t (n in its low mantissa bits) as exponent bits; a float
   multiply, so a NaN p stays NaN. n + k stays within [-121, 127]. */
INLINE v128_t exp_scale(v128_t p, v128_t t, v128_t k) {
  v128_t e = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_sub(t, I32(0x4b400000 - 127)), k), 23);
  return wasm_f32x4_mul(p, e);
}

/* e^r for |r| ≤ ln2/2 and the reduction; `nonpos` (a compile-time constant) promises x ≤ 43. */
INLINE exp_parts exp_parts_of(v128_t x, int nonpos) {
  x = wasm_f32x4_pmax(x, F32(-128.0f));
  if (!nonpos) x = wasm_f32x4_pmin(x, F32(89.0f));
  v128_t t = FMA(x, F32(1.44269504f), F32(12582912.0f));
  v128_t n = wasm_f32x4_sub(t, F32(12582912.0f));
  v128_t r = FMA(n, F32(-0.693359375f), x); /* n·ln2_hi is exact: ln2_hi has 9 bits */
  r = FMA(n, F32(2.12194440e-4f), r);
  v128_t p = FMA(F32(0.0013814606f), r, F32(0.008368712f));
  p = FMA(p, r, F32(0.04166839f));
  p = FMA(p, r, F32(0.16666521f));
  p = FMA(p, r, F32(0.49999994f));
  p = FMA(p, r, F32(1.0f));
  p = FMA(p, r, F32(1.0f));
  exp_parts e;
  if (nonpos) {
    e.p = exp_scale(p, t, I32(64));
    e.s = F32(TWO_M64);
  } else {
    v128_t pos = wasm_f32x4_gt(x, F32(0.0f));
    e.p = exp_scale(p, t, wasm_i32x4_sub(I32(64), wasm_v128_and(pos, I32(128))));
    e.s = wasm_i32x4_add(I32(0x1f800000), wasm_v128_and(pos, I32(0x40000000))); /* 2^-64 or 2^64 */
  }
  return e;
}

INLINE exp_parts v_exp_parts(v128_t x) { return exp_parts_of(x, 1); }

/* v·2^(±64) of the parts. */
INLINE v128_t v_scale(v128_t v, exp_parts e) { return wasm_f32x4_mul(v, e.s); }

/* e^x for every x. */
INLINE v128_t v_exp(v128_t x) {
  exp_parts e = exp_parts_of(x, 0);
  return wasm_f32x4_mul(e.p, e.s);
}

/* e^x for x ≤ 43 (or NaN, or -inf): every exp(-|x|). */
INLINE v128_t v_exp_nonpos(v128_t x) {
  exp_parts e = exp_parts_of(x, 1);
  return wasm_f32x4_mul(e.p, e.s);
}

/* e^x·2^64 for x ≤ 0 (or NaN, or -inf), a normal number down to x = -128: for softmax and
   attention, whose normalisation cancels the common factor (sums of these are multiplied by 2^-64
   exactly: the row's maximum alone contributes 2^64), and whose small probabilities then round
   once, in the final division. */
INLINE v128_t v_exp_nonpos_2p64(v128_t x) { return exp_parts_of(x, 1).p; }


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

/* The logistic function from e = exp(a)·corr with a = -|z| ≤ 0: big = σ(|z|) = 1/(1 + e) and
   σ(-|z|) = e/(1 + e) kept as small_m with σ(-|z|) = v_scale(small_m, e), never 1 - something. */
typedef struct {
  v128_t big, small_m;
  exp_parts e;
} logistic;

INLINE logistic v_logistic(v128_t a, v128_t corr) {
  logistic l;
  l.e = v_exp_parts(a);
  /* Past -128, exp(a) times any factor up to |a| is 0; the clamped parts would say otherwise. */
  v128_t pc = wasm_v128_andnot(wasm_f32x4_mul(l.e.p, corr), wasm_f32x4_lt(a, F32(-128.0f)));
  l.big = wasm_f32x4_div(F32(1.0f), wasm_f32x4_add(v_scale(pc, l.e), F32(1.0f)));
  l.small_m = wasm_f32x4_mul(pc, l.big);
  return l;
}

INLINE v128_t v_nonneg(v128_t x) { return wasm_f32x4_ge(x, F32(0.0f)); }

INLINE v128_t v_sigmoid(v128_t x) {
  logistic l = v_logistic(wasm_f32x4_neg(v_abs(x)), F32(1.0f));
  return wasm_v128_bitselect(l.big, v_scale(l.small_m, l.e), v_nonneg(x));
}

/* σ(x) and σ(-x) = 1 - σ(x) without the cancellation. */
typedef struct {
  v128_t pos, neg;
} sigmoid_pair;

INLINE sigmoid_pair v_sigmoid_pair(v128_t x) {
  logistic l = v_logistic(wasm_f32x4_neg(v_abs(x)), F32(1.0f));
  v128_t small = v_scale(l.small_m, l.e), nonneg = v_nonneg(x);
  sigmoid_pair s = {wasm_v128_bitselect(l.big, small, nonneg), wasm_v128_bitselect(small, l.big, nonneg)};
  return s;
}

/* σ(x)·σ(-x) = e/(1 + e)², e = exp(-|x|). */
INLINE v128_t v_sigmoid_grad(v128_t x) {
  logistic l = v_logistic(wasm_f32x4_neg(v_abs(x)), F32(1.0f));
  return v_scale(wasm_f32x4_mul(l.small_m, l.big), l.e);
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
  v128_t e = v_exp_nonpos(wasm_f32x4_mul(a, F32(-2.0f)));
  v128_t large = v_with_sign(wasm_f32x4_div(wasm_f32x4_sub(F32(1.0f), e), wasm_f32x4_add(F32(1.0f), e)), x);
  return wasm_v128_bitselect(small, large, wasm_f32x4_lt(a, F32(0.625f)));
}

/* 1 - tanh(x)² = 4e/(1 + e)², e = exp(-2|x|). */
INLINE v128_t v_tanh_grad(v128_t x) {
  logistic l = v_logistic(wasm_f32x4_mul(v_abs(x), F32(-2.0f)), F32(1.0f));
  return v_scale(wasm_f32x4_mul(wasm_f32x4_mul(l.small_m, l.big), F32(4.0f)), l.e);
}

/* log(1 + eˣ) = max(x, 0) + log1p(exp(-|x|)). */
INLINE v128_t v_softplus(v128_t x) {
  return wasm_f32x4_add(wasm_f32x4_max(x, F32(0.0f)), v_log1p_pos(v_exp_nonpos(wasm_f32x4_neg(v_abs(x)))));
}

/* x·σ(x). */
INLINE v128_t v_silu(v128_t x) {
  logistic l = v_logistic(wasm_f32x4_neg(v_abs(x)), F32(1.0f));
  return wasm_v128_bitselect(wasm_f32x4_mul(x, l.big), v_scale(wasm_f32x4_mul(x, l.small_m), l.e), v_nonneg(x));
}

/* Near a root x0 = hi + lo of a derivative: (x - x0)·Q(x - hi), Q of degree 9 fitted on
   |x - hi| < 0.5 (fit/fit_coefficients.py), so the result keeps its relative accuracy where
   the general formula's two terms cancel; elsewhere `general`. */
INLINE v128_t v_root_form(v128_t x, v128_t general, float hi, float lo, const float q[10]) {
  v128_t v = wasm_f32x4_sub(x, F32(hi));
  v128_t p = FMA(F32(q[9]), v, F32(q[8]));
  for (int i = 7; i >= 0; i--) p = FMA(p, v, F32(q[i]));
  v128_t near = wasm_f32x4_lt(v_abs(v), F32(0.5f));
  return wasm_v128_bitselect(wasm_f32x4_mul(wasm_f32x4_sub(v, F32(lo)), p), general, near);
}

/* An even polynomial's value at x², coefficients lowest first (the small-|x| forms). */
INLINE v128_t v_even7(v128_t x, const float c[7]) {
  v128_t s = wasm_f32x4_mul(x, x);
  v128_t p = FMA(F32(c[6]), s, F32(c[5]));
  for (int i = 4; i >= 0; i--) p = FMA(p, s, F32(c[i]));
  return p;
}

/* σ(x)·(1 + x·σ(-x)). */
INLINE v128_t v_silu_grad(v128_t x) {
  static const float q[10] = {0.2178117f, 0.1466488f, 0.018874815f, -0.015222659f, -0.006606617f,
                              0.00012670546f, 0.00079884904f, 0.00018512167f, -4.2504358e-05f, -2.7797782e-05f};
  logistic l = v_logistic(wasm_f32x4_neg(v_abs(x)), F32(1.0f));
  v128_t small = v_scale(l.small_m, l.e);
  v128_t pos = wasm_f32x4_mul(l.big, FMA(x, small, F32(1.0f)));
  v128_t neg = v_scale(wasm_f32x4_mul(l.small_m, FMA(x, l.big, F32(1.0f))), l.e);
  return v_root_form(x, wasm_v128_bitselect(pos, neg, v_nonneg(x)), -1.2784646f, 1.29792825e-08f, q);
}

/* Exact GELU through the normal distribution: E = exp(-x²/2) from the exact product x·x = p + err
   (Dekker: x split into two 12-bit halves), E = exp(-p/2)·(1 - err/2); the lower tail
   Φ(-|x|) = E·q with q = φ's constant·M(|x|), M the Mills ratio fitted as t·P(t), t = 1/(1 + 0.3|x|). */
typedef struct {
  v128_t pc; /* the mantissa part of E, correction included */
  v128_t q;
  exp_parts e;
} normal_parts;

INLINE normal_parts v_normal(v128_t x) {
  v128_t u = wasm_f32x4_min(v_abs(x), F32(20.0f)); /* φ and the tail are 0 in f32 beyond */
  v128_t p = wasm_f32x4_mul(u, u);
  v128_t uh = wasm_v128_and(u, I32((int32_t)0xfffff000u));
  v128_t ul = wasm_f32x4_sub(u, uh);
  v128_t err = wasm_f32x4_add(wasm_f32x4_sub(wasm_f32x4_mul(uh, uh), p), wasm_f32x4_mul(wasm_f32x4_mul(uh, ul), F32(2.0f)));
  err = wasm_f32x4_add(err, wasm_f32x4_mul(ul, ul));
  normal_parts n;
  v128_t half = wasm_f32x4_mul(p, F32(-0.5f));
  n.e = v_exp_parts(half);
  n.pc = wasm_v128_andnot(wasm_f32x4_mul(n.e.p, FMA(err, F32(-0.5f), F32(1.0f))), wasm_f32x4_lt(half, F32(-128.0f)));
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
  n.q = wasm_f32x4_mul(wasm_f32x4_mul(t, m), F32(0.39894228f));
  return n;
}

/* x·Φ(x): x·(1 - tail) above 0, E·(x·q) below (scaled last, so tiny results round once), and
   x·(1/2 + x·R(x²)) for |x| < 1. */
INLINE v128_t v_gelu(v128_t x) {
  static const float r[7] = {0.3989423f, -0.06649038f, 0.009973546f, -0.0011872733f, 0.00011529481f, -9.25358e-06f, 5.3084074e-07f};
  normal_parts n = v_normal(x);
  v128_t pos = wasm_f32x4_mul(x, wasm_f32x4_sub(F32(1.0f), v_scale(wasm_f32x4_mul(n.pc, n.q), n.e)));
  v128_t neg = v_scale(wasm_f32x4_mul(n.pc, wasm_f32x4_mul(x, n.q)), n.e);
  v128_t small = wasm_f32x4_mul(x, FMA(x, v_even7(x, r), F32(0.5f)));
  return wasm_v128_bitselect(small, wasm_v128_bitselect(pos, neg, v_nonneg(x)), wasm_f32x4_lt(v_abs(x), F32(1.0f)));
}

/* Φ(x) + x·φ(x) = [x ≥ 0] + E·(x·φ's constant ∓ q); 1/2 + x·S(x²) for |x| < 1; the root form
   near -0.7518. */
INLINE v128_t v_gelu_grad(v128_t x) {
  static const float q[10] = {0.431494f, 0.38828498f, -0.018199703f, -0.11400815f, -0.014770555f,
                              0.019420436f, 0.0045281863f, -0.0022321285f, -0.00069326564f, 0.00016894811f};
  static const float c[7] = {0.7978846f, -0.26596147f, 0.059841f, -0.009497272f, 0.0011514409f, -0.00010982777f, 7.0504566e-06f};
  normal_parts n = v_normal(x);
  v128_t nonneg = v_nonneg(x);
  v128_t tail = wasm_v128_bitselect(wasm_f32x4_neg(n.q), n.q, nonneg);
  v128_t g = v_scale(wasm_f32x4_mul(n.pc, FMA(x, F32(0.39894228f), tail)), n.e);
  v128_t general = wasm_f32x4_add(wasm_v128_and(nonneg, F32(1.0f)), g);
  v128_t small = FMA(x, v_even7(x, c), F32(0.5f));
  general = wasm_v128_bitselect(small, general, wasm_f32x4_lt(v_abs(x), F32(1.0f)));
  return v_root_form(x, general, -0.75179154f, 1.211445e-08f, q);
}

/* GELU's tanh form: 0.5x(1 + tanh y) = x·σ(z), z = 2y = 2√(2/π)(x + 0.044715x³). z is formed in
   f64 and split into f32 hi + lo; σ's e = exp(-|hi|)·(1 - sign(hi)·lo), so the tail keeps its
   relative accuracy (|z| reaches ~100 before the result underflows). z and x share their sign. */
/* Four f64 lanes (two vectors) → f32 lanes. */
INLINE v128_t f64_demote(v128_t z0, v128_t z1) {
  return wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(z0), wasm_f32x4_demote_f64x2_zero(z1), 0, 1, 4, 5);
}

/* Four f64 lanes → f32 lanes: hi and the rounding left over, lo. */
INLINE void f64_split(v128_t z0, v128_t z1, v128_t *hi, v128_t *lo) {
  v128_t h0 = wasm_f32x4_demote_f64x2_zero(z0), h1 = wasm_f32x4_demote_f64x2_zero(z1);
  v128_t l0 = wasm_f32x4_demote_f64x2_zero(wasm_f64x2_sub(z0, wasm_f64x2_promote_low_f32x4(h0)));
  v128_t l1 = wasm_f32x4_demote_f64x2_zero(wasm_f64x2_sub(z1, wasm_f64x2_promote_low_f32x4(h1)));
  *hi = wasm_i32x4_shuffle(h0, h1, 0, 1, 4, 5);
  *lo = wasm_i32x4_shuffle(l0, l1, 0, 1, 4, 5);
}

/* k·x·(1 + c·x²) in f64 for the four lanes of x. */
INLINE void cubic_f64(v128_t x, double k, double c, v128_t *z0, v128_t *z1) {
  v128_t x0 = wasm_f64x2_promote_low_f32x4(x), x1 = wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(x, x, 2, 3, 0, 1));
  v128_t kv = wasm_f64x2_splat(k), cv = wasm_f64x2_splat(c), one = wasm_f64x2_splat(1.0);
  *z0 = wasm_f64x2_mul(wasm_f64x2_mul(kv, x0), wasm_f64x2_add(one, wasm_f64x2_mul(cv, wasm_f64x2_mul(x0, x0))));
  *z1 = wasm_f64x2_mul(wasm_f64x2_mul(kv, x1), wasm_f64x2_add(one, wasm_f64x2_mul(cv, wasm_f64x2_mul(x1, x1))));
}

INLINE logistic v_gelu_tanh_logistic(v128_t x) {
  v128_t z0, z1, hi, lo;
  cubic_f64(x, 1.5957691216057308, 0.044715, &z0, &z1);
  f64_split(z0, z1, &hi, &lo);
  lo = wasm_v128_and(lo, wasm_f32x4_lt(v_abs(lo), F32(__builtin_inff()))); /* z beyond f32: no correction */
  v128_t corr = wasm_f32x4_sub(F32(1.0f), v_with_sign(v_abs(lo), wasm_v128_xor(lo, hi)));
  return v_logistic(wasm_f32x4_neg(v_abs(hi)), corr);
}

INLINE v128_t v_gelu_tanh(v128_t x) {
  logistic l = v_gelu_tanh_logistic(x);
  return wasm_v128_bitselect(wasm_f32x4_mul(x, l.big), v_scale(wasm_f32x4_mul(x, l.small_m), l.e), v_nonneg(x));
}

/* d/dx = σ(z) + x·σ(z)σ(-z)·2√(2/π)(1 + 3·0.044715x²), in the form above or below 0 that keeps the
   tiny factor outside; the slope x·2√(2/π)(…) in f64, with x capped at ±1e4 (σ(z)σ(-z) is 0 in f32
   long before); the root form near -0.7525; ±inf gives NaN, as the float64 formula does. */
INLINE v128_t v_gelu_tanh_grad(v128_t x) {
  static const float q[10] = {0.43040007f, 0.38751844f, -0.01578289f, -0.113944344f, -0.016617976f,
                              0.019680157f, 0.0052455193f, -0.002408948f, -0.0008543201f, 0.00022677275f};
  logistic l = v_gelu_tanh_logistic(x);
  v128_t z0, z1;
  cubic_f64(wasm_f32x4_min(wasm_f32x4_max(x, F32(-1e4f)), F32(1e4f)), 1.5957691216057308, 0.134145, &z0, &z1);
  v128_t slope = f64_demote(z0, z1);
  v128_t small = v_scale(l.small_m, l.e);
  v128_t pos = wasm_f32x4_mul(l.big, FMA(slope, small, F32(1.0f)));
  v128_t neg = v_scale(wasm_f32x4_mul(l.small_m, FMA(slope, l.big, F32(1.0f))), l.e);
  v128_t r = v_root_form(x, wasm_v128_bitselect(pos, neg, v_nonneg(x)), -0.75246143f, 1.1339628e-08f, q);
  return wasm_v128_bitselect(F32(__builtin_nanf("")), r, wasm_f32x4_eq(v_abs(x), F32(__builtin_inff())));
}

#endif
