/**
 * Every binary op of the table (`BINARY_OPS`) in every dtype it takes, with every kind of
 * broadcast: the same shape, a scalar tensor or a JS number on either side, a row on either side,
 * size-1 axes anywhere (the middle too) and on both sides, in 2 to 4 dims, and empty tensors (and vectorAdd);
 * i32 wraps modulo 2^32; NaN propagates through max and min, and ±∞ and zeros follow IEEE.
 */
import { describe, it } from 'vitest';
import { broadcastShapes } from '../../../src/compute/core/broadcast.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import { BINARY_OP_NAMES, binaryTakesInt, type BinaryOp } from '../../../src/compute/core/elementwise-ops.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { product } from '../../unit/compute/helpers.js';
import { broadcastRef } from '../../unit/compute/reference.js';
import { expectRun, TOLERANCE } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host, type Values } from '../host.js';
import { Case } from '../seeds.js';

type Operand = Tensor | number;

/** Each op through its public method. */
const METHOD: Record<BinaryOp, (gpu: GpuCompute, a: Operand, b: Operand) => Tensor> = {
  add: (g, a, b) => g.add(a, b),
  sub: (g, a, b) => g.sub(a, b),
  mul: (g, a, b) => g.mul(a, b),
  div: (g, a, b) => g.div(a, b),
  max: (g, a, b) => g.maximum(a, b),
  min: (g, a, b) => g.minimum(a, b),
};

/** float64 meaning of each op; i32 results wrap modulo 2^32. */
function reference(op: BinaryOp, dtype: DType): (x: number, y: number) => number {
  const f: Record<BinaryOp, (x: number, y: number) => number> = {
    add: (x, y) => x + y,
    sub: (x, y) => x - y,
    mul: (x, y) => (dtype === 'i32' ? Math.imul(x, y) : x * y),
    div: (x, y) => x / y,
    // NaN propagates (Math.max/min do).
    max: Math.max,
    min: Math.min,
  };
  return dtype === 'i32' ? (x, y) => f[op](x, y) | 0 : f[op];
}

/** [a, b]: same shape, scalar tensors, rows, size-1 axes in the middle and on both sides, 2–4 dims, empty. */
const BROADCASTS: [number[], number[]][] = [
  [[5, 7], [5, 7]],
  [[2, 3, 5], [2, 3, 5]],
  [[5, 7], []],
  [[], [3, 1, 5]],
  [[6, 7], [7]],
  [[7], [6, 7]],
  [[3, 1, 5], [3, 4, 5]],
  [[3, 4, 5], [3, 1, 5]],
  [[4, 1], [1, 5]],
  [[1, 4, 1], [3, 1, 5]],
  [[2, 3, 1, 5], [1, 3, 4, 1]],
  [[2, 1, 3, 1], [4, 1, 5]],
  [[1], [1]],
  [[], []],
  [[0, 3], [3]],
  [[5, 1], [0]],
];

/** Operand values for `op`: i32 across ±2^30 (sums and products wrap), floats away from 0 for a divisor. */
function draw(c: Case, op: BinaryOp, dtype: DType, n: number, divisor: boolean): number[] {
  if (dtype === 'i32') return c.ints(n, -(2 ** 30), 2 ** 30);
  const v = c.normal(n, 2);
  return op === 'div' && divisor ? v.map((x) => Math.sign(x) * (0.5 + Math.abs(x))) : v;
}

export function describeBinary(ctx: ConformanceContext): void {
  describe('binary ops', () => {
    for (const op of BINARY_OP_NAMES) {
      const dtypes = ctx.dtypes.filter((d) => d !== 'i32' || binaryTakesInt(op));
      for (const dtype of dtypes) {
        const f = reference(op, dtype);
        it(`${op} in ${dtype}, every broadcast`, () => {
          for (const [aShape, bShape] of BROADCASTS) {
            const c = new Case(`${op} ${dtype} [${aShape}] with [${bShape}]`);
            const a = host(draw(c, op, dtype, product(aShape), false), aShape, dtype);
            const b = host(draw(c, op, dtype, product(bShape), true), bShape, dtype);
            const outShape = broadcastShapes(op, aShape, bShape);
            const want: Values = { shape: outShape, dtype, values: broadcastRef(aShape, a.values, bShape, b.values, outShape, f) };
            expectRun(c, ctx.run([a, b], (g, [ta, tb]) => METHOD[op](g, ta!, tb!)), [want], TOLERANCE[dtype]);
          }
        });

        it(`${op} in ${dtype} with a JS number on either side`, () => {
          const c = new Case(`${op} ${dtype} JS number`);
          const x = host(draw(c, op, dtype, 21, true), [3, 7], dtype);
          const scalar = dtype === 'i32' ? c.ints(1, -(2 ** 30), 2 ** 30)[0]! : -1.75;
          const runs = ctx.run([x], (g, [t]) => [METHOD[op](g, t!, scalar), METHOD[op](g, scalar, t!)]);
          const right = x.values.map((v) => f(v, scalar));
          const left = x.values.map((v) => f(scalar, v));
          expectRun(c, runs, [{ ...x, values: right }, { ...x, values: left }], TOLERANCE[dtype]);
        });
      }

      for (const dtype of ctx.floatDtypes()) {
        const f = reference(op, dtype);
        it(`${op} in ${dtype} at NaN, ±∞ and signed zeros`, () => {
          const c = new Case(`${op} ${dtype} specials`);
          const specials = [NaN, Infinity, -Infinity, 0, -0, 1.5, -2];
          const a = host(specials.flatMap((x) => specials.map(() => x)), [7, 7], dtype);
          const b = host(specials.flatMap(() => specials), [7, 7], dtype);
          const want = { ...a, values: a.values.map((x, i) => f(x, b.values[i]!)) };
          expectRun(c, ctx.run([a, b], (g, [ta, tb]) => METHOD[op](g, ta!, tb!)), [want], TOLERANCE[dtype]);
        });
      }
    }

    for (const dtype of ctx.dtypes) {
      it(`vectorAdd in ${dtype}`, () => {
        const c = new Case(`vectorAdd ${dtype}`);
        const [a, b] = [0, 1].map(() => host(draw(c, 'add', dtype, 111, false), [3, 37], dtype)) as [Values, Values];
        const f = reference('add', dtype);
        const want = { ...a, values: a.values.map((v, i) => f(v, b.values[i]!)) };
        expectRun(c, ctx.run([a, b], (g, [ta, tb]) => g.vectorAdd(ta!, tb!)), [want], TOLERANCE[dtype]);
      });
    }
  });
}
