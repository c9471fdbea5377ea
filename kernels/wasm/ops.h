/*
 * Op codes shared with src/compute/cpu/simd/codes.ts (a unit test checks that every op of the
 * tables in src/compute/core has one there).
 */
#ifndef GPUCOMPUTE_WASM_OPS_H
#define GPUCOMPUTE_WASM_OPS_H

enum {
  U_NEG, U_ABS, U_EXP, U_LOG, U_SQRT, U_RSQRT, U_RELU, U_LEAKY_RELU,
  U_SIGMOID, U_TANH, U_GELU, U_GELU_TANH, U_SILU, U_SOFTPLUS
};

enum {
  G_RELU, G_LEAKY_RELU, G_SIGMOID, G_TANH, G_GELU, G_GELU_TANH, G_SILU, G_SOFTPLUS
};

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN };

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_ARGMAX };

/* No activation in a matmul epilogue; the others are unary op codes. */
#define ACT_NONE (-1)

#endif
