/**
 * Reductions against the JS backend on fresh inputs, every axis position and the whole tensor:
 * max, min, argmax (first NaN, else first maximum) and i32 sums bit for bit; float sums and means
 * (f64 accumulation on both sides, in different orders) within tolerance. Shapes reach each
 * path: contiguous rows, coalesced inner > 1 split by outer or by inner ranges, and the chunked
 * long axis.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DTYPES, dtypeSize, type DType } from '../../../src/compute/core/dtype.js';
import { REDUCE_OPS, planReduction, type ReduceOp } from '../../../src/compute/core/reduce-plan.js';
import { reduce as jsReduce } from '../../../src/compute/cpu/reduce.js';
import { reduce } from '../../../src/compute/cpu/simd/reduce.js';
import {
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

const CASES: [number[], number | undefined][] = [
  [[7, 101, 5], 0],
  [[7, 101, 5], 1],
  [[7, 101, 5], 2],
  [[7, 101, 5], undefined],
  [[301, 1003], 1], // rows, split across threads
  [[1001, 303], 0], // coalesced, outer 1: inner ranges
  [[3, 403, 301], 1], // coalesced, inner not a multiple of 4
  [[2, 5, 33_001], 1], // coalesced, crossing the 32768-output tile
  [[200_003], undefined], // chunked long axis
  [[150_001, 3], 0], // chunked, inner 3
  [[2, 5, 1], 1],
  [[1], 0],
];

/**
 * Inputs; for sums and means (`inexact`) without the ±3.4e38 specials: a column holding both
 * cancels to whatever small terms the f64 accumulator kept, which depends on the order.
 */
function input(dtype: DType, n: number, seed: number, specials: boolean, inexact: boolean): Uint8Array {
  if (dtype === 'i32') return new Uint8Array(randomInts(n, seed).buffer);
  const values = randomValues(n, seed, 10, specials);
  return encode(inexact ? values.map((v) => (Math.abs(v) === 3.4e38 ? Math.sign(v) : v)) : values, dtype);
}

for (const dtype of DTYPES) {
  for (const op of Object.keys(REDUCE_OPS) as ReduceOp[]) {
    if (dtype === 'i32' && !REDUCE_OPS[op].int) continue;
    const exact = op !== 'mean' && !(op === 'sum' && dtype !== 'i32');
    describe(`${op} ${dtype}`, () => {
      it.each(CASES.map(([shape, axis]) => [JSON.stringify(shape), axis, shape] as const))(
        `over %s axis %s ${exact ? 'matches the JS backend bit for bit' : 'is within tolerance of the JS backend'}`,
        (_label, axis, shape) => {
          const seed = freshSeed();
          const { plan, outShape } = planReduction(shape, axis, false);
          const n = shape.reduce((p, d) => p * d, 1);
          const outN = outShape.reduce((p, d) => p * d, 1);
          const outType: DType = op === 'argmax' ? 'i32' : dtype;
          for (const specials of [false, true]) {
            const bytes = input(dtype, n, seed, specials, !exact);
            const out = alloc(rt, outN * dtypeSize[outType]);
            reduce(rt, op, dtype, put(rt, bytes), out, plan);
            const ref = cpuView(outN * dtypeSize[outType], outType, outShape);
            jsReduce(op, cpuView(bytes, dtype, shape), ref, plan);
            const got = get(rt, out, outN * dtypeSize[outType]);
            const label = `seed ${seed}, specials ${specials}`;
            if (exact) expect(firstBitDifference(got, cpuBytes(ref), outType), label).toBe(-1);
            else expect(relError(decode(got, outType), decode(cpuBytes(ref), outType)), label).toBeLessThanOrEqual(dtype === 'f32' ? 1e-6 : TOLERANCE[dtype as 'f16' | 'bf16']);
          }
        },
      );
    });
  }
}

describe('edge cases', () => {
  const rows: [string, number[]][] = [
    ['all -inf', [-Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity]],
    ['ties', [1, 3, 3, 2, 3, 1, 0, 3, 3]],
    ['NaN after the max', [1, 9, 2, NaN, 9, NaN, 0, 0, 0]],
    ['NaN first', [NaN, 1, 2, 3, 4, 5, 6, 7, 8]],
    ['NaN last', [0, 1, 2, 3, 4, 5, 6, 7, NaN]],
    ['max in the tail', [0, 0, 0, 0, 0, 0, 0, 0, 5]],
  ];
  it.each(rows)('%s', (_label, values) => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const bytes = encode(values, dtype);
      for (const [shape, axis] of [[[values.length], 0], [[values.length, 1], 0]] as const) {
        const { plan } = planReduction(shape, axis, false);
        const out = alloc(rt, 4);
        reduce(rt, 'argmax', dtype, put(rt, bytes), out, plan);
        const ref = cpuView(4, 'i32', [1]);
        jsReduce('argmax', cpuView(bytes, dtype, shape), ref, plan);
        expect(decode(get(rt, out, 4), 'i32')[0], `${dtype} ${JSON.stringify(shape)}`).toBe(decode(cpuBytes(ref), 'i32')[0]);
      }
    }
  });

  it('max and min of ±0 keep the first zero, as the JS backend does', () => {
    const rows = [[0, -0, -0, 0, -0, 0, 0, -0, -0, 0, -0], [-0, 0, 0, -0, 0, -0, -0, 0, 0, -0, 0]];
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      for (const values of rows) {
        for (const op of ['max', 'min'] as const) {
          for (const [shape, axis] of [[[values.length], 0], [[values.length, 1], 0], [[values.length, 5], 0]] as const) {
            const data = shape.length === 2 ? values.flatMap((v) => new Array<number>(shape[1]!).fill(v)) : values;
            const bytes = encode(data, dtype);
            const { plan, outShape } = planReduction(shape, axis, false);
            const outN = outShape.reduce((p, d) => p * d, 1);
            const out = alloc(rt, outN * dtypeSize[dtype]);
            reduce(rt, op, dtype, put(rt, bytes), out, plan);
            const ref = cpuView(outN * dtypeSize[dtype], dtype, outShape);
            jsReduce(op, cpuView(bytes, dtype, shape), ref, plan);
            expect(firstBitDifference(get(rt, out, outN * dtypeSize[dtype]), cpuBytes(ref), dtype), `${op} ${dtype} ${JSON.stringify(shape)}`).toBe(-1);
          }
        }
      }
    }
  });

  it('i32 rows of INT32_MIN give index 0', () => {
    const bytes = new Uint8Array(new Int32Array(11).fill(-2147483648).buffer);
    const out = alloc(rt, 4);
    reduce(rt, 'argmax', 'i32', put(rt, bytes), out, { outer: 1, axisLen: 11, inner: 1 });
    expect(decode(get(rt, out, 4), 'i32')[0]).toBe(0);
  });
});
