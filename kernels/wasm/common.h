/*
 * Shared by every kernel of the WebAssembly SIMD library: exports, dtype codes, the f16/bf16
 * conversions and the multiply-add that becomes relaxed SIMD's FMA in the relaxed build.
 *
 * Kernels take byte offsets into the one shared linear memory (plain pointers here) and element
 * counts. They never allocate: scratch space comes from the caller (one region per thread).
 * Built with -ffp-contract=off, so a*b+c is two roundings unless FMA() is written out.
 */
#ifndef GPUCOMPUTE_WASM_COMMON_H
#define GPUCOMPUTE_WASM_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>

#define EXPORT(name) __attribute__((export_name(#name), visibility("default")))
#define INLINE static inline __attribute__((always_inline))

/* Element types; the same numbering as src/compute/cpu/simd/codes.ts. */
enum { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2, DT_I32 = 3 };

INLINE size_t dtype_size(int dt) { return (dt == DT_F16 || dt == DT_BF16) ? 2 : 4; }

/* a*b + c: one fused rounding in the relaxed build (where the engine has FMA), two otherwise. */
#ifdef __wasm_relaxed_simd__
#define FMA(a, b, c) wasm_f32x4_relaxed_madd((a), (b), (c))
#else
#define FMA(a, b, c) wasm_f32x4_add(wasm_f32x4_mul((a), (b)), (c))
#endif

#define F32(x) wasm_f32x4_splat(x)
#define I32(x) wasm_i32x4_splat(x)

/* ---------------------------------------------------------------- 16-bit floats
 * Bit for bit the conversions of src/compute/core/dtype.ts: widening is exact (an f16 NaN becomes
 * the canonical f32 NaN 0x7FC00000, as the JS table stores it; a bf16 keeps its bits), narrowing
 * rounds to nearest even, overflows to infinity, and turns every NaN into 0x7FFF.
 */

/* Four f16 patterns (zero-extended in 32-bit lanes) → f32. */
INLINE v128_t f16_to_f32(v128_t h) {
  v128_t sign = wasm_i32x4_shl(wasm_v128_and(h, I32(0x8000)), 16);
  v128_t em = wasm_v128_and(h, I32(0x7fff));
  /* Exponent and mantissa moved into f32 position, then scaled by 2^112: exact for normal and
     subnormal halves alike (a subnormal half lands on an f32 subnormal first). */
  v128_t finite = wasm_f32x4_mul(wasm_i32x4_shl(em, 13), wasm_i32x4_splat(0x77800000));
  v128_t value = wasm_v128_or(finite, sign);
  v128_t special = wasm_i32x4_ge(em, I32(0x7c00));
  v128_t inf = wasm_v128_or(I32(0x7f800000), sign);
  v128_t is_nan = wasm_i32x4_gt(em, I32(0x7c00));
  value = wasm_v128_bitselect(inf, value, special);
  return wasm_v128_bitselect(I32(0x7fc00000), value, is_nan);
}

/* Four f32 → f16 patterns in 32-bit lanes. */
INLINE v128_t f32_to_f16(v128_t f) {
  v128_t sign = wasm_u32x4_shr(wasm_v128_and(f, I32((int32_t)0x80000000u)), 16);
  v128_t a = wasm_v128_and(f, I32(0x7fffffff));
  /* Results that are f16 subnormals (|f| < 2^-14): adding 0.5 rounds the value to a multiple of
     2^-24 with the FPU's own round-to-nearest-even, leaving the half's bits in the mantissa. */
  v128_t sub = wasm_i32x4_sub(wasm_f32x4_add(a, I32(0x3f000000)), I32(0x3f000000));
  /* Normal results: rebias the exponent and round the 13 dropped bits to nearest even. */
  v128_t odd = wasm_v128_and(wasm_u32x4_shr(a, 13), I32(1));
  v128_t norm = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(a, I32((int32_t)0xc8000fffu)), odd), 13);
  v128_t h = wasm_v128_bitselect(sub, norm, wasm_i32x4_lt(a, I32(0x38800000)));
  h = wasm_v128_bitselect(I32(0x7c00), h, wasm_i32x4_ge(a, I32(0x47800000)));
  h = wasm_v128_or(h, sign);
  return wasm_v128_bitselect(I32(0x7fff), h, wasm_i32x4_gt(a, I32(0x7f800000)));
}

/* Four bf16 patterns (zero-extended) → f32: the top half of the f32 bits. */
INLINE v128_t bf16_to_f32(v128_t h) { return wasm_i32x4_shl(h, 16); }

/* Four f32 → bf16 patterns: round to nearest even by adding 0x7FFF plus the lowest kept bit. */
INLINE v128_t f32_to_bf16(v128_t f) {
  v128_t odd = wasm_v128_and(wasm_u32x4_shr(f, 16), I32(1));
  v128_t r = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(f, I32(0x7fff)), odd), 16);
  v128_t nan = wasm_i32x4_gt(wasm_v128_and(f, I32(0x7fffffff)), I32(0x7f800000));
  return wasm_v128_bitselect(I32(0x7fff), r, nan);
}

/* ---------------------------------------------------------------- loads and stores
 * Elementwise loops go 8 elements at a time for every dtype (one 16-byte load of 16-bit data),
 * as two f32x4 halves. Pointers may be 2-byte aligned; wasm loads have no alignment requirement.
 */
