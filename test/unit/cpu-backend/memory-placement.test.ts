/**
 * Tensors outside the kernels' linear memory (`kernelMemoryLimitBytes`, as past 4 GiB) take the
 * TypeScript loops, alone or mixed with tensors inside it, and every op gives what it gives on
 * the kernels (within f32 tolerance: the loops compute in f64); random numbers bit for bit. The
 * pool's cache shows in memoryStats and trim gives it back.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../../src/compute/cpu/cpu-backend.js';
import type { CpuBuffer } from '../../../src/compute/cpu/cpu-buffer.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { freshSeed, randomValues, relError } from '../compute/helpers.js';

const inside = GpuCompute.over(new CpuBackend());
const outside = GpuCompute.over(new CpuBackend({ kernelMemoryLimitBytes: 1 }));
/** One 2 MiB segment: small tensors inside until it is full, big ones outside. */
const mixed = GpuCompute.over(new CpuBackend({ kernelMemoryLimitBytes: 2 ** 21 }));
afterAll(() => {
  for (const g of [inside, outside, mixed]) g.dispose();
});

const isInside = (t: Tensor) => (t.view.buffer as CpuBuffer).memory !== undefined;

type Case = [string, (g: GpuCompute, t: (shape: number[], seed: number, scale?: number) => Tensor) => Tensor | Tensor[]];

const CASES: Case[] = [
  ['exp, gelu, tanh', (g, t) => [g.exp(t([33, 17], 1)), g.gelu(t([33, 17], 2)), g.tanh(t([5], 3))]],
  ['add with broadcasting, mul by a number', (g, t) => [g.add(t([7, 1, 9], 1), t([4, 9], 2)), g.mul(t([40], 3), 2.5)]],
  ['activationGrad', (g, t) => g.activationGrad('silu', t([300], 1), t([300], 2))],
  ['sum, max, argmax, mean', (g, t) => {
    const x = t([6, 50, 7], 1);
    return [g.sum(x, 1), g.max(x, 2), g.argmax(x, 0), g.mean(x)];
  }],
  ['softmax, logSoftmax, layerNorm', (g, t) => {
    const x = t([9, 130], 1, 3);
    return [g.softmax(x), g.logSoftmax(x), g.layerNorm(x, t([130], 2), t([130], 3))];
  }],
  ['transpose, cast, copy', (g, t) => {
    const x = t([3, 20, 11], 1);
    return [g.transpose(x), g.cast(x, 'bf16'), g.cast(g.cast(x, 'f16'), 'f32'), g.copy(x)];
  }],
  ['matmul with bias and activation, batched', (g, t) => [g.matmul(t([2, 24, 40], 1), t([40, 31], 2), { bias: t([31], 3), activation: 'relu' }), g.linear(t([8, 16], 4), t([12, 16], 5), t([12], 6), 'gelu')]],
  ['attention', (g, t) => g.attention(t([1, 4, 20, 16], 1), t([1, 2, 33, 16], 2), t([1, 2, 33, 16], 3), { causal: true })],
  ['gru', (g, t) => {
    const r = g.gru(t([3, 5, 6], 1), t([3, 8], 2, 0.5), { wIh: t([24, 6], 3, 0.3), wHh: t([24, 8], 4, 0.3), bIh: t([24], 5, 0.1), bHh: t([24], 6, 0.1) });
    return [r.output, r.hidden];
  }],
  ['svd', (g, t) => {
    const { s } = g.svd(t([40, 12], 1) as Tensor<'f32'>, { rank: 3, seed: 4 });
    return s;
  }],
  ['rand, randn, dropout, full', (g, t) => [g.rand([1000], { seed: 7 }), g.randn([999], { seed: 8 }), g.dropout(t([500], 1), 0.3, 9), g.full([77], 1.25)]],
];

async function run(g: GpuCompute, c: Case, seed: number, big: boolean): Promise<{ values: number[][]; placements: boolean[] }> {
  const made: Tensor[] = [];
  const make = (shape: number[], s: number, scale = 1) => {
    const x = g.tensor(randomValues(shape.reduce((a, d) => a * d, 1), seed + s, scale), shape);
    made.push(x);
    return x;
  };
  // A tensor beyond the mixed backend's segment first, so the later small ones still fit inside.
  if (big) made.push(g.zeros([2 ** 20]));
  const out = c[1](g, make);
  const outs = Array.isArray(out) ? out : [out];
  const values = await Promise.all(outs.map(async (o) => Array.from(await o.toArray())));
  const placements = [...made, ...outs].map(isInside);
  for (const x of [...made, ...outs]) x.dispose();
  return { values, placements };
}

describe('ops on tensors outside the linear memory', () => {
  for (const c of CASES) {
    it(`${c[0]}: the same results outside, and mixed inside and outside`, async () => {
      const seed = freshSeed();
      const want = await run(inside, c, seed, false);
      expect(want.placements.every(Boolean), 'the reference ran inside').toBe(true);
      for (const [g, label] of [[outside, 'outside'], [mixed, 'mixed']] as const) {
        const got = await run(g, c, seed, label === 'mixed');
        if (label === 'outside') expect(got.placements.some(Boolean), 'every tensor outside').toBe(false);
        else expect(new Set(got.placements).size, 'tensors on both sides').toBe(2);
        got.values.forEach((v, i) => expect(relError(v, want.values[i]!), `${label} output ${i}, seed ${seed}`).toBeLessThanOrEqual(1e-5));
      }
    });
  }
  it('random numbers outside are bit for bit those inside', async () => {
    const [a, b] = [inside.rand([4099], { seed: 3, low: -2, high: 5 }), outside.rand([4099], { seed: 3, low: -2, high: 5 })];
    expect(await b.toArray()).toEqual(await a.toArray());
    a.dispose();
    b.dispose();
  });
});

describe('memory stats', () => {
  it('counts what is asked for in use, the pool cache as cached, and trim empties the cache', () => {
    const g = GpuCompute.over(new CpuBackend());
    try {
      const before = g.memoryStats();
      const t = g.zeros([1000]);
      expect(g.memoryStats().inUseBytes - before.inUseBytes).toBe(4000);
      t.dispose();
      const after = g.memoryStats();
      expect(after.inUseBytes).toBe(before.inUseBytes);
      expect(after.cachedBytes).toBeGreaterThan(0);
      g.trim();
      expect(g.memoryStats().cachedBytes).toBe(0);
    } finally {
      g.dispose();
    }
  });

  it('refuses a kernelMemoryLimitBytes that is not a positive integer', () => {
    expect(() => new CpuBackend({ kernelMemoryLimitBytes: 0 })).toThrow(/pool limit must be a positive integer/);
  });
});
