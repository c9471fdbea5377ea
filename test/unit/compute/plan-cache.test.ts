import { describe, expect, it } from 'vitest';
import { PlanCache } from '../../../src/compute/core/plan-cache.js';

describe('PlanCache', () => {
  it('keeps a plan per shapes and flags, whatever arrays hold the shapes', () => {
    const cache = new PlanCache<object>();
    let made = 0;
    const make = () => ({ n: ++made });
    const plan = cache.get([[3, 4], [4]], 0, make);
    expect(cache.get([[3, 4], [4]], 0, make)).toBe(plan);
    expect(cache.get([[3, 4], [4]], 1, make)).not.toBe(plan);
    expect(cache.get([[3, 4], undefined], 0, make)).not.toBe(plan);
    expect(cache.get([[3, 4], []], 0, make)).not.toBe(cache.get([[3, 4], undefined], 0, make));
    expect(made).toBe(4);
  });

  it('tells apart shapes whose hashes collide', () => {
    const cache = new PlanCache<string>();
    // [1, 32] and [2, 1] hash alike (31·(31 + 1) + 32 = 31·(31 + 2) + 1).
    expect(cache.get([[1, 32]], 0, () => 'first')).toBe('first');
    expect(cache.get([[2, 1]], 0, () => 'second')).toBe('second');
    expect(cache.get([[1, 32]], 0, () => 'again')).toBe('first');
  });

  it('keeps nothing when planning throws, and drops the oldest plans past its limit', () => {
    const cache = new PlanCache<number>(4);
    expect(() => cache.get([[1]], 0, () => { throw new RangeError('bad shape'); })).toThrow(RangeError);
    expect(cache.get([[1]], 0, () => 1)).toBe(1);
    for (let i = 2; i <= 5; i++) cache.get([[i]], 0, () => i);
    expect(cache.get([[1]], 0, () => 10)).toBe(10);
    expect(cache.get([[5]], 0, () => 50)).toBe(5);
  });
});
