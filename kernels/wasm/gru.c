/*
 * One step of a GRU layer's recurrence (src/compute/core/gru-params.ts), given gh = h·W_hhᵀ
 * (an sgemm into f32 [E, B, 3H]): r = σ(gx_r + b_ir + gh_r + b_hr), z likewise,
 * n = tanh(gx_n + b_in + r·(gh_n + b_hn)), h' = (1 - z)·n + z·h, optionally layer-normalised
 * over H, rounded to the state dtype and stored (and into h_last on the last step).
 * 1 - z is σ(-a_z), not a subtraction. Sums follow the JS backend's order.
 * A thread takes rows [r0, r1) of the E·B rows (gru_step), or of f32 states without layer norm
 * also a range of units (gru_gates_f32, for the rollout's tasks).
 */
#include "common.h"
#include "vmath.h"

typedef struct {
  const char *gx;        /* this step's gate inputs; gate g of unit j of (e, b) at e·gx_e + b·gx_b + g·H + j */
  const float *gh;       /* [E, B, 3H] */
  const char *b_ih, *b_hh; /* [E, 3H] or null */
  const char *h_prev;    /* (e, b) row at e·prev_e + b·prev_b */
  char *h_out;           /* (e, b) row at e·out_e + b·out_b */
  char *h_last;          /* dense [E, B, H], or null */
  const char *gamma, *beta; /* [E, H] or null, with layer_norm */
  int32_t gx_e, gx_b, prev_e, prev_b, out_e, out_b;
  int32_t dtype, batch, hidden, layer_norm;
  float eps;
} gru_params;

/* Four rows of H rounded up to a whole vector: the new state (generic path); r, σ(a_z), σ(-a_z)
   and zeros standing in for an absent bias (f32 path). */
EXPORT(gru_scratch_bytes) size_t gru_scratch_bytes(size_t hidden) { return 4 * ((hidden + 3) & ~(size_t)3) * sizeof(float); }

INLINE v128_t bias4(int dt, const char *bias, size_t at, size_t n) {
  return bias ? load_n(dt, bias + at * dtype_size(dt), n) : F32(0.0f);
}

/* ---------------------------------------------------------------- f32 without layer norm
 * The generic path's arithmetic (vmath.h's exp, logistic and tanh, the sums in the same order, so
 * the same bits), shaped for what V8 makes of it (see rows.c's f32 softmax): the constants loaded
 * once from a non-const global, not a v128.const rebuilt at each use, and each pass over a row a
 * small noinline function. Pass 1 takes σ of the r gates and σ(±a_z) of the z gates into scratch,
 * pass 2 the candidate and the update. Took a step of E 5, B 32, H 256 from 390 µs to ~150 µs. */

/* exp's reduction (-128, log2(e), 1.5·2^23, ln2 in two parts), its polynomial from the highest
   degree, 1, 2^-64; tanh's polynomial from the highest degree, 0.625, -2. Not const: see rows.c. */
float gru_constants[19] = {-128.0f,       1.44269504f,  12582912.0f,  -0.693359375f, 2.12194440e-4f,
                           0.0013814606f, 0.008368712f, 0.04166839f,  0.16666521f,   0.49999994f,
                           1.0f,          TWO_M64,      -0.005704968f, 0.020639068f, -0.053739708f,
                           0.13331442f,   -0.3333328f,  0.625f,       -2.0f};
/* exp_scale's exponent offset with its k = 64 folded in, and the sign bit. */
int32_t gru_int_constants[2] = {0x4b400000 - 127 - 64, (int32_t)0x80000000u};

typedef struct {
  v128_t lo, log2e, magic, ln2_hi, ln2_lo, p6, p5, p4, p3, p2, one, two_m64, offset;
} exp_k;

typedef struct {
  v128_t q4, q3, q2, q1, q0, linear_below, minus_two, sign;
} tanh_k;

#define SPLAT(p) wasm_v128_load32_splat(p)

INLINE exp_k exp_k_load(void) {
  const float *k = gru_constants;
  exp_k K = {SPLAT(k),     SPLAT(k + 1), SPLAT(k + 2),  SPLAT(k + 3),  SPLAT(k + 4), SPLAT(k + 5),           SPLAT(k + 6),
             SPLAT(k + 7), SPLAT(k + 8), SPLAT(k + 9), SPLAT(k + 10), SPLAT(k + 11), SPLAT(gru_int_constants)};
  return K;
}

