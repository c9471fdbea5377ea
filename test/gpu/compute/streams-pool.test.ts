import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { OutOfMemoryError } from '../../../src/errors.js';
import { gpuAvailable } from '../gpu-available.js';
import { freshSeed } from './setup.js';

let gpu: GpuCompute;
beforeAll(async () => {
  if (gpuAvailable) gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
});
afterAll(() => gpu?.dispose());

const MiB = 2 ** 20;

describe.skipIf(!gpuAvailable)('CUDA streams', () => {
  it('a tensor produced on one stream is consumed correctly on another', async () => {
    const first = gpu.currentStream();
    const second = gpu.createStream();
    const n = 2 ** 25; // 128 MiB of f32: long enough kernels that a missing wait would show
    for (let round = 0; round < 3; round++) {
      gpu.setStream(first);
      const x = gpu.rand([n], { seed: freshSeed(), low: 1, high: 2 });
      // A chain of work queued on the first stream...
      let y = gpu.mul(x, 3);
      for (let i = 0; i < 8; i++) {
        const next = gpu.add(y, 1);
        y.dispose();
        y = next;
      }
      // ...read on the second without any explicit synchronisation.
      gpu.setStream(second);
      using z = gpu.sub(y, x);
      using total = gpu.sum(z);
      const xs = x.toArraySync();
      let expected = 0;
      for (const v of xs) expected += 2 * v + 8; // 3x + 8 - x
      const got = (await total.toArray())[0]!;
      expect(Math.abs(got - expected) / expected).toBeLessThan(1e-4);
      x.dispose();
      y.dispose();
    }
    gpu.setStream(first);
  });

  it('memory freed on one stream is not handed to another before the work using it is done', async () => {
    const first = gpu.currentStream();
    const second = gpu.createStream();
    for (let round = 0; round < 5; round++) {
      gpu.setStream(first);
      const a = gpu.full([2 ** 24], 1);
      let b = gpu.add(a, 1);
      for (let i = 0; i < 4; i++) {
        const next = gpu.add(b, 1);
        b.dispose();
        b = next;
      }
      using s = gpu.sum(b); // queued on the first stream, reads b
      b.dispose(); // b's block goes back to the first stream's arena
      a.dispose();
      gpu.setStream(second);
      using c = gpu.full([2 ** 24], 7); // must not overwrite b while the sum still reads it
      gpu.setStream(first);
      // Any overwrite of b by the other stream's 7s would show far above f32 rounding.
      expect(Math.abs((await s.toArray())[0]! / (6 * 2 ** 24) - 1)).toBeLessThan(1e-6);
      expect(c.toArraySync()[12345]).toBe(7);
    }
    gpu.setStream(first);
  });
});

describe.skipIf(!gpuAvailable)('CUDA memory pool', () => {
  it('reports in-use, cached and peak bytes and trims the cache', () => {
    gpu.trim();
    const before = gpu.memoryStats();
    const a = gpu.empty([MiB / 4]); // 1 MiB
    const b = gpu.empty([3 * MiB]); // 12 MiB
    const during = gpu.memoryStats();
    expect(during.inUseBytes - before.inUseBytes).toBe(13 * MiB);
    expect(during.allocations - before.allocations).toBe(2);
    expect(during.peakBytes).toBeGreaterThanOrEqual(during.inUseBytes);
    a.dispose();
    b.dispose();
    const after = gpu.memoryStats();
    expect(after.inUseBytes).toBe(before.inUseBytes);
    expect(after.cachedBytes).toBeGreaterThanOrEqual(13 * MiB);
    gpu.trim();
    expect(gpu.memoryStats().cachedBytes).toBe(0);
  });

  it('10^4 alloc/free cycles do not grow the pool or the device usage', () => {
    const shapes = [[1], [1000], [MiB], [257, 1031]];
    const cycle = () => {
      const held = shapes.map((s) => gpu.empty(s));
      for (const t of held) t.dispose();
    };
    cycle(); // the first cycle fills the cache; none after it may add to it
    const stats = gpu.memoryStats();
    const freeBefore = gpu.info.freeMemory;
    for (let i = 0; i < 10_000; i++) cycle();
    const end = gpu.memoryStats();
    expect(end.inUseBytes).toBe(stats.inUseBytes);
    expect(end.cachedBytes).toBe(stats.cachedBytes);
    expect(Math.abs(gpu.info.freeMemory - freeBefore)).toBeLessThan(4 * MiB);
  });

  it('the limit turns into OutOfMemoryError with the figures, after freeing the cache', async () => {
    const limit = 64 * MiB;
    const small = await GpuCompute.create({ backend: 'cuda', poolLimitBytes: limit, logLevel: 'silent' });
    try {
      const keep = small.empty([8 * MiB]); // 32 MiB
      small.empty([6 * MiB]).dispose(); // 24 MiB cached
      // The cached 24 MiB cannot serve 28 MiB, and 32 in use + 24 cached + 28 > 64:
      // the cache is released, then the new segment fits.
      const fits = small.empty([7 * MiB]);
      expect(small.memoryStats().cachedBytes).toBe(0);
      let caught: unknown;
      try {
        small.empty([16 * MiB]);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(OutOfMemoryError);
      const oom = caught as OutOfMemoryError;
      expect(oom.requestedBytes).toBe(64 * MiB);
      expect(oom.inUseBytes).toBe(60 * MiB);
      expect(oom.limitBytes).toBe(limit);
      expect(oom.deviceTotalBytes).toBeGreaterThan(0);
      expect(oom.deviceFreeBytes).toBeGreaterThan(0);
      keep.dispose();
      fits.dispose();
    } finally {
      small.dispose();
    }
  });

  it('a request beyond the device raises OutOfMemoryError, not a driver error', () => {
    const total = gpu.info.totalMemory;
    expect(() => gpu.empty([Math.ceil((total * 2) / 4)])).toThrow(OutOfMemoryError);
  });
});
