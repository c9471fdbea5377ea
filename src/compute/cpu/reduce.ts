/**
 * Reductions along one axis of a tensor seen as [outer, axisLen, inner].
 * Float sums accumulate in f64 (more accurate than the GPU's f32 tree, and
 * order-independent enough to be deterministic); i32 sums wrap modulo 2^32.
 * max/min propagate NaN; argmax returns the first NaN, else the first maximum.
 */
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { TensorView } from '../core/view.js';
import { floatTarget, loadFloat, loadInt, storeFloat } from './element-io.js';

type NumericArray = Float32Array | Int32Array;

export function reduce(op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
  const src = x.dtype === 'i32' ? loadInt(x) : loadFloat(x);
  if (op === 'argmax') {
    reduceAxis(src, loadInt(out), plan, argmaxOf);
    return;
  }
  if (x.dtype === 'i32') {
    reduceAxis(src, loadInt(out), plan, op === 'sum' ? intSumOf : op === 'max' ? maxOf : minOf);
    return;
  }
  const dst = floatTarget(out);
  const combine = op === 'sum' ? sumOf : op === 'mean' ? meanOf : op === 'max' ? maxOf : minOf;
  reduceAxis(src, dst, plan, combine);
  storeFloat(out, dst);
}

/** Reduces `len` elements of `src` starting at `start`, `stride` apart. */
type Reducer = (src: NumericArray, start: number, len: number, stride: number) => number;

function reduceAxis(src: NumericArray, dst: NumericArray, plan: ReducePlan, reducer: Reducer): void {
  const { outer, axisLen, inner } = plan;
  for (let o = 0; o < outer; o++) {
    const base = o * axisLen * inner;
    for (let i = 0; i < inner; i++) dst[o * inner + i] = reducer(src, base + i, axisLen, inner);
  }
}

const sumOf: Reducer = (src, start, len, stride) => {
  let acc = 0;
  for (let k = 0, p = start; k < len; k++, p += stride) acc += src[p]!;
  return acc;
};

const meanOf: Reducer = (src, start, len, stride) => sumOf(src, start, len, stride) / len;

const intSumOf: Reducer = (src, start, len, stride) => {
  let acc = 0;
  for (let k = 0, p = start; k < len; k++, p += stride) acc = (acc + src[p]!) | 0;
  return acc;
};

const maxOf: Reducer = (src, start, len, stride) => {
  let acc = -Infinity;
  for (let k = 0, p = start; k < len; k++, p += stride) {
    const v = src[p]!;
    if (v !== v) return NaN;
    if (v > acc) acc = v;
  }
  return acc;
};

const minOf: Reducer = (src, start, len, stride) => {
  let acc = Infinity;
  for (let k = 0, p = start; k < len; k++, p += stride) {
    const v = src[p]!;
    if (v !== v) return NaN;
    if (v < acc) acc = v;
  }
  return acc;
};

const argmaxOf: Reducer = (src, start, len, stride) => {
  let best = 0;
  let bestValue = -Infinity;
  for (let k = 0, p = start; k < len; k++, p += stride) {
    const v = src[p]!;
    if (v !== v) return k;
    if (v > bestValue || k === 0) {
      best = k;
      bestValue = v;
    }
  }
  return best;
};
