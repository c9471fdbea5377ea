import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { ReduceOptions } from '../../../src/compute/ops/reduce.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { cpuCompute, FLOAT_DTYPES, freshSeed, product, randomValues, relError, TOLERANCE } from './helpers.js';
import { reduceRef } from './reference.js';

let gpu: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
});
afterAll(() => gpu.dispose());

const firstMaxIndex = (s: number[]) => s.reduce((best, v, i) => (v > s[best]! ? i : best), 0);
const REDUCERS: Record<string, { run: (x: Tensor, o?: number | ReduceOptions) => Tensor; ref: (s: number[]) => number }> = {
  sum: { run: (x, o) => gpu.sum(x, o), ref: (s) => s.reduce((a, b) => a + b, 0) },
  mean: { run: (x, o) => gpu.mean(x, o), ref: (s) => s.reduce((a, b) => a + b, 0) / s.length },
  max: { run: (x, o) => gpu.max(x, o), ref: (s) => Math.max(...s) },
  min: { run: (x, o) => gpu.min(x, o), ref: (s) => Math.min(...s) },
  argmax: { run: (x, o) => gpu.argmax(x, o), ref: firstMaxIndex },
};

/** [shape, axis (undefined = all), keepDims, expected output shape]. */
const CASES: [number[], number | undefined, boolean, number[]][] = [
  [[7, 13], 0, false, [13]],
  [[7, 13], 1, false, [7]],
  [[7, 13], -1, true, [7, 1]],
  [[3, 1, 5], 1, false, [3, 5]],
  [[3, 4, 5], 1, true, [3, 1, 5]],
  [[3, 4, 5], -3, false, [4, 5]],
  [[7, 13], undefined, false, []],
  [[3, 4, 5], undefined, true, [1, 1, 1]],
  [[1], 0, false, []],
  [[], undefined, false, []],
  [[1000], undefined, false, []],
];

