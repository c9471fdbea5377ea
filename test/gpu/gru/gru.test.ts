/**
 * gpu.gru / gruCell / gruRollout on CUDA against the float64 reference: every kernel path,
 * dtype, ensembles, stacks and the captured-graph replay (see gru-cases.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { GRU_PATHS } from '../../../src/compute/ops/gru.js';
import { freshSeed } from '../../unit/compute/helpers.js';
import { gpuAvailable } from '../gpu-available.js';
import { runGruCases } from './gru-cases.js';

describe.skipIf(!gpuAvailable)('gru on CUDA', () => {
  let gpu: GpuCompute;
  beforeAll(async () => {
    gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
  });
  afterAll(() => gpu?.dispose());

  it('every path matches the float64 reference', () => {
    const seed = freshSeed();
    for (const r of runGruCases(gpu, seed, GRU_PATHS)) {
      expect(r.error, `${r.name} (seed ${seed})`).toBeLessThanOrEqual(r.bound);
    }
  }, 300_000);
});
