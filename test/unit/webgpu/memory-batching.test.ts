/**
 * The WebGPU backend's memory, batching and synchronisation: pool stats, limit and trim; reads
 * that keep the event loop free and reads that wait; work recorded into one submit until a
 * read, a synchronisation or the size bound; writes ordered after work recorded before them;
 * pipelines built once; streams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutOfMemoryError } from '../../../src/errors.js';
import { makeView } from '../../../src/compute/core/view.js';
import { WebGpuCapabilityError } from '../../../src/compute/webgpu/webgpu-errors.js';
import { busySide, closePair, openPair, skipReason, suite, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (skipReason === undefined) pair = await openPair();
});
afterAll(() => closePair(pair));

/** Counts `queue.submit` calls of the pair's device while `body` runs. */
async function countSubmits(body: () => Promise<void> | void): Promise<number> {
  const queue = pair.backend.dev.device.queue;
  const submit = queue.submit;
  let count = 0;
  queue.submit = function (this: GPUQueue, buffers: Iterable<GPUCommandBuffer>) {
    count++;
    return submit.call(this, buffers);
  };
  try {
    await body();
  } finally {
    queue.submit = submit;
  }
  return count;
}

describe.skipIf(skipReason)(suite('WebGPU memory pool'), () => {
  it('reports in-use, cached and peak bytes, and trim gives cached memory back', () => {
    const backend = pair.backend;
    backend.trim();
    const before = backend.memoryStats();
    const a = backend.alloc(1000);
    const b = backend.alloc(3 * 2 ** 20);
    const during = backend.memoryStats();
    expect(during.inUseBytes - before.inUseBytes).toBe(512 * 2 + 3 * 2 ** 20);
    expect(during.allocations - before.allocations).toBe(2);
    backend.free(a);
    backend.free(b);
    const after = backend.memoryStats();
    expect(after.inUseBytes).toBe(before.inUseBytes);
    expect(after.cachedBytes).toBeGreaterThanOrEqual(3 * 2 ** 20);
    expect(after.peakBytes).toBeGreaterThanOrEqual(during.inUseBytes);
    // A freed block is reused without a new segment.
    const again = backend.alloc(3 * 2 ** 20);
    expect(backend.memoryStats().cachedBytes).toBe(after.cachedBytes - 3 * 2 ** 20);
    backend.free(again);
    backend.trim();
    expect(backend.memoryStats().cachedBytes).toBe(0);
  });

  it('enforces the pool limit with OutOfMemoryError, after emptying the cache', async () => {
    const limited = await openPair({ poolLimitBytes: 4 * 2 ** 20 });
    try {
      const backend = limited.backend;
      const a = backend.alloc(3 * 2 ** 20);
      expect(() => backend.alloc(2 * 2 ** 20)).toThrow(OutOfMemoryError);
      backend.free(a);
      // The cached 3 MiB segment goes back to the device so the new request fits.
      const b = backend.alloc(3.5 * 2 ** 20);
      expect(backend.memoryStats()).toMatchObject({ inUseBytes: 3.5 * 2 ** 20, limitBytes: 4 * 2 ** 20 });
      backend.free(b);
    } finally {
      closePair(limited);
    }
  });

  it('refuses a buffer larger than a kernel can bind, naming the limit', () => {
    const limit = pair.backend.dev.limits.maxStorageBufferBindingSize;
    expect(() => pair.backend.alloc(limit + 4)).toThrow(WebGpuCapabilityError);
    expect(() => pair.backend.alloc(limit + 4)).toThrow(/maxStorageBufferBindingSize/);
  });
});

