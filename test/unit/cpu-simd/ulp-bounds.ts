import type { ActivationGradOp, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';

/**
 * Bounds in f32 ulps of the true value on the vectorised elementary functions (kernels/wasm/vmath.h):
 * the maxima measured by accuracy.test.ts plus headroom for fresh inputs. geluGrad's comes from
 * every f32 of magnitude 2^-4 to 8: its worst is near x = -1.25, where Φ(x) and x·φ(x) cancel to
 * half their size (6.38 ulp relaxed-SIMD, 7.92 SIMD128); the random sweep once found 5.97 there.
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
  geluGrad: 8,
  geluTanhGrad: 6,
  siluGrad: 6.5,
  softplusGrad: 3,
};
