/**
 * float64 references computed in the tests, independently of the backends:
 * the textbook formulas, broadcasting by explicit index arithmetic, and
 * derivatives from the calculus (checked against central differences).
 */
import type { ActivationName, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import { referenceErf, referenceErfc } from './helpers.js';

export const sigmoidRef = (x: number) => 1 / (1 + Math.exp(-x));
const GELU_K = Math.sqrt(2 / Math.PI);

/** Forward references of every unary op of the table (a new op needs its reference here). */
export const UNARY_REFERENCE: Record<UnaryOp, (x: number, slope: number) => number> = {
  neg: (x) => -x,
  abs: (x) => Math.abs(x),
  exp: (x) => Math.exp(x),
  log: (x) => Math.log(x),
  sqrt: (x) => Math.sqrt(x),
  rsqrt: (x) => 1 / Math.sqrt(x),
  relu: (x) => (x > 0 ? x : 0),
  leakyRelu: (x, slope) => (x > 0 ? x : slope * x),
  sigmoid: sigmoidRef,
  tanh: (x) => (Math.exp(2 * x) - 1) / (Math.exp(2 * x) + 1),
  // x·Φ(x), with Φ from erfc on the left so tiny values keep their digits.
  gelu: (x) => (x < 0 ? 0.5 * x * referenceErfc(-x / Math.SQRT2) : 0.5 * x * (1 + referenceErf(x / Math.SQRT2))),
  // 0.5·x·(1 + tanh u) as x·σ(2u): 1 + tanh u cancels on the left tail, even in float64.
  geluTanh: (x) => x * sigmoidRef(2 * GELU_K * (x + 0.044715 * x ** 3)),
  silu: (x) => x * sigmoidRef(x),
  softplus: (x) => Math.log(1 + Math.exp(x)),
};

/** σ(x)σ(−x) without cancellation on either tail. */
function sigmoidSlope(x: number): number {
  const e = Math.exp(-Math.abs(x));
  return e / ((1 + e) * (1 + e));
}

const normalDensity = (x: number) => Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);

/**
 * Each activation's derivative from the calculus, in forms that keep their relative accuracy on
 * the tails (a central difference does not: the forward's last digits, divided by the step, are
 * 6e-5 of gelu's derivative near x = −4); a unit test holds them to central differences of the
 * forwards where those are accurate.
 */
export const DERIVATIVE_REFERENCE: Record<ActivationName, (x: number, slope: number) => number> = {
  relu: (x) => (x > 0 ? 1 : 0),
  leakyRelu: (x, slope) => (x > 0 ? 1 : slope),
  sigmoid: sigmoidSlope,
  tanh: (x) => 4 * sigmoidSlope(2 * x),
  // Φ(x) + x·φ(x), Φ from erfc on the left.
  gelu: (x) => (x < 0 ? 0.5 * referenceErfc(-x / Math.SQRT2) : 0.5 * (1 + referenceErf(x / Math.SQRT2))) + x * normalDensity(x),
  // σ(v) + x·σ(v)σ(−v)·dv/dx, v = 2u.
  geluTanh: (x) => {
    const v = 2 * GELU_K * (x + 0.044715 * x ** 3);
    return sigmoidRef(v) + x * sigmoidSlope(v) * 2 * GELU_K * (1 + 3 * 0.044715 * x * x);
  },
  silu: (x) => sigmoidRef(x) * (1 + x * sigmoidRef(-x)),
  softplus: sigmoidRef,
};

/** f'(x) of activation `name` (leakyRelu's slope `slope`). */
export function derivativeRef(name: ActivationName, x: number, slope: number): number {
  return DERIVATIVE_REFERENCE[name](x, slope);
}

/** Row-major multi-index of flat index `i` in `shape`. */
function unravel(i: number, shape: readonly number[]): number[] {
  const index = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    index[d] = i % shape[d]!;
    i = Math.floor(i / shape[d]!);
  }
  return index;
}

/** Flat index of the element of `shape` that broadcasting maps `outIndex` to. */
function broadcastSource(outIndex: number[], shape: readonly number[]): number {
  let flat = 0;
  const offset = outIndex.length - shape.length;
  for (let d = 0; d < shape.length; d++) flat = flat * shape[d]! + (shape[d] === 1 ? 0 : outIndex[offset + d]!);
  return flat;
}

/** f(a, b) under NumPy broadcasting, element by element. */
export function broadcastRef(
  aShape: readonly number[],
  a: ArrayLike<number>,
  bShape: readonly number[],
  b: ArrayLike<number>,
  outShape: readonly number[],
  f: (x: number, y: number) => number,
): number[] {
  const n = outShape.reduce((p, d) => p * d, 1);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const index = unravel(i, outShape);
    out.push(f(a[broadcastSource(index, aShape)]!, b[broadcastSource(index, bShape)]!));
  }
  return out;
}

/** Reduction along `axis` (all when undefined) with `f` over each slice. */
export function reduceRef(
  shape: readonly number[],
  x: ArrayLike<number>,
  axis: number | undefined,
  f: (slice: number[]) => number,
): number[] {
  if (axis === undefined) return [f(Array.from(x))];
  const outer = shape.slice(0, axis).reduce((p, d) => p * d, 1);
  const len = shape[axis]!;
  const inner = shape.slice(axis + 1).reduce((p, d) => p * d, 1);
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const slice: number[] = [];
      for (let k = 0; k < len; k++) slice.push(x[(o * len + k) * inner + i]!);
      out.push(f(slice));
    }
  }
  return out;
}

/** Rows of the last axis, transformed by `f`. */
export function rowsRef(x: ArrayLike<number>, cols: number, f: (row: number[]) => number[]): number[] {
  const values = Array.from(x);
  const out: number[] = [];
  for (let base = 0; base < values.length; base += cols) out.push(...f(values.slice(base, base + cols)));
  return out;
}
