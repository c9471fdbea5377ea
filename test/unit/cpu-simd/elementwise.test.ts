/**
 * fill, copy, cast, unary ops, activation derivatives and broadcasting binary ops against the JS
 * CPU backend on the same fresh inputs: bit for bit where the meaning is exact (fill, copy, cast,
 * i32, neg/abs/relu/leakyRelu/sqrt, relu/leakyRelu derivatives, every binary op in every dtype),
 * within the dtype's tolerance otherwise. Sizes are odd so vector bodies and tails both run.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { planBroadcast } from '../../../src/compute/core/broadcast.js';
import { DTYPES, dtypeSize, type DType } from '../../../src/compute/core/dtype.js';
import { ACTIVATION_GRAD_OPS, BINARY_OPS, UNARY_OP_NAMES, type UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import * as js from '../../../src/compute/cpu/elementwise.js';
import { activationGrad, binary, cast, copy, fill, unary } from '../../../src/compute/cpu/simd/elementwise.js';
import {
  FLOAT_DTYPES,
  MANY_THREADS,
  TOLERANCE,
  alloc,
  cpuBytes,
  cpuView,
  decode,
  encode,
  firstBitDifference,
  freshSeed,
  get,
  put,
  randomInts,
  randomValues,
  relError,
  runtime,
} from './helpers.js';

const rt = runtime(MANY_THREADS);
afterAll(() => rt.dispose());

/** Sizes: tails only, one vector plus a tail, and one large enough to be split across threads. */
const SIZES = [5, 37, 100_003];

function inputs(dtype: DType, n: number, seed: number, specials = true): Uint8Array {
  return dtype === 'i32' ? new Uint8Array(randomInts(n, seed).buffer) : encode(randomValues(n, seed, 3, specials), dtype);
}

describe('fill and copy', () => {
  it.each(DTYPES)('fill %s stores what the JS backend stores', (dtype) => {
    for (const value of [1.5, -0, NaN, Infinity, 1e-41, 65519.9, 2.7, -1e10, 3e9, 0.1]) {
      const n = 1003;
      const out = alloc(rt, n * dtypeSize[dtype]);
      fill(rt, dtype, out, n, value);
      const ref = cpuView(n * dtypeSize[dtype], dtype, [n]);
      js.fill(ref, value);
      expect(firstBitDifference(get(rt, out, n * dtypeSize[dtype]), cpuBytes(ref), dtype), `fill ${value}`).toBe(-1);
    }
  });

  it('copies bytes exactly, large copies split across threads', () => {
    const seed = freshSeed();
    for (const n of [3, 4097, 300_001]) {
      const src = put(rt, encode(randomValues(Math.ceil(n / 4), seed), 'f32').subarray(0, n));
      const dst = alloc(rt, n);
      copy(rt, dst, src, n);
      expect(Buffer.compare(get(rt, dst, n), get(rt, src, n)), `seed ${seed}`).toBe(0);
    }
  });
});

describe('cast', () => {
  for (const from of DTYPES) {
    for (const to of DTYPES) {
      it(`${from} → ${to} matches the JS backend bit for bit`, () => {
        const seed = freshSeed();
        for (const n of SIZES) {
          const bytes = from === 'i32' ? new Uint8Array(randomInts(n, seed).buffer) : encode(randomValues(n, seed, 2 ** 20, true), from);
          const x = put(rt, bytes);
          const out = alloc(rt, n * dtypeSize[to]);
          cast(rt, from, x, to, out, n);
          const ref = cpuView(n * dtypeSize[to], to, [n]);
          js.cast(cpuView(bytes, from, [n]), ref);
          expect(firstBitDifference(get(rt, out, n * dtypeSize[to]), cpuBytes(ref), to), `seed ${seed}, n ${n}`).toBe(-1);
        }
      });
    }
  }
});

/** Unary ops whose f32 result is one correctly rounded operation: the same bits as JS. */
const EXACT_UNARY = new Set<UnaryOp>(['neg', 'abs', 'relu', 'leakyRelu', 'sqrt']);

