/**
 * gpu.svd's device route on CUDA (cuSOLVER Householder QR and Jacobi SVD): the route is the
 * default when cuSOLVER loads, a rank-deficient input still gets orthonormal U and V, the
 * device and host routes agree, and without cuSOLVER (GPUCOMPUTE_LIBCUSOLVER pointing nowhere)
 * the backend falls back to the host route and says so at debug level.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { LogLevel } from '../../../src/compute/logger.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { freshSeed } from '../../unit/compute/helpers.js';
import { knownMatrix, optimalError, reconstructionError } from '../../unit/svd/known-spectrum.js';
import { expectOrthonormal, maxRelativeError, runSvd } from '../../unit/svd/svd-checks.js';
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

  it('keeps U orthonormal on an exactly rank-deficient input (Householder QR), q = 148', () => {
    const seed = freshSeed();
    const [m, n, rank] = [3000, 1200, 138];
    const km = knownMatrix(m, n, [9, 7, 5, 3, 1], seed);
    const r = runSvd(gpu, km, { rank, seed }, 'device');
    expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
    for (let j = km.singularValues.length; j < rank; j++) expect(Math.abs(r.s[j]!), `seed ${seed} s[${j}]`).toBeLessThanOrEqual(1e-4 * 9);
    expectOrthonormal(r, m, n, rank, `seed ${seed}`);
  });

  it('matches the host route and the 1.05x bound on a slowly decaying spectrum at rank 128', () => {
    const seed = freshSeed();
    const [m, n, k] = [1536, 768, 128];
    const km = knownMatrix(m, n, Array.from({ length: n }, (_, i) => 1 / Math.sqrt(i + 1)), seed);
    const device = runSvd(gpu, km, { rank: k, seed }, 'device');
    const host = runSvd(gpu, km, { rank: k, seed }, 'host');
    expectOrthonormal(device, m, n, k, `seed ${seed}`);
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
