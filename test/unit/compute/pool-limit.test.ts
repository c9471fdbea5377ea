import { describe, expect, it } from 'vitest';
import { resolvePoolLimit } from '../../../src/compute/core/pool-limit.js';

describe('resolvePoolLimit', () => {
  it('prefers the option, then the environment, else none', () => {
    expect(resolvePoolLimit(4096, { GPUCOMPUTE_POOL_LIMIT: '1G' })).toBe(4096);
    expect(resolvePoolLimit(undefined, { GPUCOMPUTE_POOL_LIMIT: '1G' })).toBe(2 ** 30);
    expect(resolvePoolLimit(undefined, {})).toBeUndefined();
    expect(resolvePoolLimit(undefined, { GPUCOMPUTE_POOL_LIMIT: '  ' })).toBeUndefined();
  });

  it.each([
    ['1073741824', 2 ** 30],
    ['512M', 512 * 2 ** 20],
    ['512MiB', 512 * 2 ** 20],
    ['2g', 2 * 2 ** 30],
    ['1.5GB', 1.5 * 2 ** 30],
    ['64 K', 64 * 1024],
    ['1T', 2 ** 40],
  ])('parses %s', (text, bytes) => {
    expect(resolvePoolLimit(undefined, { GPUCOMPUTE_POOL_LIMIT: text })).toBe(bytes);
  });

  it.each(['-1', '0', '1X', 'M', '1e9', 'abc'])('refuses %s', (text) => {
    expect(() => resolvePoolLimit(undefined, { GPUCOMPUTE_POOL_LIMIT: text })).toThrow(/is not a size/);
  });

  it('refuses bad option values', () => {
    for (const bad of [0, -5, 1.5, NaN]) expect(() => resolvePoolLimit(bad, {})).toThrow(/poolLimitBytes must be a positive integer/);
  });
});