INLINE tanh_k tanh_k_load(void) {
  const float *k = gru_constants + 12;
  tanh_k K = {SPLAT(k), SPLAT(k + 1), SPLAT(k + 2), SPLAT(k + 3), SPLAT(k + 4), SPLAT(k + 5), SPLAT(k + 6), SPLAT(gru_int_constants + 1)};
  return K;
}

/* exp_parts_of(a, 1).p: e^a·2^64 for a ≤ 0, clamped at -128. */
INLINE v128_t exp_p(v128_t a, const exp_k *K) {
  v128_t x = wasm_f32x4_pmax(a, K->lo);
  v128_t t = FMA(x, K->log2e, K->magic);
  v128_t n = wasm_f32x4_sub(t, K->magic);
  v128_t r = FMA(n, K->ln2_hi, x);
  r = FMA(n, K->ln2_lo, r);
  v128_t p = FMA(K->p6, r, K->p5);
  p = FMA(p, r, K->p4);
  p = FMA(p, r, K->p3);
  p = FMA(p, r, K->p2);
  p = FMA(p, r, K->one);
  p = FMA(p, r, K->one);
  return wasm_f32x4_mul(p, wasm_i32x4_shl(wasm_i32x4_sub(t, K->offset), 23));
}

/* v_logistic(-|x|, 1) as values: big = σ(|x|), small = σ(-|x|). */
typedef struct {
  v128_t big, small;
} logistic_f32;

INLINE logistic_f32 logistic_of(v128_t x, const exp_k *K) {
  v128_t a = wasm_f32x4_neg(wasm_f32x4_abs(x));
  v128_t pc = wasm_v128_andnot(exp_p(a, K), wasm_f32x4_lt(a, K->lo));
  logistic_f32 l;
  l.big = wasm_f32x4_div(K->one, wasm_f32x4_add(wasm_f32x4_mul(pc, K->two_m64), K->one));
  l.small = wasm_f32x4_mul(wasm_f32x4_mul(pc, l.big), K->two_m64);
  return l;
}

/* v_tanh. */
INLINE v128_t tanh_of(v128_t x, const exp_k *K, const tanh_k *T) {
  v128_t a = wasm_f32x4_abs(x);
  v128_t s = wasm_f32x4_mul(x, x);
  v128_t p = FMA(T->q4, s, T->q3);
  p = FMA(p, s, T->q2);
  p = FMA(p, s, T->q1);
  p = FMA(p, s, T->q0);
  v128_t small = FMA(wasm_f32x4_mul(x, s), p, x);
  v128_t e = wasm_f32x4_mul(exp_p(wasm_f32x4_mul(a, T->minus_two), K), K->two_m64);
  v128_t ratio = wasm_f32x4_div(wasm_f32x4_sub(K->one, e), wasm_f32x4_add(K->one, e));
  v128_t large = wasm_v128_or(ratio, wasm_v128_and(x, T->sign));
  return wasm_v128_bitselect(small, large, wasm_f32x4_lt(a, T->linear_below));
}

#define NOINLINE static __attribute__((noinline))

/* Pass 1 over n4 vectors of one gate: a = ((gx + b_ih) + gh) + b_hh, pos = σ(a), and when neg is
   not null neg = σ(-a). */
NOINLINE void sigmoid_pass(const float *gx, const float *b_ih, const float *gh, const float *b_hh, float *pos, float *neg, size_t n4) {
  exp_k K = exp_k_load();
  v128_t zero = wasm_f32x4_splat(0.0f);
  for (size_t i = 0; i < 4 * n4; i += 4) {
    v128_t a = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(wasm_v128_load(gx + i), wasm_v128_load(b_ih + i)), wasm_v128_load(gh + i)),
                              wasm_v128_load(b_hh + i));
    logistic_f32 l = logistic_of(a, &K);
    v128_t nonneg = wasm_f32x4_ge(a, zero);
    wasm_v128_store(pos + i, wasm_v128_bitselect(l.big, l.small, nonneg));
    if (neg) wasm_v128_store(neg + i, wasm_v128_bitselect(l.small, l.big, nonneg));
  }
}

