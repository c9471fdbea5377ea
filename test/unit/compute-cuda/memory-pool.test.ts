import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, OutOfMemoryError } from '../../../src/errors.js';
import { MemoryPool, roundBlockSize, sizeClassOf, type PoolStrategy } from '../../../src/compute/gpu/memory-pool.js';
import { FakeDevice, type FakeStream } from './fake-pool-device.js';

const MiB = 2 ** 20;
const s0: FakeStream = { name: 's0' };
const s1: FakeStream = { name: 's1' };

describe('size rounding', () => {
  it('rounds requests up to 512 bytes, never below one granule', () => {
    expect(roundBlockSize(0)).toBe(512);
    expect(roundBlockSize(1)).toBe(512);
    expect(roundBlockSize(512)).toBe(512);
    expect(roundBlockSize(513)).toBe(1024);
  });

  it('size classes are exact to 4 KiB, then four steps per octave', () => {
    expect(sizeClassOf(4096)).toBe(4096);
    expect(sizeClassOf(4608)).toBe(5120); // 4 KiB · 1.25
    expect(sizeClassOf(MiB)).toBe(MiB);
    expect(sizeClassOf(MiB + 512)).toBe(1.25 * MiB);
    expect(sizeClassOf(1.6 * MiB)).toBe(1.75 * MiB);
    expect(sizeClassOf(3 * 2 ** 31 + 512)).toBe(3.5 * 2 ** 31);
  });
});

