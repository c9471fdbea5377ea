/**
 * x.to(gpu) between GpuComputes that share no device memory (two CPU backends here): the values,
 * dtype and shape arrive, views at an offset copy their own elements, the result belongs to the
 * target alone, and the source may go at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';

let a: GpuCompute;
let b: GpuCompute;

beforeAll(async () => {
  a = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 });
  b = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 });
});
afterAll(() => {
  a.dispose();
  b.dispose();
});

describe('x.to(another GpuCompute)', () => {
  it('copies every dtype bit for bit, through the host between backends without shared memory', () => {
    for (const dtype of ['f32', 'f16', 'bf16', 'i32'] as const) {
      using x = dtype === 'i32' ? a.tensor(Int32Array.from([1, -2, 3, 2 ** 31 - 1, -(2 ** 31), 7]), [2, 3]) : a.tensor([0.1, -2.5, 3e4, 1e-3, -0, 7], [2, 3], dtype);
      using y = x.to(b);
      expect(y.dtype).toBe(dtype);
      expect(y.shape).toEqual([2, 3]);
      expect(y.owner).toBe(b.session);
      expect(y.toRawArraySync()).toEqual(x.toRawArraySync());
    }
  });

  it('copies a reshape view with its own elements, and the result outlives the source', () => {
    using x = a.tensor([1, 2, 3, 4, 5, 6]);
    const view = x.reshape([3, 2]);
    const y = view.to(b);
    view.dispose();
    x.dispose();
    expect(y.shape).toEqual([3, 2]);
    expect(Array.from(y.toArraySync())).toEqual([1, 2, 3, 4, 5, 6]);
    using z = b.add(y, 1);
    expect(Array.from(z.toArraySync())).toEqual([2, 3, 4, 5, 6, 7]);
    y.dispose();
  });

  it('on its own GpuCompute is a copy with its own storage', () => {
    using x = a.tensor([1, 2]);
    using y = x.to(a);
    expect(y).not.toBe(x);
    x.dispose();
    expect(Array.from(y.toArraySync())).toEqual([1, 2]);
  });

  it('keeps the target pool balanced and the source untouched', () => {
    const before = b.memoryStats().inUseBytes;
    using x = a.ones([64, 64]);
    const y = x.to(b);
    expect(b.memoryStats().inUseBytes).toBeGreaterThan(before);
    y.dispose();
    expect(b.memoryStats().inUseBytes).toBe(before);
    expect(x.disposed).toBe(false);
  });
});
