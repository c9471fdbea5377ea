/**
 * The CPU backend's op queue as a user sees it: a big op returns before it has run and
 * `toArray()` waits for it without blocking the event loop; moderate ops are done when they
 * return; memory freed while a queued op reads it is reused without the host writing under it;
 * a kernel that fails surfaces at the next wait, naming the op.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../../src/compute/cpu/cpu-backend.js';
import type { CpuBuffer } from '../../../src/compute/cpu/cpu-buffer.js';
import { SimdKernelError } from '../../../src/compute/cpu/simd/errors.js';
import { SimdRuntime } from '../../../src/compute/cpu/simd/runtime.js';
import { makeView } from '../../../src/compute/core/view.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';

const gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
afterAll(() => gpu.dispose());
/** The runtime the backend queues on (shared per thread count). */
const rt = SimdRuntime.shared((gpu.backend as unknown as CpuBackend).engine.threads);

/** exp over 2^24 f32 elements: work well past what runs at once. */
const BIG = 1 << 24;

describe.skipIf(rt.threads === 1)('with worker threads', () => {
  it('a big op returns before it has run; toArray waits for it and the event loop turns meanwhile', async () => {
    using x = gpu.full([BIG], 0.5);
    x.toArraySync();
    using y = gpu.exp(x);
    expect(rt.idle, 'queued').toBe(false);
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const values = await y.toArray();
    expect(turned).toBe(true);
    expect(values[0]).toBeCloseTo(Math.exp(0.5), 6);
    expect(values[BIG - 1]).toBeCloseTo(Math.exp(0.5), 6);
  });

  it('memory freed while a queued op reads it is reused, and a host write into it waits for that op', () => {
    const data = new Float32Array(BIG).fill(-7);
    const x = gpu.full([BIG], 1.5);
    x.toArraySync();
    const address = (x.view.buffer as CpuBuffer).address;
    using y = gpu.exp(x);
    x.dispose();
    using z = gpu.tensor(data);
    expect((z.view.buffer as CpuBuffer).address, 'z took the block x left').toBe(address);
    const got = y.toArraySync();
    expect(got.every((v) => v === got[0]) && Math.abs(got[0]! - Math.exp(1.5)) < 1e-5).toBe(true);
    expect(z.toArraySync().every((v) => v === -7)).toBe(true);
  });

  it('a failing kernel surfaces at the next wait as SimdKernelError naming the op', () => {
    const backend = new CpuBackend();
    const buffer = backend.alloc(64) as CpuBuffer;
    try {
      // A view whose elements lie far past the end of the memory: the kernel traps there.
      const offset = (0xf0000000 - buffer.address) / 4;
      backend.fill(makeView(buffer, 'f32', [BIG * 4], offset), 1);
      let error: unknown;
      try {
        backend.synchronize();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SimdKernelError);
      expect(error).toMatchObject({ kernel: 'fill', op: 'fill' });
      // The queue goes on.
      using t = gpu.full([BIG], 2);
      expect(t.toArraySync()[BIG - 1]).toBe(2);
    } finally {
      backend.free(buffer);
      backend.dispose();
    }
  });
});

describe('small and moderate ops', () => {
  it('are done when the call returns', () => {
    for (const n of [100, 1 << 16, 1 << 20]) {
      using x = gpu.full([n], 2);
      x.toArraySync();
      using y = gpu.mul(x, x);
      expect(rt.idle, `${n} elements`).toBe(true);
      expect(y.toArraySync()[n - 1]).toBe(4);
    }
  });
});