describe.each<PoolStrategy>(['best-fit', 'size-class'])('MemoryPool (%s)', (strategy) => {
  it('caches freed blocks and reuses them on the same stream', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    const a = pool.alloc(1000, s0);
    expect(a.size).toBe(1024);
    expect(pool.stats()).toMatchObject({ inUseBytes: 1024, allocations: 1, peakBytes: 1024 });
    pool.free(a, s0);
    expect(pool.stats().inUseBytes).toBe(0);
    expect(pool.stats().cachedBytes).toBeGreaterThanOrEqual(1024);
    const b = pool.alloc(700, s0);
    expect(b.address).toBe(a.address);
    expect(device.allocations).toBe(1);
    pool.free(b, s0);
  });

  it('keeps peak, in-use and cached counters consistent', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    const blocks = [3 * MiB, 5 * MiB, 7 * MiB].map((n) => pool.alloc(n, s0));
    const inUse = blocks.reduce((t, b) => t + b.size, 0);
    expect(pool.stats()).toMatchObject({ inUseBytes: inUse, allocations: 3, peakBytes: inUse, cachedBytes: 0 });
    pool.free(blocks[1]!, s0);
    expect(pool.stats()).toMatchObject({ inUseBytes: inUse - blocks[1]!.size, allocations: 2, peakBytes: inUse });
    expect(pool.stats().cachedBytes).toBe(blocks[1]!.size);
    expect(pool.stats().inUseBytes + pool.stats().cachedBytes).toBe(pool.reserved);
  });

  it('trim waits for the device and releases every free segment', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    const kept = pool.alloc(8 * MiB, s0);
    const blocks = [4 * MiB, 100, 3000].map((n) => pool.alloc(n, s0));
    for (const b of blocks) pool.free(b, s0);
    pool.trim();
    expect(device.synchronizations).toBe(1);
    expect(pool.stats().cachedBytes).toBe(0);
    expect(device.liveBytes).toBe(kept.size);
    pool.free(kept, s0);
    pool.trim();
    expect(device.live.size).toBe(0);
  });

  it('does not grow over 10^4 alloc/free cycles of mixed sizes', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    const sizes = [512, 4096, 100_000, 3 * MiB, 17 * MiB];
    for (const n of sizes) pool.free(pool.alloc(n, s0), s0);
    const reserved = pool.reserved;
    const allocations = device.allocations;
    for (let i = 0; i < 10_000; i++) {
      const held = sizes.map((n) => pool.alloc(n - (i % 7), s0));
      for (const b of held) pool.free(b, s0);
    }
    expect(pool.reserved).toBe(reserved);
    expect(device.allocations).toBe(allocations);
    expect(pool.stats()).toMatchObject({ inUseBytes: 0, allocations: 0 });
  });

  it('reuses a block on another stream only after its free-time event completed', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    pool.free(pool.alloc(64, s1), s1); // s1 exists: the pool is now multi-stream
    const a = pool.alloc(8 * MiB, s0);
    pool.free(a, s0);
    const event = device.events.at(-1)!;
    expect(event.stream).toBe(s0);
    const b = pool.alloc(8 * MiB, s1);
    expect(b.address).not.toBe(a.address); // event pending: fresh memory
    event.complete = true;
    const c = pool.alloc(8 * MiB, s1);
    expect(c.address).toBe(a.address);
    expect(event.disposed).toBe(true);
    pool.free(b, s1);
    pool.free(c, s1);
  });

  it('a block freed on its own stream is reused there at once, event or not', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    pool.free(pool.alloc(64, s1), s1);
    const a = pool.alloc(2 * MiB, s0);
    pool.free(a, s0);
    expect(device.events.at(-1)!.complete).toBe(false);
    expect(pool.alloc(2 * MiB, s0).address).toBe(a.address);
  });

  it('enforces the limit: frees the cache and retries once, then throws OutOfMemoryError', () => {
    const device = new FakeDevice(1024 * MiB);
    const pool = new MemoryPool<FakeStream>(device, { strategy, limitBytes: 40 * MiB });
    const a = pool.alloc(24 * MiB, s0);
    const b = pool.alloc(8 * MiB, s0);
    pool.free(b, s0);
    // 24 + 8 cached + 12 > 40: the cached block is released and the retry fits.
    const c = pool.alloc(12 * MiB, s0);
    expect(device.releases).toBe(1);
    expect(pool.reserved).toBe(a.size + c.size);
    let caught: unknown;
    try {
      pool.alloc(16 * MiB, s0);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(OutOfMemoryError);
    const oom = caught as OutOfMemoryError;
    expect(oom.requestedBytes).toBe(16 * MiB);
    expect(oom.inUseBytes).toBe(a.size + c.size);
    expect(oom.limitBytes).toBe(40 * MiB);
    expect(oom.deviceTotalBytes).toBe(1024 * MiB);
    expect(oom.deviceFreeBytes).toBe(1024 * MiB - device.liveBytes);
    expect(oom.message).toMatch(/requested 16\.0 MiB/);
  });

  it('on device out-of-memory releases cached blocks and retries once', () => {
    const device = new FakeDevice(32 * MiB);
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    const a = pool.alloc(16 * MiB, s0);
    pool.free(pool.alloc(12 * MiB, s0), s0);
    const b = pool.alloc(14 * MiB, s0); // 16 + 12 cached + 14 > 32 on the device
    expect(device.synchronizations).toBe(1);
    expect(pool.stats().cachedBytes).toBe(0);
    expect(() => pool.alloc(8 * MiB, s0)).toThrow(OutOfMemoryError);
    pool.free(a, s0);
    pool.free(b, s0);
  });

  it('refuses double frees, foreign blocks and bad sizes', () => {
    const pool = new MemoryPool<FakeStream>(new FakeDevice(), { strategy });
    const other = new MemoryPool<FakeStream>(new FakeDevice(), { strategy });
    const a = pool.alloc(100, s0);
    pool.free(a, s0);
    expect(() => pool.free(a, s0)).toThrow(InvalidArgumentError);
    expect(() => pool.free(other.alloc(100, s0), s0)).toThrow(InvalidArgumentError);
    expect(() => pool.alloc(-1, s0)).toThrow(InvalidArgumentError);
    expect(() => pool.alloc(1.5, s0)).toThrow(InvalidArgumentError);
  });

  it('dispose releases everything, in use or cached', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy });
    pool.alloc(3 * MiB, s0);
    pool.free(pool.alloc(5000, s0), s0);
    pool.dispose();
    expect(device.live.size).toBe(0);
    expect(pool.stats()).toMatchObject({ inUseBytes: 0, cachedBytes: 0, allocations: 0 });
  });
});

