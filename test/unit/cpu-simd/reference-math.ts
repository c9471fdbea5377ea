/**
 * Float64 references for the accuracy sweeps, written in forms that keep their relative accuracy
 * in the tails, where 1 − tanh² or 1 + tanh would cancel even in double.
 */
import { erfc } from '../../../src/compute/cpu/special-functions.js';
import type { ActivationGradOp, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';

const SQRT1_2 = Math.SQRT1_2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);
const K = Math.sqrt(2 / Math.PI);
const C = 0.044715;

/** σ(x) and σ(−x) without cancellation. */
function sigmoidPair(x: number): [number, number] {
  const e = Math.exp(-Math.abs(x));
  const big = 1 / (1 + e);
  const small = e / (1 + e);
  return x >= 0 ? [big, small] : [small, big];
}

/** Φ(x): the lower tail from erfc, so small values keep their precision. */
function normalCdf(x: number): number {
  return x >= 0 ? 1 - 0.5 * erfc(x * SQRT1_2) : 0.5 * erfc(-x * SQRT1_2);
}

/** 2y of GELU's tanh form, y = √(2/π)(x + 0.044715x³). */
const twoY = (x: number) => 2 * K * (x + C * x * x * x);

export const UNARY_REF: Record<UnaryOp, (x: number, alpha: number) => number> = {
  neg: (x) => -x,
  abs: Math.abs,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  relu: (x) => Math.max(x, 0),
  leakyRelu: (x, a) => (x > 0 ? x : a * x),
  sigmoid: (x) => sigmoidPair(x)[0],
  tanh: Math.tanh,
  gelu: (x) => x * normalCdf(x),
  geluTanh: (x) => x * sigmoidPair(twoY(x))[0],
  silu: (x) => x * sigmoidPair(x)[0],
  softplus: (x) => Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x))),
};

export const GRAD_REF: Record<ActivationGradOp, (x: number, alpha: number) => number> = {
  reluGrad: (x) => (x > 0 ? 1 : x <= 0 ? 0 : NaN),
  leakyReluGrad: (x, a) => (x > 0 ? 1 : x <= 0 ? a : NaN),
  sigmoidGrad: (x) => {
    const [s, t] = sigmoidPair(x);
    return s * t;
  },
  tanhGrad: (x) => 1 / Math.cosh(x) ** 2,
  geluGrad: (x) => normalCdf(x) + x * INV_SQRT_2PI * Math.exp(-0.5 * x * x),
  geluTanhGrad: (x) => {
    const [s, t] = sigmoidPair(twoY(x));
    return s + x * s * t * 2 * K * (1 + 3 * C * x * x);
  },
  siluGrad: (x) => {
    const [s, t] = sigmoidPair(x);
    return s * (1 + x * t);
  },
  softplusGrad: (x) => sigmoidPair(x)[0],
};
