/**
 * Before any tensor is marked to require grad, autograd answers "not recording" without looking
 * at an op's inputs; the first mark turns recording (and the refusals of ops without a backward)
 * on. Its own file: the flag is per process, and vitest gives each file a fresh module graph.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { gradRequested } from '../../../src/compute/tensor/grad-mode.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { cpuCompute } from '../compute/helpers.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

it('ops record from the first tensor marked to require grad on', () => {
  expect(gradRequested).toBe(false);
  using x = g.tensor([1, 2, 3]);
  using before = g.mul(x, x);
  expect(before.requiresGrad).toBe(false);
  expect(gradRequested).toBe(false);
  x.requiresGrad_(false); // unmarking marks nothing
  expect(gradRequested).toBe(false);
  x.requiresGrad_();
  expect(gradRequested).toBe(true);
  using after = g.mul(x, x);
  expect(after.requiresGrad).toBe(true);
  using m = g.tensor([1, 2, 3, 4], [2, 2]).requiresGrad_();
  expect(() => g.svd(m, { rank: 1 })).toThrow(InvalidArgumentError);
});
