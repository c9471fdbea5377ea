/*
 * Swaps the last two dims of [batch, rows, cols] by moving raw element bits (any dtype of 2 or 4
 * bytes). Work is cut into strips of STRIP source rows of one matrix; a thread takes strips
 * [s0, s1) (strip s is matrix s / strips_per_matrix). Inside a strip, 4x4 (32-bit) or 8x8
 * (16-bit) blocks are transposed in registers, so both sides move 16 bytes at a time.
 */
#include "common.h"

#define STRIP 32

/* Column blocks outside, rows inside: each block writes whole 64-byte runs of destination rows
   while the strip's source lines stay in L1. */
static void strip32(const uint32_t *src, uint32_t *dst, size_t rows, size_t cols, size_t r0, size_t r1) {
  size_t rv = r0 + ((r1 - r0) & ~(size_t)3), c = 0;
  for (; c + 4 <= cols; c += 4) {
    for (size_t r = r0; r < rv; r += 4) {
      v128_t a = wasm_v128_load(src + r * cols + c), b = wasm_v128_load(src + (r + 1) * cols + c);
      v128_t e = wasm_v128_load(src + (r + 2) * cols + c), f = wasm_v128_load(src + (r + 3) * cols + c);
      v128_t ab0 = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab1 = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
      v128_t ef0 = wasm_i32x4_shuffle(e, f, 0, 4, 1, 5), ef1 = wasm_i32x4_shuffle(e, f, 2, 6, 3, 7);
      wasm_v128_store(dst + c * rows + r, wasm_i64x2_shuffle(ab0, ef0, 0, 2));
      wasm_v128_store(dst + (c + 1) * rows + r, wasm_i64x2_shuffle(ab0, ef0, 1, 3));
      wasm_v128_store(dst + (c + 2) * rows + r, wasm_i64x2_shuffle(ab1, ef1, 0, 2));
      wasm_v128_store(dst + (c + 3) * rows + r, wasm_i64x2_shuffle(ab1, ef1, 1, 3));
    }
    for (size_t r = rv; r < r1; r++)
      for (size_t k = 0; k < 4; k++) dst[(c + k) * rows + r] = src[r * cols + c + k];
  }
  for (; c < cols; c++)
    for (size_t r = r0; r < r1; r++) dst[c * rows + r] = src[r * cols + c];
}

static void strip16(const uint16_t *src, uint16_t *dst, size_t rows, size_t cols, size_t r0, size_t r1) {
  size_t rv = r0 + ((r1 - r0) & ~(size_t)7), c = 0;
  for (; c + 8 <= cols; c += 8) {
    for (size_t r = r0; r < rv; r += 8) {
      v128_t v[8], a[8], b[8];
      for (int k = 0; k < 8; k++) v[k] = wasm_v128_load(src + (r + k) * cols + c);
      /* Three rounds of interleaving: 16-bit, 32-bit and 64-bit units. */
      for (int k = 0; k < 4; k++) {
        a[2 * k] = wasm_i16x8_shuffle(v[2 * k], v[2 * k + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        a[2 * k + 1] = wasm_i16x8_shuffle(v[2 * k], v[2 * k + 1], 4, 12, 5, 13, 6, 14, 7, 15);
      }
      for (int k = 0; k < 2; k++) {
        for (int h = 0; h < 2; h++) {
          b[4 * k + 2 * h] = wasm_i32x4_shuffle(a[4 * k + h], a[4 * k + 2 + h], 0, 4, 1, 5);
          b[4 * k + 2 * h + 1] = wasm_i32x4_shuffle(a[4 * k + h], a[4 * k + 2 + h], 2, 6, 3, 7);
        }
      }
      for (int k = 0; k < 4; k++) {
        wasm_v128_store(dst + (c + 2 * k) * rows + r, wasm_i64x2_shuffle(b[k], b[4 + k], 0, 2));
        wasm_v128_store(dst + (c + 2 * k + 1) * rows + r, wasm_i64x2_shuffle(b[k], b[4 + k], 1, 3));
      }
    }
    for (size_t r = rv; r < r1; r++)
      for (size_t k = 0; k < 8; k++) dst[(c + k) * rows + r] = src[r * cols + c + k];
  }
  for (; c < cols; c++)
    for (size_t r = r0; r < r1; r++) dst[c * rows + r] = src[r * cols + c];
}

/* Strips [s0, s1) of STRIP source rows each; elem_size is 2 or 4. */
EXPORT(transpose) void transpose(int elem_size, const void *src, void *dst, size_t rows, size_t cols, size_t s0, size_t s1) {
  size_t per = (rows + STRIP - 1) / STRIP, matrix = rows * cols * (size_t)elem_size;
  for (size_t s = s0; s < s1; s++) {
    size_t m = s / per, r0 = (s % per) * STRIP, r1 = r0 + STRIP < rows ? r0 + STRIP : rows;
    const char *a = (const char *)src + m * matrix;
    char *b = (char *)dst + m * matrix;
    if (elem_size == 4) strip32((const uint32_t *)a, (uint32_t *)b, rows, cols, r0, r1);
    else strip16((const uint16_t *)a, (uint16_t *)b, rows, cols, r0, r1);
  }
}
