import { describe, expect, it } from 'vitest';
import { broadcastShapes, planBroadcast } from '../../../src/compute/core/broadcast.js';

describe('broadcastShapes', () => {
  it('follows NumPy rules', () => {
    expect(broadcastShapes('op', [7, 13], [13])).toEqual([7, 13]);
    expect(broadcastShapes('op', [3, 1, 5], [4, 5])).toEqual([3, 4, 5]);
    expect(broadcastShapes('op', [], [2, 3])).toEqual([2, 3]);
    expect(broadcastShapes('op', [5, 1], [0])).toEqual([5, 0]);
    expect(() => broadcastShapes('op', [2], [3])).toThrow('op: shapes [2] and [3] do not broadcast (dim -1 is 2 vs 3)');
  });
});

describe('planBroadcast', () => {
  it('collapses equal shapes to one dense dim', () => {
    expect(planBroadcast('op', [2, 3, 4], [2, 3, 4])).toEqual({ shape: [2, 3, 4], outShape: [24], aStrides: [1], bStrides: [1], kind: 'same' });
  });

  it('recognises scalars on either side, including size-1 tensors of higher rank', () => {
    expect(planBroadcast('op', [4, 5], [])).toMatchObject({ outShape: [20], aStrides: [1], bStrides: [0], kind: 'scalarB' });
    expect(planBroadcast('op', [1, 1], [4, 5])).toMatchObject({ outShape: [20], aStrides: [0], bStrides: [1], kind: 'scalarA' });
  });

  it('recognises rows over matrices, after merging leading dims', () => {
    expect(planBroadcast('op', [2, 3, 5], [5])).toEqual({ shape: [2, 3, 5], outShape: [6, 5], aStrides: [5, 1], bStrides: [0, 1], kind: 'rowB' });
    expect(planBroadcast('op', [1, 5], [4, 5])).toEqual({ shape: [4, 5], outShape: [4, 5], aStrides: [0, 1], bStrides: [5, 1], kind: 'rowA' });
  });

  it('keeps a general plan with zero strides where inputs repeat', () => {
    expect(planBroadcast('op', [3, 1, 5], [4, 5])).toEqual({
      shape: [3, 4, 5],
      outShape: [3, 4, 5],
      aStrides: [5, 0, 1],
      bStrides: [0, 5, 1],
      kind: 'general',
    });
    expect(planBroadcast('op', [6, 1], [1, 7])).toEqual({ shape: [6, 7], outShape: [6, 7], aStrides: [1, 0], bStrides: [0, 1], kind: 'general' });
    // Column broadcast: b is [rows, 1] against [rows, cols].
    expect(planBroadcast('op', [4, 5], [4, 1]).kind).toBe('general');
  });

  it('drops unit dims and merges what it can, refusing more than six dims', () => {
    expect(planBroadcast('op', [2, 1, 3, 1, 2, 1], [4, 1, 5, 1, 3]).outShape).toEqual([2, 4, 3, 5, 2, 3]);
    expect(() => planBroadcast('op', [2, 1, 2, 1, 2, 1, 2], [2, 1, 2, 1, 2, 1])).toThrow(/needs 7 dims/);
    expect(planBroadcast('op', [1, 1, 1], [1])).toEqual({ shape: [1, 1, 1], outShape: [1], aStrides: [0], bStrides: [0], kind: 'same' });
  });
});

describe('planBroadcast cache', () => {
  it('returns the same frozen plan for the same shapes, whatever arrays hold them', () => {
    const plan = planBroadcast('op', [6, 1, 4], [5, 1]);
    expect(Object.isFrozen(plan)).toBe(true);
    expect(planBroadcast('op', [6, 1, 4], [5, 1])).toBe(plan);
  });

  it('tells apart shape pairs whose hashes collide', () => {
    // [1, 32] and [2, 1] hash alike (31·(31 + 1) + 32 = 31·(31 + 2) + 1).
    const first = planBroadcast('op', [1, 32], [2, 32]);
    const second = planBroadcast('op', [2, 1], [2, 32]);
    expect(first.aStrides).not.toEqual(second.aStrides);
    expect(planBroadcast('op', [1, 32], [2, 32])).toBe(first);
    expect(planBroadcast('op', [2, 1], [2, 32])).toBe(second);
    expect(second.shape).toEqual([2, 32]);
  });

  it('plans correctly again once a pair was evicted', () => {
    const plan = planBroadcast('op', [9, 1, 7], [8, 1]);
    for (let i = 1; i <= 600; i++) planBroadcast('op', [i, 1], [1, 3]);
    const again = planBroadcast('op', [9, 1, 7], [8, 1]);
    expect(again).not.toBe(plan);
    expect(again).toEqual(plan);
  });
});
