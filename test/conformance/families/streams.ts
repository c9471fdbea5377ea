/**
 * Streams and memory, the part of the core that is not an op: work queued on another stream sees
 * what the default stream wrote and the reverse, setStream takes only this backend's streams
 * (the Backend contract), and the pool's counters follow tensors while trim keeps live ones intact.
 */
import { describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { Case } from '../seeds.js';

export function describeStreams(ctx: ConformanceContext): void {
  describe('streams and memory', () => {
    it('work on another stream sees the default stream\'s results, and the default stream sees its', () => {
      const c = new Case('streams');
      const x = host(c.normal(1031), [1031], 'f32');
      const runs = ctx.run([x], (g, [t]) => {
        const main = g.currentStream();
        const side = g.createStream();
        g.setStream(side);
        expect(g.currentStream(), c.msg('current stream after setStream')).toBe(side);
        const y = g.add(t!, 1);
        g.setStream(main);
        const z = g.mul(y, 2);
        y.dispose();
        g.synchronize();
        return z;
      });
      const f = Math.fround;
      expectRun(c, runs, [{ ...x, values: x.values.map((v) => f(f(v + 1) * 2)) }], 0);
    });

    it('setStream refuses a stream another GpuCompute created', async () => {
      const other = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
      const same = await ctx.openAnother();
      try {
        for (const foreign of [other.createStream(), same.createStream()]) {
          expect(() => ctx.gpu.setStream(foreign)).toThrow(InvalidArgumentError);
        }
      } finally {
        other.dispose();
        same.dispose();
      }
    });

    it('memoryStats follows tensors, and trim keeps live tensors intact', () => {
      const gpu = ctx.gpu;
      const before = gpu.memoryStats();
      const t = gpu.full([1000], 2.5);
      const held = gpu.memoryStats();
      expect(held.inUseBytes - before.inUseBytes).toBeGreaterThanOrEqual(4000);
      expect(held.allocations - before.allocations).toBe(1);
      expect(held.peakBytes).toBeGreaterThanOrEqual(held.inUseBytes);
      gpu.trim();
      expect(Array.from(t.toArraySync()).every((v) => v === 2.5)).toBe(true);
      t.dispose();
      expect(gpu.memoryStats()).toMatchObject({ inUseBytes: before.inUseBytes, allocations: before.allocations });
    });
  });
}
