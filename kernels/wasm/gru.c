/*
 * One step of a GRU layer's recurrence (src/compute/core/gru-params.ts), given gh = h·W_hhᵀ
 * (an sgemm into f32 [E, B, 3H]): r = σ(gx_r + b_ir + gh_r + b_hr), z likewise,
 * n = tanh(gx_n + b_in + r·(gh_n + b_hn)), h' = (1 - z)·n + z·h, optionally layer-normalised
 * over H, rounded to the state dtype and stored (and into h_last on the last step).
 * 1 - z is σ(-a_z), not a subtraction. Sums follow the JS backend's order.
 * A thread takes rows [r0, r1) of the E·B rows.
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

/* The new state of one row, H rounded up to a whole vector. */
EXPORT(gru_scratch_bytes) size_t gru_scratch_bytes(size_t hidden) { return ((hidden + 3) & ~(size_t)3) * sizeof(float); }

INLINE v128_t bias4(int dt, const char *bias, size_t at, size_t n) {
  return bias ? load_n(dt, bias + at * dtype_size(dt), n) : F32(0.0f);
}

EXPORT(gru_step) void gru_step(const gru_params *p, size_t r0, size_t r1, float *scratch) {
  int dt = p->dtype;
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