describe.each(FLOAT_DTYPES)('reductions in %s', (dtype) => {
  for (const [name, { run, ref }] of Object.entries(REDUCERS)) {
    it.each(CASES.map(([s, a, k, o]) => [`${JSON.stringify(s)} axis ${a} keepDims ${k}`, s, a, k, o] as const))(
      `${name} over %s`,
      async (_label, shape, axis, keepDims, outShape) => {
        const seed = freshSeed();
        using x = gpu.tensor(randomValues(product(shape), seed, 3, 0.5), shape, dtype);
        using out = run(x, { ...(axis === undefined ? {} : { axis }), keepDims });
        expect(out.shape).toEqual(outShape);
        expect(out.dtype).toBe(name === 'argmax' ? 'i32' : dtype);
        const normalizedAxis = axis === undefined ? undefined : axis < 0 ? axis + shape.length : axis;
        const expected = reduceRef(shape, await x.toArray(), normalizedAxis, ref);
        if (name === 'argmax') expect(Array.from(await out.toArray()), `seed ${seed}`).toEqual(expected);
        else expect(relError(await out.toArray(), expected, dtype), `seed ${seed}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
      },
    );
  }

  it('takes the axis as a bare number too', async () => {
    using x = gpu.tensor(randomValues(6, freshSeed()), [2, 3], dtype);
    using a = gpu.sum(x, 1);
    using b = x.sum({ axis: 1 });
    expect(Array.from(await a.toArray())).toEqual(Array.from(await b.toArray()));
  });
});

describe('reductions: accuracy, NaN, ties, i32, empty axes', () => {
  it('sums 10^6 f32 values with double accumulation', async () => {
    const seed = freshSeed();
    using x = gpu.tensor(randomValues(1_000_000, seed, 1, 0.1));
    const xs = await x.toArray();
    let exact = 0;
    for (const v of xs) exact += v;
    using s = gpu.sum(x);
    expect(relError(await s.toArray(), [exact]), `seed ${seed}`).toBeLessThanOrEqual(1e-7);
  });

  it('propagates NaN in max/min and points argmax at the first NaN', async () => {
    using x = gpu.tensor([1, 5, NaN, 5, NaN, 2], [2, 3]);
    expect(Array.from(await gpu.max(x).toArray())).toEqual([NaN]);
    expect(Array.from(await gpu.min(x, 1).toArray())).toEqual([NaN, NaN]);
    expect(Array.from(await gpu.argmax(x).toArray())).toEqual([2]);
    expect(Array.from(await gpu.argmax(x, 0).toArray())).toEqual([1, 1, 0]);
  });

  it('returns the first index among equal maxima', async () => {
    using x = gpu.tensor([3, 7, 7, 1, 7]);
    expect(Array.from(await gpu.argmax(x).toArray())).toEqual([1]);
    using negative = gpu.tensor([-Infinity, -Infinity]);
    expect(Array.from(await gpu.argmax(negative).toArray())).toEqual([0]);
  });

  it('reduces i32 exactly, with wraparound for sum', async () => {
    using x = gpu.tensor(new Int32Array([2147483647, 1, 5, -3, 9, 4]), [2, 3]);
    expect(Array.from(await gpu.sum(x, 1).toArray())).toEqual([-2147483643, 10]);
    expect(Array.from(await gpu.max(x, 0).toArray())).toEqual([2147483647, 9, 5]);
    expect(Array.from(await gpu.min(x).toArray())).toEqual([-3]);
    expect(Array.from(await gpu.argmax(x, 1).toArray())).toEqual([0, 1]);
  });

  it('gives 0 for sum and NaN for mean over an empty axis, and refuses max/min/argmax there', async () => {
    using x = gpu.zeros([5, 0]);
    using s = gpu.sum(x, 1);
    expect(s.shape).toEqual([5]);
    expect(Array.from(await s.toArray())).toEqual([0, 0, 0, 0, 0]);
    expect(Array.from(await gpu.mean(x, 1).toArray())).toEqual([NaN, NaN, NaN, NaN, NaN]);
    expect(Array.from(await gpu.sum(x).toArray())).toEqual([0]);
    for (const op of ['max', 'min', 'argmax'] as const) {
      expect(() => gpu[op](x, 1)).toThrow(/cannot reduce an empty axis/);
      expect(() => gpu[op](x)).toThrow(/cannot reduce an empty axis/);
    }
    // Reducing the non-empty axis of an empty tensor is an empty result, not an error.
    using m = gpu.max(x, 0);
    expect(m.shape).toEqual([0]);
  });
});

describe.each(FLOAT_DTYPES)('softmax and logSoftmax in %s', (dtype) => {
  const softmaxRef = (row: number[]) => {
    const m = Math.max(...row);
    const e = row.map((v) => Math.exp(v - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
  };
  const SHAPES: number[][] = [[7, 13], [3, 1, 5], [1], [], [5, 0], [2, 1000]];
  it.each(SHAPES.map((s) => [JSON.stringify(s), s] as const))('over the last axis of %s', async (_l, shape) => {
    const seed = freshSeed();
    using x = gpu.tensor(randomValues(product(shape), seed, 3), shape, dtype);
    const xs = Array.from(await x.toArray());
    const cols = shape.length === 0 ? 1 : shape[shape.length - 1]!;
    const ref: number[] = [];
    const logRef: number[] = [];
    for (let base = 0; base < xs.length; base += cols) {
      const p = softmaxRef(xs.slice(base, base + cols));
      ref.push(...p);
      logRef.push(...p.map(Math.log));
    }
    using p = gpu.softmax(x);
    using lp = x.logSoftmax();
    expect(p.shape).toEqual(shape);
    expect(relError(await p.toArray(), ref, dtype), `seed ${seed}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
    expect(relError(await lp.toArray(), logRef, dtype), `seed ${seed}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
  });

  it('stays finite for large logits (stable)', async () => {
    using x = gpu.tensor([1000, 1001, 1002, -1000, -1001, -1002], [2, 3], dtype);
    const xs = Array.from(await x.toArray());
    const ref = [...softmaxRef(xs.slice(0, 3)), ...softmaxRef(xs.slice(3))];
    using p = gpu.softmax(x);
    const out = await p.toArray();
    expect(out.every(Number.isFinite)).toBe(true);
    expect(relError(out, ref, dtype)).toBeLessThanOrEqual(TOLERANCE[dtype]);
    using lp = gpu.logSoftmax(x);
    expect(relError(await lp.toArray(), ref.map(Math.log), dtype)).toBeLessThanOrEqual(TOLERANCE[dtype]);
  });
});

describe.each(FLOAT_DTYPES)('layerNorm in %s', (dtype) => {
  const normRef = (row: number[], g: ArrayLike<number> | undefined, b: ArrayLike<number> | undefined, eps: number) => {
    const mean = row.reduce((a, v) => a + v, 0) / row.length;
    const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / row.length;
    return row.map((v, j) => ((v - mean) / Math.sqrt(variance + eps)) * (g ? g[j]! : 1) + (b ? b[j]! : 0));
  };
  const SHAPES: number[][] = [[7, 13], [3, 1, 5], [4, 1], [5, 0], [2, 777]];
  for (const affine of [true, false]) {
    it.each(SHAPES.map((s) => [JSON.stringify(s), s] as const))(`${affine ? 'with' : 'without'} gamma/beta on %s`, async (_l, shape) => {
      const seed = freshSeed();
      const cols = shape[shape.length - 1]!;
      using x = gpu.tensor(randomValues(product(shape), seed, 2, 3), shape, dtype);
      using gamma = gpu.tensor(randomValues(cols, seed + 1, 0.5, 1), [cols], dtype);
      using beta = gpu.tensor(randomValues(cols, seed + 2), [cols], dtype);
      const eps = 1e-3;
      using out = affine ? gpu.layerNorm(x, gamma, beta, eps) : x.layerNorm(undefined, undefined, eps);
      const xs = Array.from(await x.toArray());
      const g = affine ? await gamma.toArray() : undefined;
      const b = affine ? await beta.toArray() : undefined;
      const ref: number[] = [];
      for (let base = 0; base < xs.length; base += cols) ref.push(...normRef(xs.slice(base, base + cols), g, b, eps));
      expect(out.shape).toEqual(shape);
      expect(relError(await out.toArray(), ref, dtype), `seed ${seed}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
    });
  }
});
