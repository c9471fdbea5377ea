/*
 * Philox4x32-10 uniform fill and dropout, bit for bit the stream of src/compute/cpu/philox.ts:
 * key = (seed low 32, seed high 32), counter = (i/4 low 32, i/4 high 32, 0, 0), element i takes
 * word i % 4. Four counters run side by side in the lanes of four vectors (one per word).
 * Element indices stay below 2^32 in wasm32, so the counter's high word is 0.
 * The normal distribution is left to the JS backend: its Box–Muller uses Math.log/cos/sin in
 * double precision, which these kernels cannot reproduce bit for bit.
 */
#include "common.h"

#define M0 0xd2511f53u
#define M1 0xcd9e8d57u
#define W0 0x9e3779b9u
#define W1 0xbb67ae85u

/* High 32 bits of the four u32 products m·x. */
INLINE v128_t mulhi(v128_t x, v128_t m) {
  v128_t lo = wasm_u64x2_extmul_low_u32x4(x, m), hi = wasm_u64x2_extmul_high_u32x4(x, m);
  return wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7);
}

/* Words of blocks b, b+1, b+2, b+3 in element order: out[4·j + w] = word w of block b + j. */
INLINE void philox16(uint32_t block, uint32_t k0, uint32_t k1, v128_t out[4]) {
  v128_t x0 = wasm_i32x4_add(I32((int32_t)block), wasm_i32x4_make(0, 1, 2, 3));
  v128_t x1 = I32(0), x2 = I32(0), x3 = I32(0);
  v128_t m0 = I32((int32_t)M0), m1 = I32((int32_t)M1);
  for (int r = 0; r < 10; r++) {
    v128_t key0 = I32((int32_t)(k0 + (uint32_t)r * W0)), key1 = I32((int32_t)(k1 + (uint32_t)r * W1));
    v128_t hi0 = mulhi(x0, m0), lo0 = wasm_i32x4_mul(x0, m0);
    v128_t hi1 = mulhi(x2, m1), lo1 = wasm_i32x4_mul(x2, m1);
    x0 = wasm_v128_xor(wasm_v128_xor(hi1, x1), key0);
    x1 = lo1;
    x2 = wasm_v128_xor(wasm_v128_xor(hi0, x3), key1);
    x3 = lo0;
  }
  /* Transpose: lane j of x_w is word w of block j. */
  v128_t t0 = wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7);
  v128_t t2 = wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7);
  out[0] = wasm_i64x2_shuffle(t0, t2, 0, 2);
  out[1] = wasm_i64x2_shuffle(t0, t2, 1, 3);
  out[2] = wasm_i64x2_shuffle(t1, t3, 0, 2);
  out[3] = wasm_i64x2_shuffle(t1, t3, 1, 3);
}

/* u = top 24 bits · 2^-24, exact in f32. */
INLINE v128_t to_uniform(v128_t w) {
  return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_u32x4_shr(w, 8)), F32(5.9604644775390625e-8f));
}

/* Elements [begin, end) of the stream into out (element 0 at out); begin is a multiple of 4.
   Value = low + span·u in two f32 roundings, no FMA (the JS backend's and the GPU's order). */
EXPORT(random_uniform) void random_uniform(int dt, void *out, size_t begin, size_t end, uint32_t k0, uint32_t k1,
                                           float low, float span) {
  v128_t lo = F32(low), sp = F32(span);
  for (size_t i = begin; i < end; i += 16) {
    v128_t w[4];
    philox16((uint32_t)(i / 4), k0, k1, w);
    for (int q = 0; q < 4; q++) {
      size_t at = i + 4 * (size_t)q;
      if (at >= end) break;
      v128_t v = wasm_f32x4_add(lo, wasm_f32x4_mul(sp, to_uniform(w[q])));
      if (at + 4 <= end) store4(dt, (char *)out + at * dtype_size(dt), v);
      else
        for (size_t l = 0; at + l < end; l++) store1(dt, out, at + l, ((float *)&v)[l]);
    }
  }
}

/* Dropout over elements [begin, end): kept where u ≥ threshold, as x·scale (one f32 multiply). */
EXPORT(dropout) void dropout(int dt, const void *x, void *out, size_t begin, size_t end, uint32_t k0, uint32_t k1,
                             float threshold, float scale) {
  v128_t th = F32(threshold), sc = F32(scale);
  size_t es = dtype_size(dt);
  for (size_t i = begin; i < end; i += 16) {
    v128_t w[4];
    philox16((uint32_t)(i / 4), k0, k1, w);
    for (int q = 0; q < 4; q++) {
      size_t at = i + 4 * (size_t)q;
      if (at >= end) break;
      v128_t keep = wasm_f32x4_ge(to_uniform(w[q]), th);
      if (at + 4 <= end) {
        v128_t v = load4(dt, (const char *)x + at * es);
        store4(dt, (char *)out + at * es, wasm_v128_and(wasm_f32x4_mul(v, sc), keep));
      } else {
        for (size_t l = 0; at + l < end; l++) {
          float v = load1(dt, x, at + l) * scale;
          store1(dt, out, at + l, ((int32_t *)&keep)[l] ? v : 0.0f);
        }
      }
    }
  }
}
