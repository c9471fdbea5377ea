/**
 * The numbers the WebAssembly kernels use for dtypes and ops (`kernels/wasm/common.h`, `ops.h`).
 * Explicit tables rather than positions in the core op tables, so adding an op to `core/` cannot
 * silently renumber the kernels; `test/unit/cpu-simd/codes.test.ts` checks that every op of the
 * core tables has a code here.
 */
import type { DType } from '../../core/dtype.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../../core/elementwise-ops.js';
import type { MatmulActivation } from '../../core/matmul-plan.js';
import type { ReduceOp } from '../../core/reduce-plan.js';

export const DTYPE_CODE: Record<DType, number> = { f32: 0, f16: 1, bf16: 2, i32: 3 };

export const UNARY_CODE: Record<UnaryOp, number> = {
  neg: 0,
  abs: 1,
  exp: 2,
  log: 3,
  sqrt: 4,
  rsqrt: 5,
  relu: 6,
  leakyRelu: 7,
  sigmoid: 8,
  tanh: 9,
  gelu: 10,
  geluTanh: 11,
  silu: 12,
  softplus: 13,
};

export const GRAD_CODE: Record<ActivationGradOp, number> = {
  reluGrad: 0,
  leakyReluGrad: 1,
  sigmoidGrad: 2,
  tanhGrad: 3,
  geluGrad: 4,
  geluTanhGrad: 5,
  siluGrad: 6,
  softplusGrad: 7,
};

export const BINARY_CODE: Record<BinaryOp, number> = { add: 0, sub: 1, mul: 2, div: 3, max: 4, min: 5 };

export const REDUCE_CODE: Record<ReduceOp, number> = { sum: 0, mean: 1, max: 2, min: 3, argmax: 4 };

/** The matmul epilogue's activation: the unary op's code, or -1 for none. */
export function activationCode(activation: MatmulActivation | undefined): number {
  return activation === undefined ? -1 : UNARY_CODE[activation];
}