describe('unary ops', () => {
  for (const op of UNARY_OP_NAMES) {
    for (const dtype of FLOAT_DTYPES) {
      it(`${op} ${dtype} ${EXACT_UNARY.has(op) ? 'matches the JS backend bit for bit' : 'is within tolerance of the JS backend'}`, () => {
        const seed = freshSeed();
        for (const n of SIZES) {
          const bytes = inputs(dtype, n, seed);
          const x = put(rt, bytes);
          const out = alloc(rt, n * dtypeSize[dtype]);
          unary(rt, op, dtype, x, out, n, 0.2);
          const ref = cpuView(n * dtypeSize[dtype], dtype, [n]);
          js.unary(op, cpuView(bytes, dtype, [n]), ref, 0.2);
          const got = get(rt, out, n * dtypeSize[dtype]);
          if (EXACT_UNARY.has(op)) {
            expect(firstBitDifference(got, cpuBytes(ref), dtype), `seed ${seed}, n ${n}`).toBe(-1);
          } else {
            expect(relError(decode(got, dtype), decode(cpuBytes(ref), dtype)), `seed ${seed}, n ${n}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
          }
        }
      });
    }
  }

  it.each(['neg', 'abs'] as const)('%s on i32 wraps like the JS backend', (op) => {
    const seed = freshSeed();
    for (const n of SIZES) {
      const bytes = inputs('i32', n, seed);
      const x = put(rt, bytes);
      const out = alloc(rt, n * 4);
      unary(rt, op, 'i32', x, out, n);
      const ref = cpuView(n * 4, 'i32', [n]);
      js.unary(op, cpuView(bytes, 'i32', [n]), ref);
      expect(firstBitDifference(get(rt, out, n * 4), cpuBytes(ref), 'i32'), `seed ${seed}`).toBe(-1);
    }
  });

  it('uses slope 0.01 for leakyRelu by default, in double precision like the JS backend', () => {
    const bytes = encode([-3, -1e-3, 7, -0.1], 'f32');
    const out = alloc(rt, 16);
    unary(rt, 'leakyRelu', 'f32', put(rt, bytes), out, 4);
    const ref = cpuView(16, 'f32', [4]);
    js.unary('leakyRelu', cpuView(bytes, 'f32', [4]), ref);
    expect(firstBitDifference(get(rt, out, 16), cpuBytes(ref), 'f32')).toBe(-1);
  });
});

describe('activation derivatives', () => {
  for (const op of ACTIVATION_GRAD_OPS) {
    for (const dtype of FLOAT_DTYPES) {
      const exact = op === 'reluGrad' || op === 'leakyReluGrad';
      it(`${op} ${dtype} ${exact ? 'matches the JS backend bit for bit' : 'is within tolerance of the JS backend'}`, () => {
        const seed = freshSeed();
        for (const n of SIZES) {
          const xb = inputs(dtype, n, seed);
          const dyb = encode(randomValues(n, seed + 1), dtype);
          const out = alloc(rt, n * dtypeSize[dtype]);
          activationGrad(rt, op, dtype, put(rt, xb), put(rt, dyb), out, n, 0.3);
          const ref = cpuView(n * dtypeSize[dtype], dtype, [n]);
          js.activationGrad(op, cpuView(xb, dtype, [n]), cpuView(dyb, dtype, [n]), ref, 0.3);
          const got = get(rt, out, n * dtypeSize[dtype]);
          if (exact) expect(firstBitDifference(got, cpuBytes(ref), dtype), `seed ${seed}, n ${n}`).toBe(-1);
          else expect(relError(decode(got, dtype), decode(cpuBytes(ref), dtype)), `seed ${seed}, n ${n}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
        }
      });
    }
  }
});

/** Shape pairs covering every plan kind, rank up to 6 after collapsing, and inner runs of 1. */
const BROADCASTS: [string, number[], number[]][] = [
  ['same', [7, 13, 5], [7, 13, 5]],
  ['same (large)', [301, 303], [301, 303]],
  ['scalarB', [99_999], [1]],
  ['scalarA', [1], [33, 7]],
  ['rowB', [513, 19], [19]],
  ['rowA', [3], [1001, 3]],
  ['general', [400, 1, 300], [1, 5, 300]],
  ['general, inner broadcast', [7, 1], [1, 9]],
  ['general, rank 6', [2, 1, 3, 1, 5, 1], [1, 3, 1, 4, 1, 6]],
];

describe('binary ops', () => {
  for (const [kind, aShape, bShape] of BROADCASTS) {
    const plan = planBroadcast('test', aShape, bShape);
    for (const dtype of DTYPES) {
      for (const op of Object.keys(BINARY_OPS) as (keyof typeof BINARY_OPS)[]) {
        if (dtype === 'i32' && op === 'div') continue;
        it(`${op} ${dtype} ${kind} (${plan.kind}) matches the JS backend bit for bit`, () => {
          const seed = freshSeed();
          const na = aShape.reduce((p, d) => p * d, 1);
          const nb = bShape.reduce((p, d) => p * d, 1);
          const n = plan.outShape.reduce((p, d) => p * d, 1);
          const ab = inputs(dtype, na, seed);
          const bb = inputs(dtype, nb, seed + 7);
          const out = alloc(rt, n * dtypeSize[dtype]);
          binary(rt, op, dtype, put(rt, ab), put(rt, bb), out, plan);
          const ref = cpuView(n * dtypeSize[dtype], dtype, plan.outShape);
          js.binary(op, cpuView(ab, dtype, aShape), cpuView(bb, dtype, bShape), ref, plan);
          expect(firstBitDifference(get(rt, out, n * dtypeSize[dtype]), cpuBytes(ref), dtype), `seed ${seed}`).toBe(-1);
        });
      }
    }
  }
});
