/**
 * gpu.svd on the CUDA backend: the known-spectrum proofs at sizes where the device does the
 * work (exactly low-rank, slowly decaying, rank-deficient requests), agreement with the CPU
 * backend (the same algorithm and the same Philox sketch), determinism, and NaN/Inf refused by
 * the on-device check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { freshSeed } from '../../unit/compute/helpers.js';
import { knownMatrix, optimalError, reconstructionError } from '../../unit/svd/known-spectrum.js';
import { expectOrthonormal, expectRecovered, maxRelativeError, reconstruction, runSvd } from '../../unit/svd/svd-checks.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, openPair, type Pair } from '../compute/setup.js';

describe.skipIf(!gpuAvailable)('svd on CUDA', () => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await openPair();
  });
  afterAll(() => closePair(pair));

  it('recovers an exactly low-rank spectrum within 1e-4 relative, with orthonormal U and V', () => {
    const seed = freshSeed();
    const [m, n] = [2048, 1536];
    const km = knownMatrix(m, n, Array.from({ length: 40 }, (_, i) => 100 * 0.9 ** i), seed);
    for (const rank of [40, 25]) {
      const label = `seed ${seed} rank ${rank}`;
      const r = runSvd(pair.cuda, km, { rank, seed });
      expectRecovered(r, km, m, n, rank, label);
    }
  });

  it('reaches 1.05x the optimal error on a slowly decaying spectrum with 2 power iterations', () => {
    const seed = freshSeed();
    const [m, n, k] = [1024, 768, 16];
    const km = knownMatrix(m, n, Array.from({ length: n }, (_, i) => 1 / Math.sqrt(i + 1)), seed);
    const r = runSvd(pair.cuda, km, { rank: k, powerIterations: 2, seed });
    expectOrthonormal(r, m, n, k, `seed ${seed}`);
    const ratio = reconstructionError(km.a, m, n, r.u, r.s, r.v) / optimalError(km.singularValues, k);
    expect(ratio, `seed ${seed}`).toBeLessThanOrEqual(1.05);
  });

  it('keeps U and V orthonormal when the rank asked exceeds the matrix rank', () => {
    const seed = freshSeed();
    const km = knownMatrix(1000, 700, [5, 4, 3, 2, 1], seed);
    const r = runSvd(pair.cuda, km, { rank: 20, seed });
    expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
    expectOrthonormal(r, 1000, 700, 20, `seed ${seed}`);
  });

  it('agrees with the CPU backend (same algorithm, same Philox sketch)', () => {
    const seed = freshSeed();
    const [m, n, k] = [384, 256, 12];
    const km = knownMatrix(m, n, Array.from({ length: n }, (_, i) => 0.9 ** i), seed);
    const gpuResult = runSvd(pair.cuda, km, { rank: k, seed });
    const cpuResult = runSvd(pair.cpu, km, { rank: k, seed });
    expect(maxRelativeError(gpuResult.s, Array.from(cpuResult.s)), `seed ${seed}`).toBeLessThanOrEqual(1e-5);
    const a = reconstruction(gpuResult, m, n);
    const b = reconstruction(cpuResult, m, n);
    let diff = 0;
    let ref = 0;
    for (let i = 0; i < a.length; i++) {
      diff += (a[i]! - b[i]!) ** 2;
      ref += b[i]! ** 2;
    }
    expect(Math.sqrt(diff / ref), `seed ${seed}`).toBeLessThanOrEqual(1e-5);
  });

  it('is deterministic for a seed', () => {
    const seed = freshSeed();
    const km = knownMatrix(600, 500, Array.from({ length: 100 }, (_, i) => 1 / (i + 1)), seed);
    const first = runSvd(pair.cuda, km, { rank: 10, seed: 3 });
    const again = runSvd(pair.cuda, km, { rank: 10, seed: 3 });
    expect(Array.from(again.u)).toEqual(Array.from(first.u));
    expect(Array.from(again.s)).toEqual(Array.from(first.s));
    expect(Array.from(again.v)).toEqual(Array.from(first.v));
  });

  it('refuses NaN and ±Infinity through the on-device check', () => {
    for (const poison of [NaN, Infinity, -Infinity]) {
      using a = pair.cuda.randn([512, 300], { seed: 9 });
      const data = a.toArraySync();
      data[512 * 300 - 7] = poison;
      using bad = pair.cuda.tensor(data, [512, 300]);
      expect(() => pair.cuda.svd(bad, { rank: 4 })).toThrow(InvalidArgumentError);
      expect(() => pair.cuda.svd(bad, { rank: 4 })).toThrow(/contains NaN or ±Infinity/);
    }
  });

  it('full: true gives the exact SVD of a small matrix', () => {
    const seed = freshSeed();
    const km = knownMatrix(64, 48, Array.from({ length: 48 }, (_, i) => 0.9 ** i), seed);
    const r = runSvd(pair.cuda, km, { full: true });
    expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-5);
    expectOrthonormal(r, 64, 48, 48, `seed ${seed}`);
  });
});
