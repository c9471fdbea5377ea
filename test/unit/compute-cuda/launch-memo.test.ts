/** LaunchMemo: what the GPU launchers keep per backend. */
import { describe, expect, it } from 'vitest';
import { LaunchMemo } from '../../../src/compute/gpu/launch-context.js';

describe('LaunchMemo', () => {
  it('keeps values per backend and per (a, b, c), nothing shared between backends', () => {
    const memo = new LaunchMemo<string>();
    const one = {};
    const two = {};
    expect(memo.find(one, 'add', 'f32', 'binary_same_vec')).toBeUndefined();
    expect(memo.keep(one, 'add', 'f32', 'binary_same_vec', 'k1')).toBe('k1');
    expect(memo.find(one, 'add', 'f32', 'binary_same_vec')).toBe('k1');
    expect(memo.find(two, 'add', 'f32', 'binary_same_vec')).toBeUndefined();
    expect(memo.find(one, 'add', 'f16', 'binary_same_vec')).toBeUndefined();
    expect(memo.find(one, 'add', 'f32', 'binary_same_scalar')).toBeUndefined();
    memo.keep(two, 'add', 'f32', 'binary_same_vec', 'k2');
    memo.keep(one, 'add', 'f32', 'binary_same_scalar', 'k3');
    expect(memo.find(one, 'add', 'f32', 'binary_same_vec')).toBe('k1');
    expect(memo.find(two, 'add', 'f32', 'binary_same_vec')).toBe('k2');
    expect(memo.find(one, 'add', 'f32', 'binary_same_scalar')).toBe('k3');
  });

  it('matches keys by value, not by string identity', () => {
    const memo = new LaunchMemo<number>();
    const ctx = {};
    memo.keep(ctx, 'a', 'b', 'cd', 1);
    const built = ['c', 'd'].join('');
    expect(memo.find(ctx, 'a', 'b', built)).toBe(1);
  });
});
