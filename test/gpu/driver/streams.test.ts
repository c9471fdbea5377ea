import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Context,
  cu,
  Device,
  DeviceBuffer,
  Event,
  f32,
  Graph,
  Module,
  Stream,
  StreamCaptureStatus,
  StreamFlags,
  u32,
  u64,
} from '../../../src/driver/index.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { gpuAvailable } from '../gpu-available.js';
import { mismatches, randomFloats, TEST_KERNELS_PTX } from './test-kernels.js';

const BLOCK = 256;
const MS = 1_000_000n;

describe.skipIf(!gpuAvailable)('streams, events and graphs on a real GPU', () => {
  let ctx: Context;
  let module: Module;

  beforeAll(() => {
    ctx = Device.get(0).primaryContext();
    module = Module.load(ctx, TEST_KERNELS_PTX);
  });

  afterAll(() => {
    module?.dispose();
    ctx?.dispose();
  });

  function upload(values: Float32Array): DeviceBuffer {
    const buffer = DeviceBuffer.alloc(ctx, values.byteLength);
    buffer.copyFromHost(values);
    return buffer;
  }

  function download(buffer: DeviceBuffer): Float32Array {
    const values = new Float32Array(buffer.byteLength / 4);
    buffer.copyToHost(values);
    return values;
  }

  it('orders two streams with an event, and times the work between events', () => {
    const n = 1 << 20;
    const a = randomFloats(n);
    const b = randomFloats(n);
    using da = upload(a);
    using db = upload(b);
    using dc = DeviceBuffer.alloc(ctx, n * 4);
    using dd = DeviceBuffer.alloc(ctx, n * 4);
    using producer = Stream.create(ctx, { nonBlocking: true });
    dc.fill(Number.NaN, { dtype: 'f32', stream: producer });
    using consumer = Stream.create(ctx, { nonBlocking: true });
    using start = Event.create(ctx);
    using done = Event.create(ctx);
    const add = module.getFunction('vector_add');
    const grid = n / BLOCK;

    start.record(producer);
    // The producer is slow, so a consumer that did not wait would read the NaNs still in c.
    module.getFunction('spin').launch({ grid: 1, block: 1, stream: producer }, [u64(20n * MS)]);
    add.launch({ grid, block: BLOCK, stream: producer }, [da, db, dc, u32(n)]);
    done.record(producer);
    consumer.waitEvent(done);
    add.launch({ grid, block: BLOCK, stream: consumer }, [dc, da, dd, u32(n)]);
    consumer.synchronize();

    const expected = a.map((x, i) => Math.fround(Math.fround(x + b[i]!) + x));
    expect(mismatches(download(dd), expected)).toEqual({ count: 0, first: -1 });
    expect(done.query()).toBe(true);
    const elapsed = done.elapsedMs(start);
    expect(elapsed).toBeGreaterThanOrEqual(19);
    expect(elapsed).toBeLessThan(1000);
    console.log(`spin(20 ms) + vector_add(2^20) timed by events: ${elapsed.toFixed(3)} ms`);
  });

  it('records events from a stream and refuses timing without timestamps', () => {
    using stream = Stream.create(ctx);
    const recorded = stream.recordEvent();
    recorded.synchronize();
    expect(recorded.query()).toBe(true);
    using untimed = Event.create(ctx, { timing: false, blockingSync: true });
    untimed.record(stream);
    untimed.synchronize();
    expect(() => untimed.elapsedMs(recorded)).toThrow(InvalidArgumentError);
    expect(recorded.timing).toBe(true);
    recorded.dispose();
  });

  it('creates streams with flags and priorities within the device range', () => {
    const { least, greatest } = cu.ctxGetStreamPriorityRange();
    using urgent = Stream.create(ctx, { priority: greatest, nonBlocking: true });
    expect(cu.streamGetPriority(urgent.handle)).toBe(greatest);
    expect(cu.streamGetFlags(urgent.handle)).toBe(StreamFlags.NON_BLOCKING);
    expect(() => Stream.create(ctx, { priority: greatest - 1 })).toThrow(InvalidArgumentError);
    expect(() => Stream.create(ctx, { priority: least + 1 })).toThrow(/outside this device's range/);
    expect(() => Stream.create(ctx, { priority: 0.5 })).toThrow(InvalidArgumentError);
  });

  it('waits asynchronously without blocking the event loop', async () => {
    using stream = Stream.create(ctx, { nonBlocking: true });
    module.getFunction('spin').launch({ grid: 1, block: 1, stream }, [u64(300n * MS)]);
    expect(stream.query()).toBe(false);
    let ticks = 0;
    let last = performance.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 5);
    const started = performance.now();
    await stream.synchronizeAsync();
    const waited = performance.now() - started;
    clearInterval(timer);
    expect(stream.query()).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(ticks).toBeGreaterThanOrEqual(20);
    expect(longestGap).toBeLessThan(100);
    console.log(`synchronizeAsync: waited ${waited.toFixed(1)} ms, ${ticks} timer ticks, longest gap ${longestGap.toFixed(1)} ms`);
  });

  it("synchronises a stream on koffi's worker pool, where no context is current", async () => {
    using stream = Stream.create(ctx, { nonBlocking: true });
    module.getFunction('spin').launch({ grid: 1, block: 1, stream }, [u64(50n * MS)]);
    const started = performance.now();
    await cu.streamSynchronizeAsync(stream.handle);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(stream.query()).toBe(true);
  });

  it('captures a graph and replays it on current data', () => {
    const n = 300_000;
    const x = randomFloats(n);
    const y0 = randomFloats(n);
    using dx = upload(x);
    using dy = upload(y0);
    using stream = Stream.create(ctx, { nonBlocking: true });
    const axpy = module.getFunction('axpy');
    const config = { grid: Math.ceil(n / BLOCK), block: BLOCK, stream };

    using graph = Graph.capture(stream, () => {
      axpy.launch(config, [dy, dx, f32(2), u32(n)]);
      axpy.launch(config, [dy, dx, f32(-0.5), u32(n)]);
    });
    expect(graph.nodeCount).toBe(2);
    stream.synchronize();
    expect(mismatches(download(dy), y0).count).toBe(0); // capturing ran nothing

    using exec = graph.instantiate();
    graph.dispose();
    exec.upload(stream);
    const reference = y0.slice();
    const step = (values: Float32Array) => {
      for (let i = 0; i < n; i++) {
        const once = Math.fround(reference[i]! + Math.fround(2 * values[i]!));
        reference[i] = Math.fround(once + Math.fround(-0.5 * values[i]!));
      }
    };
    for (let replay = 0; replay < 3; replay++) {
      exec.launch(stream);
      step(x);
    }
    stream.synchronize();
    expect(mismatches(download(dy), reference)).toEqual({ count: 0, first: -1 });

    const x2 = randomFloats(n);
    dx.copyFromHost(x2);
    exec.launch(stream);
    step(x2);
    stream.synchronize();
    expect(mismatches(download(dy), reference)).toEqual({ count: 0, first: -1 });
  });

  it('ends a capture whose callback fails, leaving the stream usable', () => {
    using stream = Stream.create(ctx, { nonBlocking: true });
    expect(() =>
      Graph.capture(stream, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(cu.streamIsCapturing(stream.handle)).toBe(StreamCaptureStatus.NONE);
    expect(() => Graph.capture(stream, (async () => undefined) as unknown as () => void)).toThrow(/must be synchronous/);
    expect(cu.streamIsCapturing(stream.handle)).toBe(StreamCaptureStatus.NONE);
    stream.synchronize();
    expect(stream.query()).toBe(true);
  });
});
