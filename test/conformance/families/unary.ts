/**
 * Every unary op of the table (`UNARY_OPS`) in every dtype it takes, on random inputs of odd
 * shapes against the float64 reference, and at the special values: NaN propagates through every
 * op, ±∞ give their limits, and large or tiny inputs neither overflow early nor lose the result.
 */
import { describe, it } from 'vitest';
import type { DType } from '../../../src/compute/core/dtype.js';
import { UNARY_OP_NAMES, unaryTakesInt, type PlainUnaryOp, type UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { product } from '../../unit/compute/helpers.js';
import { UNARY_REFERENCE } from '../../unit/compute/reference.js';
import { expectRun, TOLERANCE } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { Case } from '../seeds.js';

const SHAPES: number[][] = [[], [13], [3, 1, 7], [2, 0]];
const SLOPE = 0.07;
const POSITIVE_ONLY = new Set<UnaryOp>(['log', 'sqrt', 'rsqrt']);

/** How to call the ops GpuCompute declares by hand (they take a parameter); the plain ones are `gpu[op](x)`. */
const OWN_METHOD: Record<Exclude<UnaryOp, PlainUnaryOp>, (gpu: GpuCompute, x: Tensor) => Tensor> = {
  leakyRelu: (gpu, x) => gpu.leakyRelu(x, SLOPE),
  gelu: (gpu, x) => gpu.gelu(x),
  geluTanh: (gpu, x) => gpu.gelu(x, { approximate: 'tanh' }),
};

/** op(x) through the public API. */
function applyUnary(gpu: GpuCompute, op: UnaryOp, x: Tensor): Tensor {
  return Object.hasOwn(OWN_METHOD, op) ? OWN_METHOD[op as keyof typeof OWN_METHOD](gpu, x) : gpu[op as PlainUnaryOp](x);
}

/** Each op's limits at +∞ and −∞; undefined where the limit is an indeterminate form (−∞ · 0) whose result the contract leaves open. */
const LIMITS: Record<UnaryOp, readonly [number, number | undefined]> = {
  neg: [-Infinity, Infinity],
  abs: [Infinity, Infinity],
  exp: [Infinity, 0],
  log: [Infinity, NaN],
  sqrt: [Infinity, NaN],
  rsqrt: [0, NaN],
  relu: [Infinity, 0],
  leakyRelu: [Infinity, -Infinity],
  sigmoid: [1, 0],
  tanh: [1, -1],
  gelu: [Infinity, undefined],
  geluTanh: [Infinity, undefined],
  silu: [Infinity, undefined],
  softplus: [Infinity, 0],
};

/** Finite special inputs: signed zeros, values whose exponentials overflow f32 or underflow to subnormals, and tiny ones. */
const FINITE_SPECIALS = [0, -0, 30, -30, 100, -100, 1e-30, -1e-30, 0.5, -0.5];

/** The float64 reference of op at a value the tensor holds. */
function reference(op: UnaryOp, x: number, dtype: DType): number {
  if (dtype === 'i32') return UNARY_REFERENCE[op](x, SLOPE) | 0;
  if (Number.isNaN(x)) return NaN;
  if (x === Infinity) return LIMITS[op][0];
  if (x === -Infinity) return LIMITS[op][1]!;
  return UNARY_REFERENCE[op](x, SLOPE);
}

export function describeUnary(ctx: ConformanceContext): void {
  describe('unary ops', () => {
    for (const dtype of ctx.floatDtypes()) {
      it(`leakyRelu in ${dtype} with its default slope, 0.01`, () => {
        const c = new Case(`leakyRelu ${dtype} default slope`);
        const x = host(c.normal(21, 2), [3, 7], dtype);
        const want = { ...x, values: x.values.map((v) => UNARY_REFERENCE.leakyRelu(v, 0.01)) };
        expectRun(c, ctx.run([x], (g, [t]) => g.leakyRelu(t!)), [want], TOLERANCE[dtype]);
      });
    }

    for (const op of UNARY_OP_NAMES) {
      const dtypes = ctx.dtypes.filter((d) => d !== 'i32' || unaryTakesInt(op));
      for (const dtype of dtypes) {
        it(`${op} in ${dtype} on odd shapes`, () => {
          for (const shape of SHAPES) {
            const c = new Case(`${op} ${dtype} [${shape}]`);
            const n = product(shape);
            const drawn = dtype === 'i32' ? c.ints(n, -(2 ** 31), 2 ** 31 - 1) : c.normal(n, 2);
            if (dtype === 'i32' && n >= 3) drawn.splice(0, 3, -(2 ** 31), 2 ** 31 - 1, 0);
            const x = host(POSITIVE_ONLY.has(op) ? drawn.map((v) => Math.abs(v) + 0.05) : drawn, shape, dtype);
            const want = { ...x, values: x.values.map((v) => reference(op, v, dtype)) };
            expectRun(c, ctx.run([x], (g, [t]) => applyUnary(g, op, t!)), [want], TOLERANCE[dtype]);
          }
        });
      }
      for (const dtype of ctx.floatDtypes()) {
        it(`${op} in ${dtype} at NaN, ±∞, ±0 and far out`, () => {
          const c = new Case(`${op} ${dtype} specials`);
          const inputs = [NaN, Infinity, ...(LIMITS[op][1] === undefined ? [] : [-Infinity]), ...FINITE_SPECIALS];
          const x = host(inputs, [inputs.length], dtype);
          const want = { ...x, values: x.values.map((v) => reference(op, v, dtype)) };
          expectRun(c, ctx.run([x], (g, [t]) => applyUnary(g, op, t!)), [want], TOLERANCE[dtype]);
        });
      }
    }
  });
}