typedef struct {
  v128_t lo, hi;
} f32x8;

INLINE f32x8 load8(int dt, const void *p) {
  f32x8 r;
  switch (dt) {
    case DT_F32:
      r.lo = wasm_v128_load(p);
      r.hi = wasm_v128_load((const char *)p + 16);
      break;
    case DT_F16:
      r.lo = f16_to_f32(wasm_u32x4_load16x4(p));
      r.hi = f16_to_f32(wasm_u32x4_load16x4((const char *)p + 8));
      break;
    case DT_BF16:
      r.lo = bf16_to_f32(wasm_u32x4_load16x4(p));
      r.hi = bf16_to_f32(wasm_u32x4_load16x4((const char *)p + 8));
      break;
    default: /* DT_I32: i32 → f32 rounds to nearest, as JS's Float32Array.from does. */
      r.lo = wasm_f32x4_convert_i32x4(wasm_v128_load(p));
      r.hi = wasm_f32x4_convert_i32x4(wasm_v128_load((const char *)p + 16));
      break;
  }
  return r;
}

INLINE void store8(int dt, void *p, f32x8 v) {
  switch (dt) {
    case DT_F32:
      wasm_v128_store(p, v.lo);
      wasm_v128_store((char *)p + 16, v.hi);
      break;
    case DT_F16:
      wasm_v128_store(p, wasm_u16x8_narrow_i32x4(f32_to_f16(v.lo), f32_to_f16(v.hi)));
      break;
    case DT_BF16:
      wasm_v128_store(p, wasm_u16x8_narrow_i32x4(f32_to_bf16(v.lo), f32_to_bf16(v.hi)));
      break;
    default: /* DT_I32: truncate, saturate, NaN → 0. */
      wasm_v128_store(p, wasm_i32x4_trunc_sat_f32x4(v.lo));
      wasm_v128_store((char *)p + 16, wasm_i32x4_trunc_sat_f32x4(v.hi));
      break;
  }
}

/* Four elements (f32 lanes); the 16-bit loads read 8 bytes. */
INLINE v128_t load4(int dt, const void *p) {
  switch (dt) {
    case DT_F32:
      return wasm_v128_load(p);
    case DT_F16:
      return f16_to_f32(wasm_u32x4_load16x4(p));
    case DT_BF16:
      return bf16_to_f32(wasm_u32x4_load16x4(p));
    default:
      return wasm_f32x4_convert_i32x4(wasm_v128_load(p));
  }
}

INLINE void store4(int dt, void *p, v128_t v) {
  switch (dt) {
    case DT_F32:
      wasm_v128_store(p, v);
      break;
    case DT_F16:
      wasm_v128_store64_lane(p, wasm_u16x8_narrow_i32x4(f32_to_f16(v), f32_to_f16(v)), 0);
      break;
    case DT_BF16:
      wasm_v128_store64_lane(p, wasm_u16x8_narrow_i32x4(f32_to_bf16(v), f32_to_bf16(v)), 0);
      break;
    default:
      wasm_v128_store(p, wasm_i32x4_trunc_sat_f32x4(v));
      break;
  }
}

/* One element, through the vector conversions so a tail element rounds like the body. */
INLINE float load1(int dt, const void *p, size_t i) {
  switch (dt) {
    case DT_F32:
      return ((const float *)p)[i];
    case DT_F16:
      return wasm_f32x4_extract_lane(f16_to_f32(I32(((const uint16_t *)p)[i])), 0);
    case DT_BF16:
      return wasm_f32x4_extract_lane(bf16_to_f32(I32(((const uint16_t *)p)[i])), 0);
    default:
      return (float)((const int32_t *)p)[i];
  }
}

INLINE void store1(int dt, void *p, size_t i, float v) {
  switch (dt) {
    case DT_F32:
      ((float *)p)[i] = v;
      break;
    case DT_F16:
      ((uint16_t *)p)[i] = (uint16_t)wasm_i32x4_extract_lane(f32_to_f16(F32(v)), 0);
      break;
    case DT_BF16:
      ((uint16_t *)p)[i] = (uint16_t)wasm_i32x4_extract_lane(f32_to_bf16(F32(v)), 0);
      break;
    default:
      ((int32_t *)p)[i] = wasm_i32x4_extract_lane(wasm_i32x4_trunc_sat_f32x4(F32(v)), 0);
      break;
  }
}

/* Up to four elements (n < 4 pads with zeros), and the matching partial store. */
INLINE v128_t load_n(int dt, const void *p, size_t n) {
  if (n >= 4) return load4(dt, p);
  float t[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) t[i] = load1(dt, p, i);
  return wasm_v128_load(t);
}

INLINE void store_n(int dt, void *p, v128_t v, size_t n) {
  if (n >= 4) {
    store4(dt, p, v);
    return;
  }
  for (size_t i = 0; i < n; i++) store1(dt, p, i, ((float *)&v)[i]);
}

/* Horizontal reductions of one vector. */
INLINE float hsum(v128_t v) {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

/* Maximum of the four lanes; NaN in any lane gives NaN (wasm's f32x4.max propagates it). */
INLINE float hmax(v128_t v) {
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

/* Copies n bytes (memory.copy; no libc here). */
INLINE void copy_bytes(void *dst, const void *src, size_t n) { __builtin_memcpy(dst, src, n); }

#endif