describe('MemoryPool best-fit split and merge', () => {
  it('carves small requests from one 2 MiB segment and merges them back', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy: 'best-fit' });
    const blocks = [1000, 5000, 70_000, 512].map((n) => pool.alloc(n, s0));
    expect(device.allocations).toBe(1);
    expect(device.liveBytes).toBe(2 * MiB);
    // Consecutive, non-overlapping addresses inside the segment.
    for (let i = 1; i < blocks.length; i++) {
      expect(blocks[i]!.address).toBe(blocks[i - 1]!.address + BigInt(blocks[i - 1]!.size));
    }
    for (const i of [2, 0, 3, 1]) pool.free(blocks[i]!, s0);
    expect(pool.stats().cachedBytes).toBe(2 * MiB);
    // Only a fully merged segment is released by trim.
    pool.trim();
    expect(device.live.size).toBe(0);
  });

  it('coalesces free neighbours when nothing fits, before taking device memory', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy: 'best-fit' });
    const quarters = [0, 1, 2, 3].map(() => pool.alloc(MiB / 2, s0)); // fills the 2 MiB segment
    for (const q of quarters) pool.free(q, s0);
    const half = pool.alloc(MiB, s0);
    expect(half.address).toBe(quarters[0]!.address);
    expect(device.allocations).toBe(1);
    // The remaining half is one free block again.
    expect(pool.alloc(MiB, s0).address).toBe(quarters[2]!.address);
    expect(device.allocations).toBe(1);
  });

  it('reuses a freed size exactly without splitting or merging', () => {
    const pool = new MemoryPool<FakeStream>(new FakeDevice(), { strategy: 'best-fit' });
    const a = pool.alloc(3000, s0);
    pool.alloc(3000, s0);
    pool.free(a, s0);
    const again = pool.alloc(3000, s0);
    expect(again).toBe(a);
  });

  it('lists a block freed again and again once for merging, and still merges its segment later', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy: 'best-fit' });
    const kept = pool.alloc(512, s0);
    for (let i = 0; i < 1000; i++) pool.free(pool.alloc(4096, s0), s0);
    const arena = (pool as unknown as { arenas: Map<FakeStream, { small: { pending: unknown[] } }> }).arenas.get(s0)!;
    expect(arena.small.pending.length).toBeLessThanOrEqual(2);
    pool.free(kept, s0);
    // Only a fully merged segment is released by trim.
    pool.trim();
    expect(device.live.size).toBe(0);
  });

  it('picks the smallest free block that fits', () => {
    const pool = new MemoryPool<FakeStream>(new FakeDevice(), { strategy: 'best-fit' });
    const spacer = () => pool.alloc(512, s0);
    const big = pool.alloc(64 * 1024, s0);
    spacer();
    const small = pool.alloc(8 * 1024, s0);
    spacer();
    pool.free(big, s0);
    pool.free(small, s0);
    expect(pool.alloc(6 * 1024, s0).address).toBe(small.address);
  });

  it('does not let a small request split a large segment', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy: 'best-fit' });
    pool.free(pool.alloc(64 * MiB, s0), s0);
    pool.alloc(4096, s0);
    expect(device.allocations).toBe(2);
    expect(pool.alloc(60 * MiB, s0).size).toBe(60 * MiB); // the large block is split for a close large request
  });

  it('trim releases a segment whose free blocks sit in different streams\' arenas', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy: 'best-fit' });
    const a = pool.alloc(4096, s0);
    const b = pool.alloc(4096, s0);
    pool.free(a, s1);
    pool.free(b, s0);
    expect(pool.stats().cachedBytes).toBe(2 * MiB);
    pool.trim();
    expect(pool.stats().cachedBytes).toBe(0);
    expect(device.live.size).toBe(0);
    expect(device.events.every((e) => e.disposed)).toBe(true);
  });

  it('keeps blocks of different streams apart when merging', () => {
    const device = new FakeDevice();
    const pool = new MemoryPool<FakeStream>(device, { strategy: 'best-fit' });
    const [q0, q1, q2] = [0, 1, 2, 3].map(() => pool.alloc(MiB / 2, s0)); // fills one 2 MiB segment
    pool.free(q0!, s1);
    pool.free(q1!, s0);
    pool.free(q2!, s0);
    // q1 and q2 merge in s0's arena; q0, in s1's, stays apart.
    expect(pool.alloc(MiB, s0).address).toBe(q1!.address);
    expect(device.allocations).toBe(1);
    pool.alloc(MiB / 2, s0);
    expect(device.allocations).toBe(2); // q0's pending event keeps it from s0
  });
});
