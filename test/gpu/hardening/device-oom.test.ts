/**
 * Device memory taken by something else in the same process: the op that cannot get its memory
 * fails with an OutOfMemoryError that names it and its size, keeps nothing, and the GpuCompute
 * works again (with correct results) once the memory is given back.
 */
import { describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { DeviceBuffer, Device } from '../../../src/driver/index.js';
import { OutOfMemoryError } from '../../../src/errors.js';
import { gpuAvailable } from '../gpu-available.js';
import { thrown } from '../../unit/compute/helpers.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** Takes all but about `leave` bytes of the device's free memory in one driver allocation; dispose() gives it back. */
function hog(leave: number): { dispose(): void } {
  const ctx = Device.get(0).primaryContext();
  // The driver may refuse the exact figure (fragmentation): back off 64 MiB at a time.
  for (let bytes = ctx.memoryInfo().free - leave; bytes > GiB; bytes -= 64 * MiB) {
    let buffer: DeviceBuffer;
    try {
      buffer = DeviceBuffer.alloc(ctx, bytes);
    } catch {
      continue;
    }
    return {
      dispose() {
        buffer.dispose();
        ctx.dispose();
      },
    };
  }
  ctx.dispose();
  throw new Error('could not take the device memory');
}

describe.skipIf(!gpuAvailable)('device memory exhausted by another allocation in the same process', () => {
  it('fails the op with a named OutOfMemoryError, keeps nothing, and works again once the memory is freed', async () => {
    using gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    using ones = gpu.ones([1000]);
    const taken = hog(256 * MiB);
    try {
      const before = gpu.memoryStats();
      const err = thrown(() => gpu.zeros([GiB / 4]));
      expect(err).toBeInstanceOf(OutOfMemoryError);
      expect(err.message).toMatch(/^zeros: a f32 tensor of shape \[268435456\]: Out of device memory: requested 1\.00 GiB/);
      expect((err as OutOfMemoryError).deviceFreeBytes).toBeLessThan(GiB);
      expect(gpu.memoryStats().inUseBytes).toBe(before.inUseBytes);
      // Small ops still run meanwhile.
      using s = gpu.sum(ones);
      expect(s.toArraySync()[0]).toBe(1000);
    } finally {
      taken.dispose();
    }
    using z = gpu.full([GiB / 4], 0.5);
    using total = gpu.sum(z);
    expect(total.toArraySync()[0]! / (GiB / 8)).toBeCloseTo(1, 5);
  });

  it('another GpuCompute holding the memory: refused until that one disposes its tensor and trims its pool', async () => {
    using a = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    using b = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    const free = b.info.freeMemory;
    const big = b.empty([Math.floor((free - 512 * MiB) / 4)]);
    expect(() => a.zeros([GiB / 4])).toThrow(/^zeros: a f32 tensor of shape \[268435456\]: Out of device memory/);
    expect(a.memoryStats().inUseBytes).toBe(0);
    big.dispose();
    b.trim();
    using z = a.ones([GiB / 4]);
    using m = a.mean(z);
    expect(m.toArraySync()[0]).toBeCloseTo(1, 5);
  });
});
