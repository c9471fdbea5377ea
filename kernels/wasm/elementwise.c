/*
 * Elementwise kernels over n contiguous elements: fill, copy, cast, the unary ops and the
 * activation derivatives. Every loop goes 8 elements at a time; leftover elements run through the
 * same vector code one lane at a time, so an element's result never depends on where a range
 * starts (threads may split anywhere).
 */
#include "common.h"
#include "ops.h"
#include "vmath.h"

/* Fills n elements of elem_size (2 or 4) bytes with the bit pattern `bits`. */
EXPORT(fill) void fill(void *dst, size_t n, uint32_t bits, int elem_size) {
  char *p = dst;
  size_t bytes = n * (size_t)elem_size;
  v128_t v = elem_size == 2 ? wasm_i16x8_splat((int16_t)bits) : I32((int32_t)bits);
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    wasm_v128_store(p + i, v);
    wasm_v128_store(p + i + 16, v);
    wasm_v128_store(p + i + 32, v);
    wasm_v128_store(p + i + 48, v);
  }
  for (; i < bytes; i += (size_t)elem_size) {
    if (elem_size == 2) *(uint16_t *)(p + i) = (uint16_t)bits;
    else *(uint32_t *)(p + i) = bits;
  }
}

/* Byte copy with memmove's meaning (memory.copy). */
EXPORT(copy) void copy(void *dst, const void *src, size_t bytes) { __builtin_memmove(dst, src, bytes); }

/* Element conversion through f32: rounding to nearest even into f16/bf16, truncation with
   saturation into i32 (NaN → 0). Same dtypes never get here (that is a copy). */
EXPORT(cast) void cast(const void *src, int sdt, void *dst, int ddt, size_t n) {
  const char *s = src;
  char *d = dst;
  size_t ss = dtype_size(sdt), ds = dtype_size(ddt), i = 0;
  for (; i + 8 <= n; i += 8) store8(ddt, d + i * ds, load8(sdt, s + i * ss));
  for (; i < n; i++) store1(ddt, d, i, load1(sdt, s, i));
}

/* ---------------------------------------------------------------- unary ops */

typedef v128_t (*unary_fn)(v128_t x, v128_t aux);

/* x·alpha in double precision rounded once to f32, as JS computes `alpha * x` into a Float32Array
   (alpha, e.g. 0.01, is not an f32 value); aux holds alpha in both f64 lanes. */
INLINE v128_t mul_f64(v128_t x, v128_t alpha) {
  v128_t lo = wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(x), alpha);
  v128_t hi = wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(x, x, 2, 3, 0, 1)), alpha);
  return wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 1, 4, 5);
}

INLINE v128_t u_neg(v128_t x, v128_t aux) { (void)aux; return wasm_f32x4_neg(x); }
INLINE v128_t u_abs(v128_t x, v128_t aux) { (void)aux; return wasm_f32x4_abs(x); }
INLINE v128_t u_exp(v128_t x, v128_t aux) { (void)aux; return v_exp(x); }
INLINE v128_t u_log(v128_t x, v128_t aux) { (void)aux; return v_log(x); }
INLINE v128_t u_sqrt(v128_t x, v128_t aux) { (void)aux; return wasm_f32x4_sqrt(x); }
INLINE v128_t u_rsqrt(v128_t x, v128_t aux) { (void)aux; return wasm_f32x4_div(F32(1.0f), wasm_f32x4_sqrt(x)); }
/* max(x, 0) keeps NaN and maps -0 to +0, as Math.max does. */
INLINE v128_t u_relu(v128_t x, v128_t aux) { (void)aux; return wasm_f32x4_max(x, F32(0.0f)); }
INLINE v128_t u_leaky_relu(v128_t x, v128_t aux) {
  return wasm_v128_bitselect(x, mul_f64(x, aux), wasm_f32x4_gt(x, F32(0.0f)));
}
INLINE v128_t u_sigmoid(v128_t x, v128_t aux) { (void)aux; return v_sigmoid(x); }
INLINE v128_t u_tanh(v128_t x, v128_t aux) { (void)aux; return v_tanh(x); }
INLINE v128_t u_gelu(v128_t x, v128_t aux) { (void)aux; return v_gelu(x); }
INLINE v128_t u_gelu_tanh(v128_t x, v128_t aux) { (void)aux; return v_gelu_tanh(x); }
INLINE v128_t u_silu(v128_t x, v128_t aux) { (void)aux; return v_silu(x); }
INLINE v128_t u_softplus(v128_t x, v128_t aux) { (void)aux; return v_softplus(x); }

