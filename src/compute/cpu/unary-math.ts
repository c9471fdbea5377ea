/**
 * The scalar definition of every unary op and every activation's derivative, in double
 * precision. The CPU backend rounds their results to the output dtype; they are the reference
 * meaning every backend must match. A new unary op (see `core/elementwise-ops.ts`) needs its
 * function here, and nothing else on the CPU.
 */
import type { ActivationGradOp, UnaryOp } from '../core/elementwise-ops.js';
import { erf, erfc } from './special-functions.js';

const SQRT1_2 = Math.SQRT1_2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);
/** √(2/π) and the cubic coefficient of the tanh form of GELU (Hendrycks & Gimpel). */
const GELU_TANH_K = Math.sqrt(2 / Math.PI);
const GELU_TANH_C = 0.044715;

/** Numerically stable logistic function. */
export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

/** Standard normal CDF Φ(x), using erfc on the left tail so small values keep their precision. */
function normalCdf(x: number): number {
  return x >= 0 ? 0.5 * (1 + erf(x * SQRT1_2)) : 0.5 * erfc(-x * SQRT1_2);
}

/** Exact GELU: x·Φ(x). */
export function gelu(x: number): number {
  return x * normalCdf(x);
}

/** 2u, with u = √(2/π)(x + 0.044715x³) the argument of the tanh form of GELU. */
function geluTanhArg(x: number): number {
  return 2 * GELU_TANH_K * (x + GELU_TANH_C * x * x * x);
}

/**
 * The tanh approximation of GELU, 0.5·x·(1 + tanh u), written as x·σ(2u): on the left tail
 * 1 + tanh u cancels (every digit gone by x ≈ −6, exactly 0 from x ≈ −8 on) while σ(2u) keeps them.
 */
export function geluTanh(x: number): number {
  return x * sigmoid(geluTanhArg(x));
}

/** x·sigmoid(x). */
export function silu(x: number): number {
  return x * sigmoid(x);
}

/** log(1 + eˣ) without overflow. */
export function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

/** d/dx relu; NaN stays NaN. */
export function reluDerivative(x: number): number {
  return x > 0 ? 1 : x <= 0 ? 0 : NaN;
}

/** d/dx leakyRelu with `slope` on the negative side; NaN stays NaN. */
export function leakyReluDerivative(x: number, slope: number): number {
  return x > 0 ? 1 : x <= 0 ? slope : NaN;
}

/** σ(x)σ(−x) = e^−|x| / (1 + e^−|x|)², which keeps its digits where 1 − σ(x) would cancel. */
export function sigmoidDerivative(x: number): number {
  const e = Math.exp(-Math.abs(x));
  return e / ((1 + e) * (1 + e));
}

/** 1 − tanh²x = 4e^−2|x| / (1 + e^−2|x|)², which keeps its digits where 1 − tanh² would cancel. */
export function tanhDerivative(x: number): number {
  const e = Math.exp(-2 * Math.abs(x));
  return (4 * e) / ((1 + e) * (1 + e));
}

/** Φ(x) + x·φ(x). */
export function geluDerivative(x: number): number {
  return normalCdf(x) + x * INV_SQRT_2PI * Math.exp(-0.5 * x * x);
}

/** σ(v) + x·σ(v)σ(−v)·dv/dx with v = 2u, free of the cancellations of 1 + tanh u and 1 − tanh²u; ±∞ give NaN (∞·0). */
export function geluTanhDerivative(x: number): number {
  const v = geluTanhArg(x);
  const s = sigmoid(v);
  return s + x * s * sigmoid(-v) * 2 * GELU_TANH_K * (1 + 3 * GELU_TANH_C * x * x);
}

/** σ(x)(1 + x·σ(−x)); σ(−x) rather than 1 − σ(x), which cancels on the right tail. */
export function siluDerivative(x: number): number {
  return sigmoid(x) * (1 + x * sigmoid(-x));
}

/** d/dx softplus is the logistic function. */
export const softplusDerivative = sigmoid;

/** Every unary op: f(x), with `alpha` leakyRelu's slope (ignored by the others). */
export const UNARY_MATH: Readonly<Record<UnaryOp, (x: number, alpha: number) => number>> = {
  neg: (x) => -x,
  abs: Math.abs,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  // Math.max keeps NaN (as PyTorch does) and maps -0 to +0.
  relu: (x) => Math.max(x, 0),
  leakyRelu: (x, alpha) => (x > 0 ? x : alpha * x),
  sigmoid,
  tanh: Math.tanh,
  gelu,
  geluTanh,
  silu,
  softplus,
};

/** Every activation's derivative: f'(x), with `alpha` leakyRelu's slope. */
export const DERIVATIVE_MATH: Readonly<Record<ActivationGradOp, (x: number, alpha: number) => number>> = {
  reluGrad: reluDerivative,
  leakyReluGrad: leakyReluDerivative,
  sigmoidGrad: sigmoidDerivative,
  tanhGrad: tanhDerivative,
  geluGrad: geluDerivative,
  geluTanhGrad: geluTanhDerivative,
  siluGrad: siluDerivative,
  softplusGrad: softplusDerivative,
};
