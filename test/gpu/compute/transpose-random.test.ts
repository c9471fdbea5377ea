import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DTYPES } from '../../../src/compute/core/dtype.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, FLOAT_DTYPES, freshSeed, openPair, randomValues, relError, twin, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

describe.skipIf(!gpuAvailable)('CUDA transpose', () => {
  // Tiled, and narrow (at most 8 rows or columns), batched and not.
  const SHAPES = [[1, 1], [1, 37], [37, 1], [33, 65], [64, 64], [3, 100, 7], [2, 5, 31, 33], [4, 1000, 3], [8, 9], [9, 8], [70_001, 2], [3, 2, 5001], [2, 9, 9]];
  // Every narrow size, few columns and few rows: the long dim a multiple of 8 (16-byte accesses
  // for every dtype), of 4 only (f32 vectors, 16-bit scalars), and odd (scalars), batched and not.
  const NARROW = [2, 3, 4, 5, 6, 7, 8].flatMap((k) => [[3, 64, k], [44, k], [2, 67, k], [k, 40], [2, k, 36], [k, 1001], [5, 7, k]]);
  it.each(DTYPES)('every shape (%s)', (dtype) => {
    for (const shape of [...SHAPES, ...NARROW]) {
      const n = shape.reduce((p, d) => p * d, 1);
      const values = randomValues(n, freshSeed(), 100).map((v) => (dtype === 'i32' ? Math.round(v) : v));
      const [x, xc] = twin(pair, values, shape, dtype);
      using y = pair.cuda.transpose(x);
      using yc = pair.cpu.transpose(xc);
      expect(y.shape).toEqual([...shape.slice(0, -2), shape.at(-1)!, shape.at(-2)!]);
      expect(y.toRawArraySync(), `transpose ${dtype} [${shape}]`).toEqual(yc.toRawArraySync());
      x.dispose();
      xc.dispose();
    }
  });
});

describe.skipIf(!gpuAvailable)('CUDA seeded randomness', () => {
  it.each(FLOAT_DTYPES)('uniform bits equal the CPU backend (%s)', (dtype) => {
    for (const seed of [0, 7, freshSeed(), 2 ** 40 + 3]) {
      for (const [low, high] of [[0, 1], [-2.5, 7.25]] as const) {
        using a = pair.cuda.rand([1031], { seed, low, high, dtype });
        using b = pair.cpu.rand([1031], { seed, low, high, dtype });
        expect(a.toRawArraySync(), `seed ${seed} [${low}, ${high})`).toEqual(b.toRawArraySync());
      }
    }
  });

  it.each(FLOAT_DTYPES)('normal values equal the CPU backend within f32 rounding (%s)', (dtype) => {
    const seed = freshSeed();
    using a = pair.cuda.randn([4099], { seed, mean: 1.5, std: 2, dtype });
    using b = pair.cpu.randn([4099], { seed, mean: 1.5, std: 2, dtype });
    const ga = valuesOf(a);
    const gb = valuesOf(b);
    // Transcendentals differ in the last bits between CUDA and V8; after rounding to the dtype
    // almost every value is identical and the rest differ by one unit in the last place.
    const ulp = dtype === 'f32' ? 2 ** -23 : dtype === 'f16' ? 2 ** -10 : 2 ** -7;
    for (let i = 0; i < ga.length; i++) expect(Math.abs(ga[i]! - gb[i]!)).toBeLessThanOrEqual(ulp * Math.max(1, Math.abs(gb[i]!)));
    const mean = ga.reduce((s, v) => s + v, 0) / ga.length;
    expect(Math.abs(mean - 1.5)).toBeLessThan(0.15);
  });

  it.each(FLOAT_DTYPES)('dropout keeps the same elements as the CPU backend, scaled by 1/(1-p) (%s)', (dtype) => {
    const n = 10_007;
    const seed = freshSeed();
    const [x, xc] = twin(pair, randomValues(n, freshSeed()), [n], dtype);
    for (const p of [0.1, 0.5, 0.9]) {
      using y = pair.cuda.dropout(x, p, seed);
      using yc = pair.cpu.dropout(xc, p, seed);
      const gy = valuesOf(y);
      const cy = valuesOf(yc);
      const hx = valuesOf(x);
      expect(gy.map((v) => v === 0)).toEqual(cy.map((v) => v === 0));
      const kept = gy.filter((v) => v !== 0).length / n;
      expect(Math.abs(kept - (1 - p))).toBeLessThan(0.03);
      const ref = hx.map((v, i) => (cy[i] === 0 ? 0 : v / (1 - p)));
      expect(relError(gy, ref, dtype)).toBeLessThanOrEqual(dtype === 'f32' ? 1e-6 : dtype === 'f16' ? 1e-3 : 8e-3);
      expect(gy).toEqual(cy);
    }
    x.dispose();
    xc.dispose();
  });
});