INLINE void map_unary_dt(int dt, const char *x, char *y, size_t n, unary_fn f, v128_t aux) {
  size_t es = dtype_size(dt), i = 0;
  for (; i + 8 <= n; i += 8) {
    f32x8 v = load8(dt, x + i * es);
    v.lo = f(v.lo, aux);
    v.hi = f(v.hi, aux);
    store8(dt, y + i * es, v);
  }
  for (; i < n; i++) store1(dt, y, i, wasm_f32x4_extract_lane(f(F32(load1(dt, x, i)), aux), 0));
}

/* One loop per dtype, so the conversions are resolved at compile time. */
INLINE void map_unary(int dt, const void *x, void *y, size_t n, unary_fn f, v128_t aux) {
  switch (dt) {
    case DT_F32: map_unary_dt(DT_F32, x, y, n, f, aux); break;
    case DT_F16: map_unary_dt(DT_F16, x, y, n, f, aux); break;
    default: map_unary_dt(DT_BF16, x, y, n, f, aux); break;
  }
}

/* i32 neg and abs wrap: INT_MIN maps to itself. */
static void unary_i32(int op, const int32_t *x, int32_t *y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v128_t v = wasm_v128_load(x + i);
    wasm_v128_store(y + i, op == U_NEG ? wasm_i32x4_neg(v) : wasm_i32x4_abs(v));
  }
  for (; i < n; i++) {
    uint32_t v = (uint32_t)x[i];
    y[i] = (int32_t)(op == U_NEG || x[i] < 0 ? 0u - v : v);
  }
}

/* y = op(x) over n elements of dtype dt; alpha is leakyRelu's slope. */
EXPORT(unary) void unary(int op, int dt, const void *x, void *y, size_t n, double alpha) {
  if (dt == DT_I32) {
    unary_i32(op, x, y, n);
    return;
  }
  v128_t aux = wasm_f64x2_splat(alpha);
  switch (op) {
    case U_NEG: map_unary(dt, x, y, n, u_neg, aux); break;
    case U_ABS: map_unary(dt, x, y, n, u_abs, aux); break;
    case U_EXP: map_unary(dt, x, y, n, u_exp, aux); break;
    case U_LOG: map_unary(dt, x, y, n, u_log, aux); break;
    case U_SQRT: map_unary(dt, x, y, n, u_sqrt, aux); break;
    case U_RSQRT: map_unary(dt, x, y, n, u_rsqrt, aux); break;
    case U_RELU: map_unary(dt, x, y, n, u_relu, aux); break;
    case U_LEAKY_RELU: map_unary(dt, x, y, n, u_leaky_relu, aux); break;
    case U_SIGMOID: map_unary(dt, x, y, n, u_sigmoid, aux); break;
    case U_TANH: map_unary(dt, x, y, n, u_tanh, aux); break;
    case U_GELU: map_unary(dt, x, y, n, u_gelu, aux); break;
    case U_GELU_TANH: map_unary(dt, x, y, n, u_gelu_tanh, aux); break;
    case U_SILU: map_unary(dt, x, y, n, u_silu, aux); break;
    default: map_unary(dt, x, y, n, u_softplus, aux); break;
  }
}

/* ---------------------------------------------------------------- activation derivatives
 * out = dy·f'(x). relu's and leakyRelu's derivatives are exact (1, 0 or the slope, NaN for NaN
 * x), so those two match the JS backend bit for bit.
 */

typedef v128_t (*grad_fn)(v128_t x, v128_t dy, v128_t aux);