/* Pass 2 over n4 vectors: n = tanh((gx + b_in) + r·(gh + b_hn)), h' = σ(-a_z)·n + σ(a_z)·h, into
   out and, when not null, last. */
NOINLINE void update_pass(const float *gx, const float *b_ih, const float *gh, const float *b_hh, const float *r, const float *z_pos,
                          const float *z_neg, const float *prev, float *out, float *last, size_t n4) {
  exp_k K = exp_k_load();
  tanh_k T = tanh_k_load();
  for (size_t i = 0; i < 4 * n4; i += 4) {
    v128_t an = wasm_f32x4_add(wasm_v128_load(gx + i), wasm_v128_load(b_ih + i));
    v128_t hn = wasm_f32x4_add(wasm_v128_load(gh + i), wasm_v128_load(b_hh + i));
    v128_t cand = tanh_of(FMA(wasm_v128_load(r + i), hn, an), &K, &T);
    v128_t h = FMA(wasm_v128_load(z_neg + i), cand, wasm_f32x4_mul(wasm_v128_load(z_pos + i), wasm_v128_load(prev + i)));
    wasm_v128_store(out + i, h);
    if (last) wasm_v128_store(last + i, h);
  }
}

/* Up to three trailing elements, copied into a zero-padded vector. */
INLINE void pad4(float *to, const float *from, size_t n) {
  for (size_t i = 0; i < 4; i++) to[i] = i < n ? from[i] : 0.0f;
}

/* The gates of rows [r0, r1), units [j0, j1), f32 states, no layer norm. */
static void gates_f32(const gru_params *p, size_t r0, size_t r1, size_t j0, size_t j1, float *scratch) {
  size_t H = (size_t)p->hidden, B = (size_t)p->batch, Hp = (H + 3) & ~(size_t)3;
  size_t n = j1 - j0, n4 = n / 4, tail = n % 4, full = 4 * n4;
  float *r = scratch, *z_pos = scratch + Hp, *z_neg = scratch + 2 * Hp, *zeros = scratch + 3 * Hp;
  for (size_t i = 0; i < n; i++) zeros[i] = 0.0f;
  for (size_t row = r0; row < r1; row++) {
    size_t e = row / B, b = row % B;
    const float *gx = (const float *)p->gx + e * (size_t)p->gx_e + b * (size_t)p->gx_b + j0;
    const float *gh = p->gh + row * 3 * H + j0;
    const float *b_ih[3], *b_hh[3];
    for (size_t g = 0; g < 3; g++) {
      b_ih[g] = p->b_ih ? (const float *)p->b_ih + e * 3 * H + g * H + j0 : zeros;
      b_hh[g] = p->b_hh ? (const float *)p->b_hh + e * 3 * H + g * H + j0 : zeros;
    }
    const float *prev = (const float *)p->h_prev + e * (size_t)p->prev_e + b * (size_t)p->prev_b + j0;
    float *out = (float *)p->h_out + e * (size_t)p->out_e + b * (size_t)p->out_b + j0;
    float *last = p->h_last ? (float *)p->h_last + row * H + j0 : 0;
    sigmoid_pass(gx, b_ih[0], gh, b_hh[0], r, 0, n4);
    sigmoid_pass(gx + H, b_ih[1], gh + H, b_hh[1], z_pos, z_neg, n4);
    update_pass(gx + 2 * H, b_ih[2], gh + 2 * H, b_hh[2], r, z_pos, z_neg, prev, out, last, n4);
    if (tail) {
      float x[4], bi[4], h[4], bh[4], pv[4], o[4];
      pad4(x, gx + full, tail), pad4(bi, b_ih[0] + full, tail), pad4(h, gh + full, tail), pad4(bh, b_hh[0] + full, tail);
      sigmoid_pass(x, bi, h, bh, r + full, 0, 1);
      pad4(x, gx + H + full, tail), pad4(bi, b_ih[1] + full, tail), pad4(h, gh + H + full, tail), pad4(bh, b_hh[1] + full, tail);
      sigmoid_pass(x, bi, h, bh, z_pos + full, z_neg + full, 1);
      pad4(x, gx + 2 * H + full, tail), pad4(bi, b_ih[2] + full, tail), pad4(h, gh + 2 * H + full, tail), pad4(bh, b_hh[2] + full, tail);
      pad4(pv, prev + full, tail);
      update_pass(x, bi, h, bh, r + full, z_pos + full, z_neg + full, pv, o, 0, 1);
      for (size_t i = 0; i < tail; i++) {
        out[full + i] = o[i];
        if (last) last[full + i] = o[i];
      }
    }
  }
}

