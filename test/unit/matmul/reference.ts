/**
 * The float64 reference every matmul backend is held to: a plain triple loop over NumPy-style
 * broadcast batches, with its own activation definitions (erf from the test helpers, not the
 * library's), and the norm-wise relative error.
 */
import type { MatmulActivation } from '../../../src/compute/core/matmul-plan.js';
import { referenceErf } from '../compute/helpers.js';

/** An operand: its exact values and its shape as stored (before any transpose). */
export interface RefOperand {
  values: ArrayLike<number>;
  shape: readonly number[];
}

export interface RefOptions {
  transA?: boolean;
  transB?: boolean;
  alpha?: number;
  beta?: number;
  c?: RefOperand;
  bias?: ArrayLike<number>;
  activation?: MatmulActivation;
}

export function refActivation(activation: MatmulActivation): (x: number) => number {
  const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
  switch (activation) {
    case 'relu':
      return (x) => (Number.isNaN(x) ? x : x > 0 ? x : 0);
    case 'gelu':
      return (x) => 0.5 * x * (1 + referenceErf(x / Math.SQRT2));
    case 'geluTanh':
      // 0.5·x·(1 + tanh u) as x·σ(2u), which does not cancel on the left tail.
      return (x) => x * sigmoid(2 * Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3));
    case 'silu':
      return (x) => x * sigmoid(x);
    case 'sigmoid':
      return sigmoid;
    case 'tanh':
      return Math.tanh;
  }
}

/** act(alpha·op(a)·op(b) + beta·c + bias) with broadcast batch dims; returns [values, shape]. */
export function referenceProduct(a: RefOperand, b: RefOperand, o: RefOptions = {}): { values: Float64Array; shape: number[] } {
  const [ar, ac] = a.shape.slice(-2) as [number, number];
  const [br, bc] = b.shape.slice(-2) as [number, number];
  const m = o.transA ? ac : ar;
  const k = o.transA ? ar : ac;
  const n = o.transB ? br : bc;
  const aBatch = a.shape.slice(0, -2);
  const bBatch = b.shape.slice(0, -2);
  const cBatch = o.c ? o.c.shape.slice(0, -2) : [];
  const rank = Math.max(aBatch.length, bBatch.length);
  const outBatch = Array.from({ length: rank }, (_, i) => Math.max(aBatch[aBatch.length - rank + i] ?? 1, bBatch[bBatch.length - rank + i] ?? 1));
  const count = outBatch.reduce((p, d) => p * d, 1);
  const out = new Float64Array(count * m * n);
  const act = o.activation ? refActivation(o.activation) : undefined;
  const alpha = o.alpha ?? 1;
  const beta = o.beta ?? (o.c ? 1 : 0);
  // Offset of batch entry `index` (of the output's batch shape) inside an operand of batch shape `dims`.
  const entryOffset = (dims: readonly number[], index: number[], matrix: number) => {
    let off = 0;
    let stride = matrix;
    for (let i = dims.length - 1; i >= 0; i--) {
      const d = dims[i]!;
      const idx = d === 1 ? 0 : index[rank - dims.length + i]!;
      off += idx * stride;
      stride *= d;
    }
    return off;
  };
  const index = new Array<number>(rank).fill(0);
  for (let e = 0; e < count; e++) {
    const ao = entryOffset(aBatch, index, m * k);
    const bo = entryOffset(bBatch, index, k * n);
    const co = entryOffset(cBatch, index, m * n);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < k; p++) {
          s += a.values[ao + (o.transA ? p * m + i : i * k + p)]! * b.values[bo + (o.transB ? j * k + p : p * n + j)]!;
        }
        let v = alpha * s;
        if (o.c && beta !== 0) v += beta * o.c.values[co + i * n + j]!;
        if (o.bias) v += o.bias[j]!;
        out[e * m * n + i * n + j] = act ? act(v) : v;
      }
    }
    for (let i = rank - 1; i >= 0; i--) {
      if (++index[i]! < outBatch[i]!) break;
      index[i] = 0;
    }
  }
  return { values: out, shape: [...outBatch, m, n] };
}

/** ‖x − ref‖ / ‖ref‖. */
export function relativeError(x: ArrayLike<number>, ref: ArrayLike<number>): number {
  if (x.length !== ref.length) throw new Error(`length ${x.length} vs reference ${ref.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = x[i]! - ref[i]!;
    num += d * d;
    den += ref[i]! * ref[i]!;
  }
  return Math.sqrt(num) / Math.sqrt(den);
}