INLINE v128_t g_relu(v128_t x, v128_t dy, v128_t aux) {
  (void)aux;
  v128_t d = wasm_v128_bitselect(F32(1.0f), F32(0.0f), wasm_f32x4_gt(x, F32(0.0f)));
  d = wasm_v128_bitselect(F32(__builtin_nanf("")), d, wasm_f32x4_ne(x, x));
  return wasm_f32x4_mul(dy, d);
}
INLINE v128_t g_leaky_relu(v128_t x, v128_t dy, v128_t aux) {
  v128_t r = wasm_v128_bitselect(dy, mul_f64(dy, aux), wasm_f32x4_gt(x, F32(0.0f)));
  return wasm_v128_bitselect(F32(__builtin_nanf("")), r, wasm_f32x4_ne(x, x));
}
INLINE v128_t g_sigmoid(v128_t x, v128_t dy, v128_t aux) { (void)aux; return wasm_f32x4_mul(dy, v_sigmoid_grad(x)); }
INLINE v128_t g_tanh(v128_t x, v128_t dy, v128_t aux) { (void)aux; return wasm_f32x4_mul(dy, v_tanh_grad(x)); }
INLINE v128_t g_gelu(v128_t x, v128_t dy, v128_t aux) { (void)aux; return wasm_f32x4_mul(dy, v_gelu_grad(x)); }
INLINE v128_t g_gelu_tanh(v128_t x, v128_t dy, v128_t aux) { (void)aux; return wasm_f32x4_mul(dy, v_gelu_tanh_grad(x)); }
INLINE v128_t g_silu(v128_t x, v128_t dy, v128_t aux) { (void)aux; return wasm_f32x4_mul(dy, v_silu_grad(x)); }
INLINE v128_t g_softplus(v128_t x, v128_t dy, v128_t aux) { (void)aux; return wasm_f32x4_mul(dy, v_sigmoid(x)); }

INLINE void map_grad_dt(int dt, const char *x, const char *dy, char *y, size_t n, grad_fn f, v128_t aux) {
  size_t es = dtype_size(dt), i = 0;
  for (; i + 8 <= n; i += 8) {
    f32x8 v = load8(dt, x + i * es), d = load8(dt, dy + i * es);
    v.lo = f(v.lo, d.lo, aux);
    v.hi = f(v.hi, d.hi, aux);
    store8(dt, y + i * es, v);
  }
  for (; i < n; i++) {
    v128_t r = f(F32(load1(dt, x, i)), F32(load1(dt, dy, i)), aux);
    store1(dt, y, i, wasm_f32x4_extract_lane(r, 0));
  }
}

INLINE void map_grad(int dt, const void *x, const void *dy, void *y, size_t n, grad_fn f, v128_t aux) {
  switch (dt) {
    case DT_F32: map_grad_dt(DT_F32, x, dy, y, n, f, aux); break;
    case DT_F16: map_grad_dt(DT_F16, x, dy, y, n, f, aux); break;
    default: map_grad_dt(DT_BF16, x, dy, y, n, f, aux); break;
  }
}

/* out = dy·f'(x) over n elements (x, dy, out of dtype dt); alpha is leakyRelu's slope. */
EXPORT(activation_grad) void activation_grad(int op, int dt, const void *x, const void *dy, void *out, size_t n, double alpha) {
  v128_t aux = wasm_f64x2_splat(alpha);
  switch (op) {
    case G_RELU: map_grad(dt, x, dy, out, n, g_relu, aux); break;
    case G_LEAKY_RELU: map_grad(dt, x, dy, out, n, g_leaky_relu, aux); break;
    case G_SIGMOID: map_grad(dt, x, dy, out, n, g_sigmoid, aux); break;
    case G_TANH: map_grad(dt, x, dy, out, n, g_tanh, aux); break;
    case G_GELU: map_grad(dt, x, dy, out, n, g_gelu, aux); break;
    case G_GELU_TANH: map_grad(dt, x, dy, out, n, g_gelu_tanh, aux); break;
    case G_SILU: map_grad(dt, x, dy, out, n, g_silu, aux); break;
    default: map_grad(dt, x, dy, out, n, g_softplus, aux); break;
  }
}
