/**
 * SegmentMemory (the pool's view of a CUDA or HIP device) on a fake runtime: after a fault breaks
 * the device, freeing and disposing must still work without asking the device for anything.
 */
import { describe, expect, it } from 'vitest';
import { MemoryPool } from '../../../src/compute/gpu/memory-pool.js';
import { SegmentMemory } from '../../../src/compute/gpu/segment-memory.js';

class BrokenDeviceError extends Error {}

/** A stream of the fake runtime. */
interface Stream {
  name: string;
}
const A: Stream = { name: 'a' };
const B: Stream = { name: 'b' };

function fakeDevice() {
  const state = { broken: false, calls: [] as string[] };
  const refuse = (call: string) => {
    state.calls.push(call);
    if (state.broken) throw new BrokenDeviceError(call);
  };
  let next = 0x1000n;
  const memory = new SegmentMemory<Stream>({
    allocate: (bytes) => {
      refuse('allocate');
      const ptr = next;
      next += BigInt(bytes) + 0x1000n;
      return { ptr, dispose: () => state.calls.push('release') };
    },
    synchronize: () => refuse('synchronize'),
    memoryInfo: () => ({ free: 1 << 30, total: 1 << 30 }),
    createEvent: () => ({ record: () => refuse('record'), query: () => true, dispose: () => {} }),
    broken: () => state.broken,
  });
  return { state, memory };
}

describe('SegmentMemory on a broken device', () => {
  it('frees blocks of several streams and disposes the pool without a device call that would fail', () => {
    const { state, memory } = fakeDevice();
    const pool = new MemoryPool<Stream>(memory, {});
    const a = pool.alloc(1024, A);
    const b = pool.alloc(1024, B);
    pool.free(a, A); // two arenas: frees record events from here on
    state.broken = true;
    state.calls.length = 0;
    expect(() => pool.free(b, B)).not.toThrow();
    expect(pool.stats().inUseBytes).toBe(0);
    expect(() => pool.dispose()).not.toThrow();
    expect(state.calls.filter((c) => c !== 'release')).toEqual([]);
    expect(state.calls).toContain('release');
  });

  it('still records events, and still waits, while the device works', () => {
    const { state, memory } = fakeDevice();
    const pool = new MemoryPool<Stream>(memory, {});
    const a = pool.alloc(1024, A);
    const b = pool.alloc(1024, B);
    pool.free(a, A);
    pool.free(b, B);
    pool.dispose();
    expect(state.calls).toContain('record');
    expect(state.calls).toContain('synchronize');
  });
});
