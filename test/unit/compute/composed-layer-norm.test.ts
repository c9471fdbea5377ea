/**
 * layerNorm composed from the core ops (what a backend without its own runs), on rows far from 0
 * with a small spread: the f32 mean of such a row is off by up to half an ulp of ~1000, a shift
 * that one centring pass leaves in every element of x − mean. Each row must stay within a few
 * f32 roundings of the float64 result.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { withComposedOps } from '../../../src/compute/backend/composed-ops.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { cpuCompute, freshSeed, randomValues, relError } from './helpers.js';

const gpu: GpuCompute = await cpuCompute();
Object.defineProperty(gpu.backend, 'layerNorm', { value: undefined, writable: true, configurable: true });
withComposedOps(gpu.backend);
afterAll(() => gpu.dispose());

function layerNormRow(row: number[]): number[] {
  const mean = row.reduce((s, v) => s + v, 0) / row.length;
  const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / row.length;
  return row.map((v) => (v - mean) / Math.sqrt(variance + 1e-5));
}

describe('composed layerNorm', () => {
  it('keeps rows far from 0 with a small spread within a few roundings', async () => {
    const seed = freshSeed();
    const [rows, cols] = [256, 9];
    const values = randomValues(rows * cols, seed, 1, 1030).map(Math.fround);
    using x = gpu.tensor(values, [rows, cols]);
    using y = gpu.layerNorm(x);
    const got = await y.toArray();
    let worst = 0;
    for (let r = 0; r < rows; r++) {
      const row = values.slice(r * cols, (r + 1) * cols);
      worst = Math.max(worst, relError(got.subarray(r * cols, (r + 1) * cols), layerNormRow(row)));
    }
    expect(worst, `worst row's norm-wise error (seed ${seed})`).toBeLessThanOrEqual(2e-6);
  });
});