/* gru_step's f32 path without layer norm, for units [j0, j1) only. */
EXPORT(gru_gates_f32) void gru_gates_f32(const gru_params *p, size_t r0, size_t r1, size_t j0, size_t j1, float *scratch) {
  gates_f32(p, r0, r1, j0, j1, scratch);
}

/* ---------------------------------------------------------------- every dtype */

EXPORT(gru_step) void gru_step(const gru_params *p, size_t r0, size_t r1, float *scratch) {
  int dt = p->dtype;
  if (dt == DT_F32 && !p->layer_norm) {
    gates_f32(p, r0, r1, 0, (size_t)p->hidden, scratch);
    return;
  }
  size_t es = dtype_size(dt), H = (size_t)p->hidden, B = (size_t)p->batch;
  for (size_t row = r0; row < r1; row++) {
    size_t e = row / B, b = row % B;
    const char *gx = p->gx + (e * (size_t)p->gx_e + b * (size_t)p->gx_b) * es;
    const float *gh = p->gh + row * 3 * H;
    const char *prev = p->h_prev + (e * (size_t)p->prev_e + b * (size_t)p->prev_b) * es;
    size_t bias_row = e * 3 * H;
    for (size_t j = 0; j < H; j += 4) {
      size_t n = H - j < 4 ? H - j : 4;
      v128_t ar = wasm_f32x4_add(load_n(dt, gx + j * es, n), bias4(dt, p->b_ih, bias_row + j, n));
      ar = wasm_f32x4_add(wasm_f32x4_add(ar, load_n(DT_F32, gh + j, n)), bias4(dt, p->b_hh, bias_row + j, n));
      v128_t az = wasm_f32x4_add(load_n(dt, gx + (H + j) * es, n), bias4(dt, p->b_ih, bias_row + H + j, n));
      az = wasm_f32x4_add(wasm_f32x4_add(az, load_n(DT_F32, gh + H + j, n)), bias4(dt, p->b_hh, bias_row + H + j, n));
      v128_t an = wasm_f32x4_add(load_n(dt, gx + (2 * H + j) * es, n), bias4(dt, p->b_ih, bias_row + 2 * H + j, n));
      v128_t hn = wasm_f32x4_add(load_n(DT_F32, gh + 2 * H + j, n), bias4(dt, p->b_hh, bias_row + 2 * H + j, n));
      v128_t r = v_sigmoid(ar);
      sigmoid_pair z = v_sigmoid_pair(az);
      v128_t cand = v_tanh(FMA(r, hn, an));
      v128_t h = FMA(z.neg, cand, wasm_f32x4_mul(z.pos, load_n(dt, prev + j * es, n)));
      wasm_v128_store(scratch + j, h); /* scratch holds H rounded up to 4 */
    }
    if (p->layer_norm) {
      double sum = 0, squares = 0;
      for (size_t j = 0; j < H; j++) sum += scratch[j];
      double mean = sum / (double)H;
      for (size_t j = 0; j < H; j++) squares += (scratch[j] - mean) * (scratch[j] - mean);
      double inv_std = 1.0 / __builtin_sqrt(squares / (double)H + (double)p->eps);
      for (size_t j = 0; j < H; j++) {
        float v = (float)((scratch[j] - mean) * inv_std);
        if (p->gamma) v *= load1(dt, p->gamma, e * H + j);
        if (p->beta) v += load1(dt, p->beta, e * H + j);
        scratch[j] = v;
      }
    }
    char *out = p->h_out + (e * (size_t)p->out_e + b * (size_t)p->out_b) * es;
    char *last = p->h_last ? p->h_last + row * H * es : 0;
    for (size_t j = 0; j < H; j += 4) {
      size_t n = H - j < 4 ? H - j : 4;
      v128_t v = wasm_v128_load(scratch + j);
      store_n(dt, out + j * es, v, n);
      if (last) store_n(dt, last + j * es, v, n);
    }
  }
}
