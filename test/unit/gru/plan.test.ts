/** The persistent kernel's launch plan and whether it applies: by shape and the device's limits. */
import { describe, expect, it } from 'vitest';
import { persistentFit, persistentSharedBytes, planPersistent } from '../../../src/compute/cuda/gru-plan.js';

const H200_SHARED = 232448 - 1024;
/** An H200-like device: 132 SMs, as many 256-thread blocks per SM as shared memory allows (≤ 8). */
const resident = (bytes: number) => 132 * Math.min(8, Math.floor(233472 / (bytes + 1024)));

describe('planPersistent', () => {
  it('spreads W_hh of hidden 1024 over 128 blocks of 8 units at batch 256', () => {
    const plan = planPersistent(1, 256, 1024, H200_SHARED, resident)!;
    expect(plan).toMatchObject({ tb: 8, units: 8, blocks: 128 });
    // 24 rows of 1024 f32 weights plus the staged h tiles.
    expect(plan.sharedBytes).toBe(persistentSharedBytes(1024, 8, 8));
    expect(plan.sharedBytes).toBeGreaterThan(24 * 1024 * 4);
  });

  it('uses 2 units per block for the small case and grows units until every block is resident', () => {
    expect(planPersistent(1, 32, 256, H200_SHARED, resident)).toMatchObject({ tb: 2, units: 2, blocks: 128 });
    const ensemble = planPersistent(5, 32, 512, H200_SHARED, resident)!;
    expect(ensemble).toMatchObject({ tb: 2, units: 4, blocks: 640 });
    expect(ensemble.blocks).toBeLessThanOrEqual(resident(ensemble.sharedBytes));
  });

  it('gives up when the slices cannot fit on chip', () => {
    expect(planPersistent(1, 256, 8192, H200_SHARED, resident)).toBeUndefined();
    expect(planPersistent(8, 256, 2048, H200_SHARED, resident)).toBeUndefined();
    // Five members of hidden 1024 hold 63 MB of f32 W_hh: more than every SM's shared memory.
    expect(planPersistent(5, 32, 1024, H200_SHARED, resident)).toBeUndefined();
  });
});

describe('persistentFit', () => {
  const small = planPersistent(1, 32, 256, H200_SHARED, resident)!;

  it('runs a fitting plan without layer norm, and explains why not elsewhere', () => {
    expect(persistentFit(false, small)).toEqual({ plan: small });
    expect(persistentFit(true, small)).toEqual({ reason: expect.stringMatching(/layer norm/) });
    expect(persistentFit(false, planPersistent(5, 32, 1024, H200_SHARED, resident))).toEqual({ reason: expect.stringMatching(/fit on chip/) });
  });
});
