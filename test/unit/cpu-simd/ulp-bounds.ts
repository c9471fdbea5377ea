import type { ActivationGradOp, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';

/**
 * Bounds in f32 ulps of the true value on the vectorised elementary functions (kernels/wasm/vmath.h):
 * the maxima measured by accuracy.test.ts plus headroom for fresh inputs. The derivatives' come
 * from every f32 of magnitude 2^-8 to 128 (2^-4 to 8 for geluGrad), relaxed SIMD / SIMD128, since
 * the random sweep meets their worst inputs only now and then: geluGrad 6.38 / 7.92 near x = -1.25,
 * where Φ(x) and x·φ(x) cancel to half their size (the sweep once found 5.97 there); geluTanhGrad
 * 7.38 / 7.90 near x = -1.27, the same cancellation (the sweep once found 6.73); sigmoidGrad 5.08
 * at x = 3.41 and tanhGrad 5.08 at x = 1.70 (the sweep's most had been 3.51 and 3.52); siluGrad
 * 5.85 / 6.03. The same scan for the forward functions: gelu 6.97 / 8.37 (x = -3.02 / -2.51;
 * the sweep's 4.92 had failed 6 about one run in 300), geluTanh 4.94 at x = -3.39 (over the
 * former 4 about one in 600), silu 3.56 / 3.65, sigmoid 2.78 / 2.82, tanh 1.51 / 1.57, softplus
 * 2.02 / 2.11, exp 0.91 / 1.18.
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
  gelu: 9,
  geluTanh: 5.5,
  silu: 4,
  softplus: 2.5,
  reluGrad: 0,
  leakyReluGrad: 0.5,
  sigmoidGrad: 5.5,
  tanhGrad: 5.5,
  geluGrad: 8,
  geluTanhGrad: 8,
  siluGrad: 6.5,
  softplusGrad: 3,
};
