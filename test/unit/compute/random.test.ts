import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { philox4x32 } from '../../../src/compute/cpu/philox.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { cpuCompute, FLOAT_DTYPES, freshSeed, randomValues } from './helpers.js';
import { philoxNormal, philoxUniform } from './philox-reference.js';

let gpu: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
});
afterAll(() => gpu.dispose());

const hex = (words: Uint32Array) => Array.from(words, (w) => w.toString(16).padStart(8, '0'));

describe('Philox4x32-10', () => {
  it('matches the Random123 known-answer vectors', () => {
    const out = new Uint32Array(4);
    philox4x32(0, 0, 0, 0, 0, 0, out);
    expect(hex(out)).toEqual(['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']);
    const all = 0xffffffff;
    philox4x32(all, all, all, all, all, all, out);
    expect(hex(out)).toEqual(['408f276d', '41c83b0e', 'a20bc7c6', '6d5451fd']);
    // The third Random123 vector: counter and key from the digits of pi.
    philox4x32(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, out);
    expect(hex(out)).toEqual(['d16cfe09', '94fdcceb', '5001e420', '24126ea1']);
  });
});

describe('rand and randn', () => {
  it('rand follows the Philox stream bit for bit, including a seed above 2^32', async () => {
    for (const seed of [0, 42, freshSeed(), 2 ** 40 + 7]) {
      using t = gpu.rand([3, 7], { seed, low: -2, high: 5 });
      const values = await t.toArray();
      expect(Array.from(values)).toEqual(Array.from({ length: 21 }, (_, i) => philoxUniform(seed, i, -2, 5)));
    }
  });

  it('randn follows the Box–Muller spec within f32 rounding', async () => {
    const seed = freshSeed();
    using t = gpu.randn([1001], { seed, mean: 3, std: 2 });
    const values = await t.toArray();
    values.forEach((v, i) => expect(Math.abs(v - (3 + 2 * philoxNormal(seed, i)))).toBeLessThanOrEqual(4e-6 * Math.max(1, Math.abs(v))));
  });

  it('is reproducible per seed and differs across seeds', async () => {
    const seed = freshSeed();
    using a = gpu.rand([1000], { seed });
    using b = gpu.rand([1000], { seed });
    using c = gpu.rand([1000], { seed: seed + 1 });
    expect(Array.from(await a.toArray())).toEqual(Array.from(await b.toArray()));
    expect(Array.from(await a.toArray())).not.toEqual(Array.from(await c.toArray()));
    // Without a seed each call takes the next one of the instance's sequence 0, 1, 2, ...
    const fresh = await cpuCompute();
    using d = fresh.rand([8]);
    using e = fresh.rand([8]);
    using zero = gpu.rand([8], { seed: 0 });
    using one = gpu.rand([8], { seed: 1 });
    expect(Array.from(await d.toArray())).toEqual(Array.from(await zero.toArray()));
    expect(Array.from(await e.toArray())).toEqual(Array.from(await one.toArray()));
    fresh.dispose();
  });

  it('has the right moments and range', async () => {
    const seed = freshSeed();
    using u = gpu.rand([200_000], { seed, low: 1, high: 3 });
    const us = await u.toArray();
    // [1, 3]: near 3 the f32 step (2^-22) exceeds (3 - 1)·2^-24, so the top draw rounds to 3 (see RandOptions).
    expect(us.every((v) => v >= 1 && v <= 3)).toBe(true);
    expect(Math.abs(us.reduce((a, b) => a + b, 0) / us.length - 2)).toBeLessThan(0.01);
    using n = gpu.randn([200_000], { seed });
    const ns = await n.toArray();
    const mean = ns.reduce((a, b) => a + b, 0) / ns.length;
    const variance = ns.reduce((a, b) => a + (b - mean) ** 2, 0) / ns.length;
    // Six standard errors (1/√n and √(2/n)): a false failure about once in 500 million runs.
    expect(Math.abs(mean)).toBeLessThan(0.0135);
    expect(Math.abs(variance - 1)).toBeLessThan(0.02);
  });

  it.each(FLOAT_DTYPES)('rounds the f32 stream to %s on store', async (dtype) => {
    const seed = freshSeed();
    using wide = gpu.rand([64], { seed });
    using narrow = gpu.rand([64], { seed, dtype });
    using cast = gpu.cast(wide, dtype);
    expect(Array.from(await narrow.toRawArray())).toEqual(Array.from(await cast.toRawArray()));
  });
});

describe('dropout', () => {
  it('keeps elements whose uniform is ≥ p and scales them by 1/(1−p), reproducibly', async () => {
    const seed = freshSeed();
    const p = 0.3;
    using x = gpu.tensor(randomValues(5000, seed, 1, 2));
    using y = gpu.dropout(x, p, seed);
    using again = x.dropout(p, seed);
    const xs = await x.toArray();
    const ys = await y.toArray();
    const scale = Math.fround(1 / (1 - p));
    const expected = Array.from(xs, (v, i) => (philoxUniform(seed, i, 0, 1) >= Math.fround(p) ? Math.fround(v * scale) : 0));
    expect(Array.from(ys)).toEqual(expected);
    expect(Array.from(await again.toArray())).toEqual(Array.from(ys));
    const dropped = ys.filter((v) => v === 0).length / ys.length;
    expect(Math.abs(dropped - p)).toBeLessThan(0.04);  // over six standard errors
  });

  it('is the identity at p = 0 and zeros at p = 1', async () => {
    using x = gpu.tensor([1, -2, 3], [3], 'bf16');
    expect(Array.from(await gpu.dropout(x, 0, 1).toArray())).toEqual([1, -2, 3]);
    expect(Array.from(await gpu.dropout(x, 1, 1).toArray())).toEqual([0, 0, 0]);
  });

  it.each(['f16', 'bf16'] as const)('works in %s', async (dtype) => {
    const seed = freshSeed();
    using x = gpu.tensor(randomValues(100, seed), [10, 10], dtype);
    using y = gpu.dropout(x, 0.5, seed);
    const xs = await x.toArray();
    const ys = await y.toArray();
    ys.forEach((v, i) => expect(v === 0 || Math.abs(v - 2 * xs[i]!) <= Math.abs(2 * xs[i]!) * 2 ** -7).toBe(true));
  });
});
