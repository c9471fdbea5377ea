/*
 * The 4×8 register tile shared by sgemm (packed panels) and attention (Q·Kᵀ and P·V on blocks in
 * scratch): 4 rows of A broadcast one value at a time, 8 columns of B in two vectors, eight
 * accumulators. Strides are in floats: A's row r at depth p is a[r·a_row + p·a_step], B's
 * columns at depth p start at b[p·b_step].
 */
#ifndef GPUCOMPUTE_WASM_MICROKERNEL_H
#define GPUCOMPUTE_WASM_MICROKERNEL_H

#include "common.h"

typedef struct {
  v128_t c[4][2];
} tile4x8;

INLINE void micro_4x8(const float *a, size_t a_row, size_t a_step, const float *b, size_t b_step, size_t kc, tile4x8 *t) {
  v128_t c00 = F32(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const float *a1p = a + a_row, *a2p = a + 2 * a_row, *a3p = a + 3 * a_row;
  for (size_t p = 0; p < kc; p++, a += a_step, a1p += a_step, a2p += a_step, a3p += a_step, b += b_step) {
    v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
    v128_t a0 = wasm_v128_load32_splat(a);
    c00 = FMA(a0, b0, c00);
    c01 = FMA(a0, b1, c01);
    v128_t a1 = wasm_v128_load32_splat(a1p);
    c10 = FMA(a1, b0, c10);
    c11 = FMA(a1, b1, c11);
    v128_t a2 = wasm_v128_load32_splat(a2p);
    c20 = FMA(a2, b0, c20);
    c21 = FMA(a2, b1, c21);
    v128_t a3 = wasm_v128_load32_splat(a3p);
    c30 = FMA(a3, b0, c30);
    c31 = FMA(a3, b1, c31);
  }
  t->c[0][0] = c00, t->c[0][1] = c01, t->c[1][0] = c10, t->c[1][1] = c11;
  t->c[2][0] = c20, t->c[2][1] = c21, t->c[3][0] = c30, t->c[3][1] = c31;
}

#endif
