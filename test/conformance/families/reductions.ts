/**
 * Every reduction of the table (`REDUCE_OPS`) in every dtype it takes, over every axis position
 * (as a positive and as a negative axis) with and without keepDims, and over everything: float
 * sums against float64, max/min/argmax exact (argmax the first maximum, ties included), i32 sums
 * wrapping; NaN propagation; and empty axes, where sum gives 0 and mean NaN.
 */
import { describe, it } from 'vitest';
import type { DType } from '../../../src/compute/core/dtype.js';
import { REDUCE_OP_NAMES, REDUCE_OPS, planReduction, type ReduceOp } from '../../../src/compute/core/reduce-plan.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { ReduceOptions } from '../../../src/compute/ops/reduce.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { product } from '../../unit/compute/helpers.js';
import { reduceRef } from '../../unit/compute/reference.js';
import { expectRun, TOLERANCE } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host, type Values } from '../host.js';
import { Case } from '../seeds.js';

const SHAPES: number[][] = [[], [13], [5, 7], [3, 5, 7], [2, 3, 1, 5]];

/** Each reduction through its public method. */
const METHOD: Record<ReduceOp, (gpu: GpuCompute, x: Tensor, options: ReduceOptions) => Tensor> = {
  sum: (g, x, o) => g.sum(x, o),
  mean: (g, x, o) => g.mean(x, o),
  max: (g, x, o) => g.max(x, o),
  min: (g, x, o) => g.min(x, o),
  argmax: (g, x, o) => g.argmax(x, o),
};

/** float64 meaning of each reduction of a slice; i32 sums wrap modulo 2^32, argmax takes the first NaN, else the first maximum. */
function reference(op: ReduceOp, dtype: DType): (s: number[]) => number {
  switch (op) {
    case 'sum':
      return dtype === 'i32' ? (s) => s.reduce((a, v) => (a + v) | 0, 0) : (s) => s.reduce((a, v) => a + v, 0);
    case 'mean':
      return (s) => s.reduce((a, v) => a + v, 0) / s.length;
    case 'max':
      return (s) => Math.max(...s);
    case 'min':
      return (s) => Math.min(...s);
    case 'argmax':
      return (s) => {
        const nan = s.findIndex(Number.isNaN);
        return nan >= 0 ? nan : s.reduce((best, v, i) => (v > s[best]! ? i : best), 0);
      };
  }
}

/** Sums and means are compared norm-wise (summation order differs); the others pick an element and are exact. */
function tolerance(op: ReduceOp, dtype: DType): number {
  return op === 'sum' || op === 'mean' ? TOLERANCE[dtype] : 0;
}

/** Every way to call a reduction on `shape`: each axis as given and from the end, with and without keepDims, and over everything. */
function reductionsOf(shape: readonly number[]): ReduceOptions[] {
  const all: ReduceOptions[] = [{ keepDims: false }, { keepDims: true }];
  for (let axis = 0; axis < shape.length; axis++) {
    for (const keepDims of [false, true]) all.push({ axis, keepDims }, { axis: axis - shape.length, keepDims });
  }
  return all;
}

/** What reducing `x` with `options` gives. */
function expected(op: ReduceOp, x: Values, options: ReduceOptions): Values {
  const axis = options.axis === undefined ? undefined : options.axis < 0 ? options.axis + x.shape.length : options.axis;
  const { outShape } = planReduction(x.shape, axis, options.keepDims ?? false);
  return { shape: outShape, dtype: op === 'argmax' ? 'i32' : x.dtype, values: reduceRef(x.shape, x.values, axis, reference(op, x.dtype)) };
}

export function describeReductions(ctx: ConformanceContext): void {
  describe('reductions', () => {
    for (const op of REDUCE_OP_NAMES) {
      const dtypes = ctx.dtypes.filter((d) => d !== 'i32' || REDUCE_OPS[op].int);
      for (const dtype of dtypes) {
        it(`${op} in ${dtype}: every axis, keepDims or not, and everything`, () => {
          for (const shape of SHAPES) {
            const c = new Case(`${op} ${dtype} [${shape}]`);
            // Floats shifted positive so sums do not cancel (their error is relative to Σ|x|); i32 across ±2^30 so sums wrap.
            const n = product(shape);
            const x = host(dtype === 'i32' ? c.ints(n, -(2 ** 30), 2 ** 30) : c.normal(n, 1, 2), shape, dtype);
            for (const options of reductionsOf(shape)) {
              const runs = ctx.run([x], (g, [t]) => METHOD[op](g, t!, options));
              expectRun(new Case(`${c.label} ${JSON.stringify(options)}`), runs, [expected(op, x, options)], tolerance(op, dtype));
            }
          }
        });
      }

      for (const dtype of ctx.floatDtypes()) {
        it(`${op} in ${dtype} propagates NaN, sees ±∞ and breaks ties by the first index`, () => {
          const c = new Case(`${op} ${dtype} specials`);
          const values = c.normal(4 * 6, 1, 2);
          values.splice(1, 1, NaN);
          values.splice(8, 2, Infinity, -Infinity);
          values.splice(19, 1, NaN);
          // Two equal maxima in row 2 (and so in columns 1 and 4): argmax takes the first.
          values.splice(13, 1, 7.5);
          values.splice(16, 1, 7.5);
          const x = host(values, [4, 6], dtype);
          for (const options of reductionsOf(x.shape)) {
            const runs = ctx.run([x], (g, [t]) => METHOD[op](g, t!, options));
            expectRun(new Case(`${c.label} ${JSON.stringify(options)}`), runs, [expected(op, x, options)], tolerance(op, dtype));
          }
        });
      }
    }

    for (const dtype of ctx.dtypes) {
      it(`over an empty axis in ${dtype}: sum is 0, mean NaN; an empty tensor reduces to an empty one`, () => {
        const c = new Case(`empty reductions ${dtype}`);
        const x = host([], [4, 0], dtype);
        const ops = REDUCE_OP_NAMES.filter((op) => (dtype !== 'i32' || REDUCE_OPS[op].int) && (op === 'sum' || op === 'mean'));
        for (const op of ops) {
          for (const options of [{ axis: 1 }, { axis: 1, keepDims: true }, {}, { axis: 0 }]) {
            const runs = ctx.run([x], (g, [t]) => METHOD[op](g, t!, options));
            const { outShape } = planReduction(x.shape, options.axis, options.keepDims ?? false);
            const want = { shape: outShape, dtype, values: new Array<number>(product(outShape)).fill(op === 'sum' ? 0 : NaN) };
            expectRun(new Case(`${c.label} ${op} ${JSON.stringify(options)}`), runs, [want], 0);
          }
        }
        for (const op of REDUCE_OP_NAMES.filter((o) => o !== 'sum' && o !== 'mean' && (dtype !== 'i32' || REDUCE_OPS[o].int))) {
          const runs = ctx.run([x], (g, [t]) => METHOD[op](g, t!, { axis: 0 }));
          expectRun(new Case(`${c.label} ${op} axis 0`), runs, [{ shape: [0], dtype: op === 'argmax' ? 'i32' : dtype, values: [] }], 0);
        }
      });
    }
  });
}
