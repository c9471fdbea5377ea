/**
 * The planners' shortcut for the shape arrays planned last: the same frozen arrays give the same
 * (frozen) plan without a lookup; arrays that may change are planned afresh on every call.
 */
import { describe, expect, it } from 'vitest';
import { planBroadcast } from '../../../src/compute/core/broadcast.js';
import { planMatmul } from '../../../src/compute/core/matmul-plan.js';
import { planReduction } from '../../../src/compute/core/reduce-plan.js';

describe('planners, the last shapes planned', () => {
  it('planReduction', () => {
    const frozen = Object.freeze([4, 6]);
    const first = planReduction(frozen, 1, false);
    expect(planReduction(frozen, 1, false)).toBe(first);
    expect(first.plan).toEqual({ outer: 4, axisLen: 6, inner: 1 });
    expect(planReduction(frozen, 0, true).plan).toEqual({ outer: 1, axisLen: 4, inner: 6 });
    const mutable = [4, 6];
    expect(planReduction(mutable, 1, false).plan).toEqual({ outer: 4, axisLen: 6, inner: 1 });
    mutable[1] = 10;
    expect(planReduction(mutable, 1, false).plan).toEqual({ outer: 4, axisLen: 10, inner: 1 });
    expect(planReduction(mutable, 1, false).outShape).toEqual([4]);
  });

  it('planBroadcast', () => {
    const a = Object.freeze([3, 5]);
    const b = Object.freeze([3, 5]);
    const first = planBroadcast('add', a, b);
    expect(planBroadcast('add', a, b)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first).toMatchObject({ kind: 'same', outShape: [15], shape: [3, 5] });
    const row = Object.freeze([5]);
    expect(planBroadcast('add', a, row).kind).toBe('rowB');
    const mutable = [3, 5];
    expect(planBroadcast('add', a, mutable).kind).toBe('same');
    mutable[0] = 1;
    expect(planBroadcast('add', a, mutable).kind).toBe('rowB');
    expect(() => planBroadcast('add', a, Object.freeze([4]))).toThrow(/do not broadcast/);
    expect(() => planBroadcast('add', a, Object.freeze([4]))).toThrow(/do not broadcast/);
  });

  it('planMatmul', () => {
    const a = Object.freeze([8, 16]);
    const b = Object.freeze([16, 4]);
    const first = planMatmul('matmul', a, b, false, false);
    expect(planMatmul('matmul', a, b, false, false)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first).toMatchObject({ m: 8, n: 4, k: 16, outShape: [8, 4] });
    expect(planMatmul('matmul', a, Object.freeze([4, 16]), false, true)).toMatchObject({ m: 8, n: 4, k: 16 });
    // transB flips which dim is k: the shortcut must not hand back the plain product's plan.
    expect(() => planMatmul('matmul', a, b, false, true)).toThrow(/inner dimensions differ/);
    const mutable = [16, 4];
    expect(planMatmul('matmul', a, mutable, false, false).n).toBe(4);
    mutable[1] = 7;
    expect(planMatmul('matmul', a, mutable, false, false).n).toBe(7);
  });
});