describe.skipIf(skipReason)(suite('WebGPU reads and synchronisation'), () => {
  it('toArray keeps the event loop free; toArraySync waits; both read the same values', async () => {
    const side = busySide(pair);
    using a = pair.webgpu.randn([side, side], { seed: 3 });
    using b = pair.webgpu.matmul(a, a);
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const started = performance.now();
    const asyncValues = await b.toArray();
    // A fast GPU may have the copy mapped before the loop turns (Dawn settles maps inside its own
    // calls); what must not happen is a read that took a while without the loop running.
    const waited = performance.now() - started;
    expect(turned || waited < 1, `the event loop ran while the read was pending (waited ${waited.toFixed(2)} ms)`).toBe(true);
    using c = pair.webgpu.matmul(a, a);
    const syncValues = c.toArraySync();
    // Byte for byte (toEqual over 16M elements would exhaust the heap).
    expect(syncValues.length).toBe(asyncValues.length);
    expect(Buffer.from(syncValues.buffer, syncValues.byteOffset, syncValues.byteLength).equals(Buffer.from(asyncValues.buffer, asyncValues.byteOffset, asyncValues.byteLength))).toBe(true);
  });

  it('synchronize and synchronizeAsync return once the recorded work has run', async () => {
    using x = pair.webgpu.full([1000], 2);
    using y = pair.webgpu.exp(x);
    pair.backend.synchronize();
    expect(pair.backend.batch.pending).toBe(false);
    using z = pair.webgpu.exp(y);
    await pair.backend.synchronizeAsync();
    expect(pair.backend.batch.pending).toBe(false);
    expect((await valuesOf(z))[0]).toBeCloseTo(Math.exp(Math.exp(2)), 1);
  });

  it('a write waits for the work recorded before it, without a submit', async () => {
    const backend = pair.backend;
    const buf = backend.alloc(16);
    const out = backend.alloc(16);
    const view = (b: typeof buf) => makeView(b, 'f32', [4]);
    backend.write(buf, Float32Array.of(1, 2, 3, 4));
    const submits = await countSubmits(() => {
      backend.unary('neg', view(buf), view(out));
      backend.write(buf, Float32Array.of(10, 20, 30, 40));
    });
    expect(submits, 'the write is recorded behind the op').toBe(0);
    const got = new Float32Array(4);
    await backend.readAsync(out, got);
    expect(Array.from(got)).toEqual([-1, -2, -3, -4]);
    await backend.readAsync(buf, got);
    expect(Array.from(got)).toEqual([10, 20, 30, 40]);
    backend.free(buf);
    backend.free(out);
  });
});

describe.skipIf(skipReason)(suite('WebGPU batching'), () => {
  it('records many ops into one submit at the read-back, and builds each pipeline once', async () => {
    using x = pair.webgpu.full([4097], 0.5);
    using warm = pair.webgpu.add(pair.webgpu.exp(x), x);
    await warm.toArray();
    const compiled = pair.backend.dispatcher.compiled;
    let y = pair.webgpu.exp(x);
    const submits = await countSubmits(async () => {
      for (let i = 0; i < 100; i++) {
        const next = pair.webgpu.add(y, x);
        y.dispose();
        y = next;
      }
      const values = await valuesOf(y);
      expect(values[4096]).toBeCloseTo(Math.exp(0.5) + 50, 3);
    });
    y.dispose();
    expect(submits).toBe(1);
    expect(pair.backend.dispatcher.compiled - compiled, 'no new pipeline').toBe(0);
  });

  it('submits at the size bound while the host keeps recording', async () => {
    using x = pair.webgpu.full([64], 1);
    let y = pair.webgpu.copy(x);
    const submits = await countSubmits(async () => {
      for (let i = 0; i < 2500; i++) {
        const next = pair.webgpu.add(y, x);
        y.dispose();
        y = next;
      }
      expect((await valuesOf(y))[0]).toBe(2501);
    });
    y.dispose();
    expect(submits).toBeGreaterThanOrEqual(3);
    expect(submits).toBeLessThanOrEqual(4);
  });

  it('streams order their work on the one queue', async () => {
    const backend = pair.backend;
    const main = backend.currentStream();
    const side = backend.createStream();
    using x = pair.webgpu.full([513], 3);
    backend.setStream(side);
    using y = pair.webgpu.mul(x, x);
    backend.setStream(main);
    using z = pair.webgpu.add(y, x);
    expect((await valuesOf(z))[512]).toBe(12);
    expect(side.id).not.toBe(main.id);
  });
});
