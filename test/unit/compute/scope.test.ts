import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DisposedError, InvalidArgumentError, OutOfMemoryError } from '../../../src/errors.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';

let gpu: GpuCompute;
beforeEach(async () => {
  gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 });
});
afterEach(() => gpu.dispose());

const live = () => gpu.memoryStats().allocations;

describe('gpu.scope', () => {
  it('disposes what fn created and keeps what it returns', () => {
    const x = gpu.tensor([1, 2, 3]);
    const before = live();
    let inner: Tensor | undefined;
    const y = gpu.scope(() => {
      inner = gpu.mul(x, 2);
      const view = inner.reshape([3, 1]);
      view.dispose();
      return gpu.add(inner, 1);
    });
    expect(inner!.disposed).toBe(true);
    expect(x.disposed).toBe(false);
    expect(Array.from(y.toArraySync())).toEqual([3, 5, 7]);
    expect(live()).toBe(before + 1);
    y.dispose();
    expect(live()).toBe(before);
  });

  it('keeps tensors inside returned arrays, Maps, Sets and plain objects, and a returned view keeps its storage', () => {
    const x = gpu.tensor([1, 2, 3, 4]);
    const before = live();
    const out = gpu.scope(() => {
      const a = gpu.add(x, 1);
      return { list: [gpu.neg(x), { deep: gpu.abs(x) }], map: new Map([['m', gpu.exp(x)]]), set: new Set([gpu.sqrt(x)]), view: a.reshape([2, 2]) };
    });
    const all = [out.list[0] as Tensor, (out.list[1] as { deep: Tensor }).deep, out.map.get('m')!, [...out.set][0]!, out.view];
    for (const t of all) expect(t.disposed).toBe(false);
    expect(Array.from(out.view.toArraySync())).toEqual([2, 3, 4, 5]);
    expect(live()).toBe(before + 5);
    for (const t of all) t.dispose();
    expect(live()).toBe(before);
  });

  it('hands returned tensors to the enclosing scope, which disposes them unless it returns them too', () => {
    const x = gpu.tensor([1, 2]);
    const before = live();
    let fromInner: Tensor | undefined;
    const result = gpu.scope(() => {
      fromInner = gpu.scope(() => gpu.add(x, 1));
      expect(fromInner.disposed).toBe(false);
      return gpu.mul(fromInner, 3);
    });
    expect(fromInner!.disposed).toBe(true);
    expect(Array.from(result.toArraySync())).toEqual([6, 9]);
    result.dispose();
    expect(live()).toBe(before);
  });

  it('spares kept tensors, in this scope and the enclosing ones', () => {
    const before = live();
    let kept: Tensor | undefined;
    gpu.scope(() => {
      gpu.scope(() => {
        kept = gpu.keep(gpu.ones([4]));
        gpu.zeros([4]);
      });
    });
    expect(kept!.disposed).toBe(false);
    expect(live()).toBe(before + 1);
    kept!.dispose();
  });

  it('disposes everything fn created when it throws, and rethrows', () => {
    const before = live();
    let made: Tensor | undefined;
    expect(() =>
      gpu.scope(() => {
        made = gpu.ones([8]);
        throw new RangeError('boom');
      }),
    ).toThrow(RangeError);
    expect(made!.disposed).toBe(true);
    expect(live()).toBe(before);
  });

  it('refuses an async fn, a non-function and a foreign tensor for keep', async () => {
    const before = live();
    expect(() => gpu.scope((async () => gpu.ones([2])) as never)).toThrow(/scope: fn must be synchronous/);
    expect(live()).toBe(before);
    expect(() => gpu.scope(42 as never)).toThrow(InvalidArgumentError);
    const other = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 });
    const foreign = other.ones([1]);
    expect(() => gpu.keep(foreign)).toThrow(/keep: t .* belongs to another GpuCompute/);
    other.dispose();
    expect(() => gpu.keep(foreign)).toThrow(DisposedError);
  });

  it('lets a loop that never disposes run under a pool limit', async () => {
    const limited = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1, poolLimitBytes: 64 * 1024 });
    const x = limited.ones([1024]);
    let acc = limited.zeros([1024]);
    for (let i = 0; i < 200; i++) {
      const next = limited.scope(() => limited.add(acc, limited.mul(x, 0.5)));
      acc.dispose();
      acc = next;
    }
    expect(acc.toArraySync()[0]).toBe(100);
    expect(() => {
      for (let i = 0; i < 200; i++) limited.add(x, 1); // never disposed, still reachable through nothing
    }).toThrow(OutOfMemoryError);
    limited.dispose();
  });
});

describe('OutOfMemoryError from a GpuCompute', () => {
  it('says how many tensors are live and suggests scope or dispose', async () => {
    const limited = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1, poolLimitBytes: 4096 });
    const held = [limited.zeros([256]), limited.zeros([256]), limited.zeros([256])];
    let err: unknown;
    try {
      limited.zeros([1024]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OutOfMemoryError);
    expect((err as OutOfMemoryError).liveTensors).toBe(3);
    expect((err as Error).message).toMatch(/^zeros: a f32 tensor of shape \[1024\]: Out of device memory.*; 3 tensor allocations are still live\./);
    expect((err as Error).message).toMatch(/dispose\(\) them, declare them with `using`, or run the loop body in gpu\.scope/);
    for (const t of held) t.dispose();
    limited.dispose();
  });
});
