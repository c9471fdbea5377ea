/**
 * transpose, the Philox uniform fill and dropout against the JS backend, bit for bit: transpose
 * moves raw bits; the random kernels reproduce cpu/philox.ts's stream and cpu/random.ts's f32
 * formulas exactly (seeds beyond 2^32 included, odd counts, split across threads).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DTYPES, dtypeSize } from '../../../src/compute/core/dtype.js';
import { dropout as jsDropout, random as jsRandom } from '../../../src/compute/cpu/random.js';
import { transpose as jsTranspose } from '../../../src/compute/cpu/transpose.js';
import { dropout, randomUniform } from '../../../src/compute/cpu/simd/random.js';
import { transpose } from '../../../src/compute/cpu/simd/transpose.js';
import { FLOAT_DTYPES, MANY_THREADS, alloc, cpuBytes, cpuView, encode, firstBitDifference, freshSeed, get, put, randomInts, randomValues, runtime } from './helpers.js';

const rt = runtime(MANY_THREADS);
afterAll(() => rt.dispose());

describe('transpose', () => {
  const SHAPES: [number, number, number][] = [[3, 37, 53], [1, 1000, 1001], [5, 1, 9], [2, 64, 8], [4, 9, 1], [1, 2048, 300]];
  for (const dtype of DTYPES) {
    it.each(SHAPES)(`${dtype} [%i, %i, %i] moves the bits the JS backend moves`, (batch, rows, cols) => {
      const seed = freshSeed();
      const n = batch * rows * cols;
      const bytes = dtype === 'i32' ? new Uint8Array(randomInts(n, seed).buffer) : encode(randomValues(n, seed, 1, true), dtype);
      const out = alloc(rt, n * dtypeSize[dtype]);
      transpose(rt, dtype, put(rt, bytes), out, batch, rows, cols);
      const ref = cpuView(n * dtypeSize[dtype], dtype, [batch, cols, rows]);
      jsTranspose(cpuView(bytes, dtype, [batch, rows, cols]), ref, batch, rows, cols);
      expect(firstBitDifference(get(rt, out, n * dtypeSize[dtype]), cpuBytes(ref), dtype), `seed ${seed}`).toBe(-1);
    });
  }
});

const SEEDS = [0, 1, 12345, 2 ** 32 + 7, 2 ** 40 + 123456789];

describe.each(FLOAT_DTYPES)('random %s', (dtype) => {
  const size = dtypeSize[dtype];
  it.each([1, 7, 1001, 300_017])('uniform of %i elements is the JS backend stream', (n) => {
    for (const seed of [...SEEDS, freshSeed()]) {
      const out = alloc(rt, n * size);
      randomUniform(rt, dtype, out, n, seed, -1.5, 3.25);
      const ref = cpuView(n * size, dtype, [n]);
      jsRandom(ref, 'uniform', seed, -1.5, 3.25);
      expect(firstBitDifference(get(rt, out, n * size), cpuBytes(ref), dtype), `seed ${seed}`).toBe(-1);
    }
  });

  it.each([1, 7, 1001, 300_017])('dropout of %i elements keeps and scales what the JS backend does', (n) => {
    for (const [seed, p] of [[SEEDS[3]!, 0.1], [freshSeed(), 0.5], [7, 0.9]] as const) {
      const bytes = encode(randomValues(n, seed, 2, true), dtype);
      const out = alloc(rt, n * size);
      dropout(rt, dtype, put(rt, bytes), out, n, p, seed);
      const ref = cpuView(n * size, dtype, [n]);
      jsDropout(cpuView(bytes, dtype, [n]), ref, p, seed);
      expect(firstBitDifference(get(rt, out, n * size), cpuBytes(ref), dtype), `seed ${seed}, p ${p}`).toBe(-1);
    }
  });
});
