/**
 * Every kernel configuration of every family the device has, forced one by one (see
 * config-sweep.ts), against a float64 reference with the full epilogue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import type { MatmulFamily } from '../../../src/compute/cuda/matmul/matmul-kernels.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { gpuAvailable } from '../gpu-available.js';
import { describeCase, runSweepCase, sweepCases, SWEEP_TOLERANCE } from './config-sweep.js';

let gpu: GpuCompute;
beforeAll(async () => {
  if (gpuAvailable) gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
});
afterAll(() => gpu?.dispose());

describe.skipIf(!gpuAvailable)('CUDA matmul kernel configurations', () => {
  for (const family of ['simt', 'mma', 'wgmma'] as const) {
    it(`${family}: every tile, transposes, odd and aligned extents`, (ctx) => {
      const { major, minor } = (gpu.backend as CudaBackend).device.computeCapability;
      const has: Record<MatmulFamily, boolean> = { simt: true, mma: major >= 8, wgmma: major === 9 && minor === 0 };
      if (!has[family]) ctx.skip();
      for (const c of sweepCases([family])) {
        expect(runSweepCase(gpu, c), describeCase(c)).toBeLessThan(SWEEP_TOLERANCE[c.kind]);
      }
    });
  }
});
