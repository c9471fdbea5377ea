import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReduceOp } from '../../../src/compute/core/reduce-plan.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { reduceRef } from '../../unit/compute/reference.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, expectMatches, FLOAT_DTYPES, freshSeed, openPair, prng, randomValues, TOLERANCE, twin, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

/** Index of the first maximum (loops: a spread of 10^5 arguments can overflow the stack). */
function argmaxOf(s: number[]): number {
  let best = 0;
  for (let i = 1; i < s.length; i++) if (s[i]! > s[best]!) best = i;
  return best;
}

const REFERENCE: Record<ReduceOp, (slice: number[]) => number> = {
  sum: (s) => s.reduce((a, b) => a + b, 0),
  mean: (s) => s.reduce((a, b) => a + b, 0) / s.length,
  max: (s) => s[argmaxOf(s)]!,
  min: (s) => s.reduce((a, b) => (b < a ? b : a), Infinity),
  argmax: argmaxOf,
};

function run(gpu: GpuCompute, op: ReduceOp, x: Tensor, axis: number | undefined): Tensor {
  return gpu[op](x as never, axis === undefined ? undefined : { axis }) as Tensor;
}

/**
 * Shapes and axes that reach every kernel (see planReduce): a warp per row,
 * a block per row (vector and scalar), split rows, the one-launch full
 * reduction (vector with a tail, aligned), and strided columns, also split.
 */
const CASES: [number[], number | undefined][] = [
  [[1], undefined], // warp
  [[7], undefined],
  [[1031], 0], // block per row, vector loads plus a tail
  [[7, 5001], 1], // block per row, rows not 16-byte aligned: scalar
  [[65537], undefined], // full, vector + tail
  [[4, 9000], undefined], // one block (below 2^16 elements)
  [[40_001], 0], // one block of 512, scalar tail
  [[3, 100_003], 1], // few long rows: split, scalar
  [[2, 40_000], 1], // split, vector
  [[1000, 61], 1], // many short rows: a warp per row
  [[300, 5000], 1], // a block per row, vector
  [[61, 1000], 0], // strided axis
  [[3, 50, 7], 1],
  [[2, 3, 5, 7], 2], // short axis, strided: a thread per output
  [[5, 2, 100_000], 1], // short axis between a long outer and a wide inner
  [[30_011, 13], 1], // short contiguous axis: a thread per row
  [[9001, 3, 2], 1], // short axis, inner 2
  [[32, 33], 0], // the longest short axis
  [[2000, 5], 0], // few columns, one block
  [[20_000, 3], 0], // few columns: the axis split over blocks (a thread's walk would be long)
  [[2039, 41], 0],
  [[100_000, 3], 0],
  [[2, 5000, 40], 1],
  [[1, 1021, 5], 0], // an axis of one element: a copy (argmax: zeros)
  [[37, 1, 9], 1],
];

/**
 * Sums accumulate in f32 per thread and then by a tree; a bound on the error is
 * ε·(elements per thread + tree depth)·Σ|x|. Inputs are positive (uniform in
 * [0.5, 1.5)), so Σ|x| = |Σx| and the norm-wise error stays within 1e-5 below
 * 2^16 elements per row; the 300K-element rows get 3e-5.
 */
function sumTolerance(dtype: DType, axisLen: number): number {
  if (dtype === 'i32') return 0;
  return dtype === 'f32' && axisLen > 65536 ? 3e-5 : TOLERANCE[dtype];
}

describe.skipIf(!gpuAvailable)('CUDA reductions', () => {
  for (const dtype of [...FLOAT_DTYPES, 'i32'] as const) {
    const ops: ReduceOp[] = dtype === 'i32' ? ['sum', 'max', 'min', 'argmax'] : ['sum', 'mean', 'max', 'min', 'argmax'];
    it.each(ops)(`%s (${dtype})`, (op) => {
      for (const [shape, axis] of CASES) {
        const n = shape.reduce((p, d) => p * d, 1);
        const next = prng(freshSeed());
        const values =
          dtype === 'i32'
            ? Array.from({ length: n }, () => Math.floor(next() * 2001) - 1000)
            : op === 'sum' || op === 'mean'
              ? Array.from({ length: n }, () => (0.5 + next()) * (dtype === 'f16' ? 1 / 16 : 1)) // f16 sums stay below 65504
              : randomValues(n, freshSeed(), 3);
        const [x, xc] = twin(pair, values, shape, dtype);
        using y = run(pair.cuda, op, x, axis);
        using yc = run(pair.cpu, op, xc, axis);
        const ref = reduceRef(shape, valuesOf(x), axis, REFERENCE[op]);
        const axisLen = axis === undefined ? n : shape[axis]!;
        const outDType = op === 'argmax' ? 'i32' : dtype;
        const label = `${op} ${dtype} [${shape}] axis ${axis ?? 'all'}`;
        if (op === 'max' || op === 'min' || op === 'argmax') {
          // Exact: selection, no arithmetic.
          expect(valuesOf(y), label).toEqual(ref);
          expect(valuesOf(y), `${label} vs CPU`).toEqual(valuesOf(yc));
        } else {
          expectMatches(label, valuesOf(y), ref, valuesOf(yc), outDType, sumTolerance(dtype, axisLen));
        }
        x.dispose();
        xc.dispose();
      }
    });
  }

  it('argmax returns the first maximum on ties and the first NaN; max and min propagate NaN', () => {
    const values = [1, 5, 3, 5, 5, 2, NaN, 9, NaN];
    const [x, xc] = twin(pair, values.slice(0, 6), [6], 'f32');
    using a = pair.cuda.argmax(x);
    using ac = pair.cpu.argmax(xc);
    expect(valuesOf(a)).toEqual([1]);
    expect(valuesOf(ac)).toEqual([1]);
    const [w] = twin(pair, values, [9], 'f32');
    using b = pair.cuda.argmax(w);
    expect(valuesOf(b)).toEqual([6]);
    using m = pair.cuda.max(w);
    expect(Number.isNaN(valuesOf(m)[0])).toBe(true);
    using mn = pair.cuda.min(w);
    expect(Number.isNaN(valuesOf(mn)[0])).toBe(true);
    // Over an axis of one element (a copy) a NaN stays where it was.
    using wColumn = w.reshape([9, 1]);
    using column = pair.cuda.max(wColumn, { axis: 1 });
    expect(valuesOf(column).map((v) => (Number.isNaN(v) ? 'NaN' : v))).toEqual(values.map((v) => (Number.isNaN(v) ? 'NaN' : v)));
    for (const t of [x, xc, w]) t.dispose();
  });

  it('a full sum of 2^24 + 5 elements is deterministic run to run, and the next one is right too', () => {
    const n = 2 ** 24 + 5;
    const hostSum = (t: Tensor) => valuesOf(t).reduce((a, b) => a + b, 0);
    using x = pair.cuda.rand([n], { seed: freshSeed(), low: 0.5, high: 1.5 });
    using s1 = pair.cuda.sum(x);
    using s2 = pair.cuda.sum(x);
    expect(valuesOf(s1)).toEqual(valuesOf(s2));
    const ref = hostSum(x);
    expect(Math.abs(valuesOf(s1)[0]! - ref) / ref).toBeLessThanOrEqual(3e-5);
    // The one-launch reduction resets its block counter: a different sum right after is right.
    using y = pair.cuda.rand([n - 2], { seed: freshSeed(), low: 1, high: 3 });
    using s3 = pair.cuda.sum(y);
    const refY = hostSum(y);
    expect(Math.abs(valuesOf(s3)[0]! - refY) / refY).toBeLessThanOrEqual(3e-5);
  });
});
