import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Context,
  cu,
  Device,
  DeviceBuffer,
  MemPoolAttribute,
  Module,
  PinnedBuffer,
  ptr,
  Stream,
  u32,
} from '../../../src/driver/index.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { gpuAvailable } from '../gpu-available.js';
import { mismatches, randomFloats, TEST_KERNELS_PTX } from './test-kernels.js';

const BLOCK = 256;

/** The device's free memory once two readings 50 ms apart agree (at most ~3 s of waiting). */
async function settledFreeMemory(ctx: Context): Promise<number> {
  let last = ctx.memoryInfo().free;
  for (let i = 0; i < 60; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = ctx.memoryInfo().free;
    if (now === last) return now;
    last = now;
  }
  return last;
}

describe.skipIf(!gpuAvailable)('device and pinned memory on a real GPU', () => {
  let device: Device;
  let ctx: Context;
  let module: Module;

  beforeAll(() => {
    device = Device.get(0);
    ctx = device.primaryContext();
    module = Module.load(ctx, TEST_KERNELS_PTX);
  });

  afterAll(() => {
    module?.dispose();
    ctx?.dispose();
  });

  it('copies synchronously, with offsets, views, device-to-device copies and fills', () => {
    const n = 65536;
    const data = randomFloats(n);
    using buffer = DeviceBuffer.alloc(ctx, n * 4);
    buffer.copyFromHost(data);

    const middle = new Float32Array(1000);
    buffer.view(4 * 5000, 4000).copyToHost(middle);
    expect(mismatches(middle, data.subarray(5000, 6000)).count).toBe(0);

    const patch = randomFloats(16);
    buffer.copyFromHost(patch, { byteOffset: 4 * 100 });
    const back = new Float32Array(n);
    buffer.copyToHost(back);
    const expected = data.slice();
    expected.set(patch, 100);
    expect(mismatches(back, expected).count).toBe(0);

    using copy = DeviceBuffer.alloc(ctx, n * 4);
    copy.copyFrom(buffer);
    const copied = new Float32Array(n);
    copy.copyToHost(copied);
    expect(mismatches(copied, expected).count).toBe(0);

    using half = DeviceBuffer.alloc(ctx, n * 2);
    half.copyFrom(buffer, { byteLength: n * 2 });
    const halfBack = new Float32Array(n / 2);
    half.copyToHost(halfBack);
    expect(mismatches(halfBack, expected.subarray(0, n / 2)).count).toBe(0);

    const bytes = new Uint8Array(n * 4);
    buffer.fill(0xab, { dtype: 'u8' });
    buffer.copyToHost(bytes);
    expect(bytes.every((b) => b === 0xab)).toBe(true);
    buffer.fill(0xbeef, { dtype: 'u16' });
    buffer.copyToHost(bytes);
    expect(new Uint16Array(bytes.buffer).every((v) => v === 0xbeef)).toBe(true);
    buffer.fill(-7, { dtype: 'i32' });
    buffer.copyToHost(bytes);
    expect(new Int32Array(bytes.buffer).every((v) => v === -7)).toBe(true);
    buffer.view(4096, 4096).fill(1.5, { dtype: 'f32' });
    buffer.copyToHost(bytes);
    const floats = new Float32Array(bytes.buffer);
    expect(floats.subarray(1024, 2048).every((v) => v === 1.5)).toBe(true);
    expect(new Int32Array(bytes.buffer, 0, 1024).every((v) => v === -7)).toBe(true);
    expect(() => buffer.view(1, 8).fill(0, { dtype: 'u32' })).toThrow(/not 4-byte aligned/);

    using empty = DeviceBuffer.alloc(ctx, 0);
    expect(empty.ptr).toBe(0n);
    empty.copyFromHost(new Uint8Array(0));
  });

  it('copies asynchronously through pinned memory on a stream', async () => {
    const n = (1 << 22) + 5;
    using stream = Stream.create(ctx, { nonBlocking: true });
    using pa = PinnedBuffer.alloc(ctx, n * 4);
    using pb = PinnedBuffer.alloc(ctx, n * 4);
    using pc = PinnedBuffer.alloc(ctx, n * 4);
    const a = pa.as(Float32Array);
    const b = pb.as(Float32Array);
    a.set(randomFloats(n));
    b.set(randomFloats(n));
    const c = pc.as(Float32Array);
    c.fill(Number.NaN);
    const aBefore = a.slice();
    const expected = aBefore.map((x, i) => Math.fround(x + b[i]!));
    const da = DeviceBuffer.alloc(ctx, n * 4, { stream });
    const db = DeviceBuffer.alloc(ctx, n * 4, { stream });
    const dc = DeviceBuffer.alloc(ctx, n * 4, { stream });
    da.copyFromHostAsync(pa, stream);
    db.copyFromHostAsync(pb, stream);
    module.getFunction('vector_add').launch({ grid: Math.ceil(n / BLOCK), block: BLOCK, stream }, [da, db, dc, u32(n)]);
    dc.copyToHostAsync(pc, stream);
    // The first 1024 results once more, over the start of pa: a partial copy.
    dc.copyToHostAsync(pa, stream, { byteOffset: 0, byteLength: 4 * 1024 });
    await stream.synchronizeAsync();
    expect(mismatches(c, expected)).toEqual({ count: 0, first: -1 });
    expect(mismatches(a.subarray(0, 1024), expected.subarray(0, 1024)).count).toBe(0);
    expect(mismatches(a.subarray(1024), aBefore.subarray(1024)).count).toBe(0);
    for (const buffer of [da, db, dc]) buffer.dispose({ stream });
    await stream.synchronizeAsync();
  });

  it('lets kernels read and write mapped pinned memory directly (zero-copy)', () => {
    const n = 100_000;
    using pa = PinnedBuffer.alloc(ctx, n * 4, { mapped: true });
    using pb = PinnedBuffer.alloc(ctx, n * 4, { mapped: true });
    using pc = PinnedBuffer.alloc(ctx, n * 4, { mapped: true, portable: true });
    pa.as(Float32Array).set(randomFloats(n));
    pb.as(Float32Array).set(randomFloats(n));
    pc.as(Float32Array).fill(Number.NaN);
    module
      .getFunction('vector_add')
      .launch({ grid: Math.ceil(n / BLOCK), block: BLOCK }, [ptr(pa.devicePointer), ptr(pb.devicePointer), ptr(pc.devicePointer), u32(n)]);
    ctx.synchronize();
    const a = pa.as(Float32Array);
    const b = pb.as(Float32Array);
    const expected = a.map((x, i) => Math.fround(x + b[i]!));
    expect(mismatches(pc.as(Float32Array), expected).count).toBe(0);

    using unmapped = PinnedBuffer.alloc(ctx, 64);
    expect(() => unmapped.devicePointer).toThrow(/needs PinnedBuffer\.alloc\(\.\.\., \{ mapped: true \}\)/);
    expect(() => unmapped.as(Float64Array)).not.toThrow();
    using odd = PinnedBuffer.alloc(ctx, 6);
    expect(() => odd.as(Float32Array)).toThrow(InvalidArgumentError);
  });

  it('keeps pinned views as plain memory after dispose, and refuses the buffer', () => {
    const pinned = PinnedBuffer.alloc(ctx, 4096);
    const view = pinned.bytes;
    view[7] = 42;
    pinned.dispose();
    pinned.dispose();
    expect(view[7]).toBe(42);
    view[8] = 1;
    expect(() => pinned.bytes).toThrow(DisposedError);
    expect(() => pinned.address).toThrow(DisposedError);
  });

  it('refuses device memory after dispose, through views too', () => {
    const buffer = DeviceBuffer.alloc(ctx, 1024);
    const view = buffer.view(256, 256);
    buffer.dispose();
    buffer.dispose();
    expect(() => buffer.ptr).toThrow(DisposedError);
    expect(() => buffer.copyToHost(new Uint8Array(1024))).toThrow(DisposedError);
    expect(() => view.ptr).toThrow(DisposedError);
    expect(view.disposed).toBe(true);
    expect(() => module.getFunction('vector_add').launch({ grid: 1, block: 1 }, [buffer, buffer, buffer, u32(0)])).toThrow(DisposedError);
  });

  it('does not leak across 10^5 allocation / free cycles', async () => {
    const sizes = [256, 4096, 65536, 1 << 20, 3 << 20];
    ctx.synchronize();
    // Free memory is device-wide: the previous test file's process may still be handing its
    // memory back, so start from a settled reading, and count only memory that went missing.
    const before = await settledFreeMemory(ctx);
    let start = performance.now();
    for (let i = 0; i < 100_000; i++) DeviceBuffer.alloc(ctx, sizes[i % sizes.length]!).dispose();
    const syncMs = performance.now() - start;
    const after = ctx.memoryInfo().free;
    expect(before - after).toBeLessThanOrEqual(8 << 20);

    using stream = Stream.create(ctx);
    const pool = cu.deviceGetDefaultMemPool(device.handle);
    await stream.synchronizeAsync();
    const usedBefore = cu.memPoolGetAttribute(pool, MemPoolAttribute.USED_MEM_CURRENT);
    start = performance.now();
    for (let i = 0; i < 100_000; i++) DeviceBuffer.alloc(ctx, sizes[i % sizes.length]!, { stream }).dispose({ stream });
    await stream.synchronizeAsync();
    const asyncMs = performance.now() - start;
    expect(cu.memPoolGetAttribute(pool, MemPoolAttribute.USED_MEM_CURRENT)).toBe(usedBefore);
    expect(cu.memPoolGetAttribute(pool, MemPoolAttribute.RELEASE_THRESHOLD)).toBe(2n ** 64n - 1n);

    // The same stream-ordered cycles through the raw tier, to tell the safe tier's cost from the driver's.
    start = performance.now();
    for (let i = 0; i < 100_000; i++) cu.memFreeAsync(cu.memAllocAsync(sizes[i % sizes.length]!, stream.handle), stream.handle);
    await stream.synchronizeAsync();
    const rawAsyncMs = performance.now() - start;
    start = performance.now();
    for (let i = 0; i < 100_000; i++) DeviceBuffer.alloc(ctx, 1 << 20, { stream }).dispose({ stream });
    await stream.synchronizeAsync();
    const fixedAsyncMs = performance.now() - start;
    expect(cu.memPoolGetAttribute(pool, MemPoolAttribute.USED_MEM_CURRENT)).toBe(usedBefore);
    const perCycle = (ms: number) => `${(ms / 100).toFixed(2)} µs/cycle`;
    console.log(
      `10^5 alloc+free: cuMemAlloc ${perCycle(syncMs)} (free memory drift ${before - after} bytes); ` +
        `cuMemAllocAsync, mixed sizes: safe ${perCycle(asyncMs)}, raw ${perCycle(rawAsyncMs)}; 1 MiB: safe ${perCycle(fixedAsyncMs)}; ` +
        `pool reserved ${cu.memPoolGetAttribute(pool, MemPoolAttribute.RESERVED_MEM_CURRENT)} bytes`,
    );
  });
});
