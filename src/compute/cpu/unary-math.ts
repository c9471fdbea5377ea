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

/** The tanh approximation of GELU. */
export function geluTanh(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_TANH_K * (x + GELU_TANH_C * x * x * x)));
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

export function sigmoidDerivative(x: number): number {
  const s = sigmoid(x);
  return s * (1 - s);
}

export function tanhDerivative(x: number): number {
  const t = Math.tanh(x);
  return 1 - t * t;
}

/** Φ(x) + x·φ(x). */
export function geluDerivative(x: number): number {
  return normalCdf(x) + x * INV_SQRT_2PI * Math.exp(-0.5 * x * x);
}

export function geluTanhDerivative(x: number): number {
  const t = Math.tanh(GELU_TANH_K * (x + GELU_TANH_C * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_TANH_K * (1 + 3 * GELU_TANH_C * x * x);
}

export function siluDerivative(x: number): number {
  const s = sigmoid(x);
  return s * (1 + x * (1 - s));
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
