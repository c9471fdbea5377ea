import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { MemoryPool, type PoolStrategy } from '../../../src/compute/gpu/memory-pool.js';
import { FakeDevice, type FakeStream } from './fake-pool-device.js';

const s0: FakeStream = { name: 's0' };
const capture: FakeStream = { name: 'capture' };

describe.each<PoolStrategy>(['best-fit', 'size-class'])('MemoryPool reservations for captured graphs (%s)', (strategy) => {
  it('keeps every block a recording allocated or freed from the arenas until the reservation is released', () => {
    const pool = new MemoryPool<FakeStream>(new FakeDevice(), { strategy });
    const before = pool.alloc(4096, s0); // allocated before the capture, freed during it
    const r = pool.beginRecording();
    const a = pool.alloc(1000, capture);
    const b = pool.alloc(2000, capture);
    pool.free(a, capture);
    pool.free(before, capture);
    pool.endRecording();
    expect(r.blocks).toEqual(new Set([a, b, before]));
    expect(r.bytes).toBe(a.size + b.size + before.size);
    expect(pool.reservedForGraphs).toBe(r.bytes);
    // Everything still counts as in use, and no later allocation gets those blocks.
    expect(pool.stats().inUseBytes).toBe(a.size + b.size + before.size);
    const later = [pool.alloc(1000, s0), pool.alloc(4096, s0), pool.alloc(2000, capture)];
    for (const x of later) expect([a.address, b.address, before.address]).not.toContain(x.address);
    for (const x of later) pool.free(x, s0);
    // A graph output freed after the recording stays parked with the reservation.
    pool.free(b, s0);
    expect(pool.stats().inUseBytes).toBe(a.size + b.size + before.size);
    pool.releaseReservation(r, s0);
    expect(pool.stats().inUseBytes).toBe(0);
    expect(pool.reservedForGraphs).toBe(0);
    const again = pool.alloc(1000, s0);
    expect([a.address, later[0]!.address]).toContain(again.address);
    pool.free(again, s0);
  });

  it('reuses blocks the recording freed for its own later allocations, smallest fit first', () => {
    const pool = new MemoryPool<FakeStream>(new FakeDevice(), { strategy });
    const r = pool.beginRecording();
    const big = pool.alloc(8192, capture);
    const small = pool.alloc(1024, capture);
    pool.free(big, capture);
    pool.free(small, capture);
    expect(pool.alloc(600, capture)).toBe(small);
    expect(pool.alloc(5000, capture)).toBe(big);
    expect(r.parked).toEqual([]);
    pool.endRecording();
    pool.free(small, capture);
    pool.free(big, capture);
    pool.releaseReservation(r, s0);
    expect(pool.stats()).toMatchObject({ inUseBytes: 0, allocations: 0 });
  });

  it('refuses a second recording while one runs, and releases a reservation once', () => {
    const pool = new MemoryPool<FakeStream>(new FakeDevice(), { strategy });
    const r = pool.beginRecording();
    expect(() => pool.beginRecording()).toThrow(InvalidArgumentError);
    const a = pool.alloc(512, capture);
    pool.free(a, capture);
    pool.releaseReservation(r, s0); // also ends the recording
    pool.releaseReservation(r, s0);
    expect(pool.stats().inUseBytes).toBe(0);
    const b = pool.alloc(512, s0);
    expect(b.address).toBe(a.address);
    pool.free(b, s0);
    expect(() => pool.free(b, s0)).toThrow(/freed twice/);
  });
});
