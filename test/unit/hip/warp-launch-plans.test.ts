import { describe, expect, it } from 'vitest';
import { planReduce, planRowKernel } from '../../../src/compute/gpu/launch-plans.js';
import type { TensorView } from '../../../src/compute/core/view.js';

const view = { offset: 0, dtype: 'f32', size: 0 } as unknown as TensorView;

describe('launch plans at a 64-wide wavefront', () => {
  it('give a warp team twice the columns and run two rows per 128-thread block', () => {
    expect(planRowKernel('softmax', 100, 2048, 'f32', true, 64)).toEqual({ kernel: 'softmax_warp_vec_8', block: 128, grid: 50 });
    // At 32 lanes the same row needs a block.
    expect(planRowKernel('softmax', 100, 2048, 'f32', true).kernel).toMatch(/^softmax_block_/);
    expect(planRowKernel('softmax', 100, 64, 'f32', false, 64)).toEqual({ kernel: 'softmax_warp_scalar_1', block: 128, grid: 50 });
  });

  it('round block teams up to whole wavefronts', () => {
    const launch = planRowKernel('layernorm', 10, 5000, 'f32', false, 64);
    expect(launch.block % 64).toBe(0);
    expect(planRowKernel('layernorm', 10, 5000, 'f32', false, 32).block % 32).toBe(0);
  });

  it('size warp-per-row reductions by the wavefront', () => {
    const plan = { outer: 1000, axisLen: 100, inner: 1 };
    expect(planReduce(plan, view, { residentBlocks: 1000, block: 256, warpSize: 64 })).toEqual({ kind: 'rowsWarp', grid: 500 });
    expect(planReduce(plan, view, { residentBlocks: 1000, block: 256 })).toEqual({ kind: 'rowsWarp', grid: 250 });
  });
});
