/**
 * gpu.svd's device route on CUDA (CholeskyQR2 by cuBLAS/cuSOLVER, Householder QR as its
 * fallback, Jacobi SVD of the core): the route is the default when cuSOLVER loads, the
 * CholeskyQR2 path meets the accuracy targets without falling back where the sketch has full
 * rank, a rank-deficient input falls back and still gets orthonormal U and V, the device,
 * Householder and host routes agree, and without cuSOLVER (GPUCOMPUTE_LIBCUSOLVER pointing
 * nowhere) the backend falls back to the host route and says so at debug level.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { svd } from '../../../src/compute/ops/svd.js';
import type { LogLevel } from '../../../src/compute/core/logger.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { freshSeed } from '../../unit/compute/helpers.js';
import { knownMatrix, optimalError, reconstructionError } from '../../unit/svd/known-spectrum.js';
import { expectOrthonormal, expectRecovered, maxRelativeError, recorder, runSvd, toHost } from '../../unit/svd/svd-checks.js';
import { gpuAvailable } from '../gpu-available.js';

describe.skipIf(!gpuAvailable)('svd on cuSOLVER', () => {
  let gpu: GpuCompute;
  beforeAll(async () => {
    gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
  });
  afterAll(() => gpu.dispose());

  it('runs the dense steps on cuSOLVER by default', () => {
    expect(gpu.backend.denseLinalg?.()?.name).toMatch(/^cuSOLVER \d+/);
  });

  it('meets the three targets on the CholeskyQR2 path without falling back (exactly rank q = 138, k = 128)', () => {
    const seed = freshSeed();
    const [m, n, k, q] = [1500, 900, 128, 138];
    const km = knownMatrix(m, n, Array.from({ length: q }, (_, i) => 10 * 0.98 ** i), seed);
    const probe = recorder();
    using a = gpu.tensor(Float32Array.from(km.a), [m, n]);
    const r = toHost(svd(gpu.session, a, { rank: k, seed }, 'device', probe));
    const label = `seed ${seed}`;
    expect(probe.fallbacks, label).toEqual([]);
    expect(probe.stages.filter((st) => st === 'orthonormalise (CholeskyQR2)'), label).toHaveLength(6);
    expect(probe.deviations, label).toHaveLength(2);
    for (const d of probe.deviations) expect(d, label).toBeLessThanOrEqual(1e-4);
    expectRecovered(r, km, m, n, k, label);
  });

  it('falls back to Householder QR on a zero matrix (potrf fails at the first pivot)', () => {
    const probe = recorder();
    using a = gpu.zeros([700, 500]);
    const r = toHost(svd(gpu.session, a, { rank: 70 }, 'device', probe));
    expect(probe.fallbacks).toHaveLength(1);
    expect(probe.fallbacks[0]).toMatch(/^CholeskyQR pass 1 of the sketch: the leading 1×1 Gram minor is not positive definite/);
    expect(probe.stages).toContain('orthonormalise (Householder)');
    expect(Array.from(r.s).every((x) => x === 0)).toBe(true);
    expectOrthonormal(r, 700, 500, 70, 'zero matrix');
  });

  it('keeps U orthonormal on an exactly rank-deficient input, q = 148 (CholeskyQR2 breaks down, Householder QR runs)', () => {
    const seed = freshSeed();
    const [m, n, rank] = [3000, 1200, 138];
    const km = knownMatrix(m, n, [9, 7, 5, 3, 1], seed);
    using a = gpu.tensor(Float32Array.from(km.a), [m, n]);
    const r = toHost(svd(gpu.session, a, { rank, seed }, 'device'));
    expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
    for (let j = km.singularValues.length; j < rank; j++) expect(Math.abs(r.s[j]!), `seed ${seed} s[${j}]`).toBeLessThanOrEqual(1e-4 * 9);
    expectOrthonormal(r, m, n, rank, `seed ${seed}`);
  });

  it('matches the Householder and host routes and the 1.05x bound on a slowly decaying spectrum at rank 128', () => {
    const seed = freshSeed();
    const [m, n, k] = [1536, 768, 128];
    const km = knownMatrix(m, n, Array.from({ length: n }, (_, i) => 1 / Math.sqrt(i + 1)), seed);
    const probe = recorder();
    using a = gpu.tensor(Float32Array.from(km.a), [m, n]);
    const device = toHost(svd(gpu.session, a, { rank: k, seed }, 'device', probe));
    const householder = runSvd(gpu, km, { rank: k, seed }, 'householder');
    const host = runSvd(gpu, km, { rank: k, seed }, 'host');
    expect(probe.fallbacks, `seed ${seed}`).toEqual([]);
    expectOrthonormal(device, m, n, k, `seed ${seed}`);
    expectOrthonormal(householder, m, n, k, `seed ${seed} householder`);
    expect(maxRelativeError(device.s, Array.from(householder.s)), `seed ${seed}`).toBeLessThanOrEqual(1e-3);
    const optimal = optimalError(km.singularValues, k);
    const deviceRatio = reconstructionError(km.a, m, n, device.u, device.s, device.v) / optimal;
    const hostRatio = reconstructionError(km.a, m, n, host.u, host.s, host.v) / optimal;
    expect(deviceRatio, `seed ${seed}`).toBeLessThanOrEqual(1.05);
    expect(Math.abs(deviceRatio - hostRatio), `seed ${seed}`).toBeLessThanOrEqual(1e-3);
    expect(maxRelativeError(device.s, Array.from(host.s)), `seed ${seed}`).toBeLessThanOrEqual(1e-3);
  });

  it('falls back to the host route when cuSOLVER cannot be loaded, and logs which path runs', async () => {
    const previous = process.env.GPUCOMPUTE_LIBCUSOLVER;
    process.env.GPUCOMPUTE_LIBCUSOLVER = '/nonexistent/libcusolver.so.12';
    resetLibraryCache();
    const lines: string[] = [];
    try {
      const bare = await GpuCompute.create({ backend: 'cuda', logLevel: 'debug', logger: (level: LogLevel, message: string) => lines.push(`${level} ${message}`) });
      try {
        expect(bare.backend.denseLinalg?.()).toBeUndefined();
        expect(lines.some((l) => /^debug svd: cuSOLVER unavailable/.test(l))).toBe(true);
        const seed = freshSeed();
        const km = knownMatrix(500, 300, [4, 3, 2, 1], seed);
        const r = runSvd(bare, km, { rank: 4, seed });
        expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
      } finally {
        bare.dispose();
      }
    } finally {
      if (previous === undefined) delete process.env.GPUCOMPUTE_LIBCUSOLVER;
      else process.env.GPUCOMPUTE_LIBCUSOLVER = previous;
      resetLibraryCache();
    }
  });
});
