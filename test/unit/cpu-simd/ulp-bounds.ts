import type { ActivationGradOp, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';

/**
 * Bounds in f32 ulps of the true value on the vectorised elementary functions (kernels/wasm/vmath.h):
 * the maxima measured by accuracy.test.ts plus headroom for fresh inputs.
 */
export const ULP_BOUND: Record<UnaryOp | ActivationGradOp, number> = {
  neg: 0,
  abs: 0,
  exp: 1.5,
  log: 1.5,
  sqrt: 0.5,
  rsqrt: 2,
  relu: 0,
  leakyRelu: 0.5,
  sigmoid: 3,
  tanh: 2,
  gelu: 6,
  geluTanh: 4,
  silu: 3.5,
  softplus: 2.5,
  reluGrad: 0,
  leakyReluGrad: 0.5,
  sigmoidGrad: 4.5,
  tanhGrad: 4.5,
  geluGrad: 4.5,
  geluTanhGrad: 6,
  siluGrad: 6.5,
  softplusGrad: 3,
};
