/**
 * The linear memory as the caching MemoryPool's device: blocks never overlap and keep their data
 * while the memory grows; trimmed segments go back to the heap and are handed out again before the
 * memory grows; a full memory or a pool limit gives OutOfMemoryError.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { OutOfMemoryError } from '../../../src/errors.js';
import { MemoryPool } from '../../../src/compute/gpu/memory-pool.js';
import { WASM_PAGE, WasmHeap } from '../../../src/compute/cpu/simd/wasm-heap.js';
import { wasm } from '../../../src/compute/cpu/simd/wasm-api.js';
import { runtime } from './helpers.js';

const rt = runtime(1);
afterAll(() => rt.dispose());
const stream = {};

describe('WasmHeap under MemoryPool', () => {
  it('hands out disjoint blocks whose data survives growth', () => {
    const pool = rt.createPool();
    const sizes = [100, 5000, 1 << 20, 3 << 20, 77, 1 << 22];
    const blocks = sizes.map((s) => pool.alloc(s, stream));
    blocks.forEach((b, i) => rt.u8.fill(i + 1, Number(b.address), Number(b.address) + sizes[i]!));
    const before = rt.memory.buffer.byteLength;
    const big = pool.alloc(64 << 20, stream);
    expect(rt.memory.buffer.byteLength).toBeGreaterThan(before);
    const spans = [...blocks, big].map((b) => [Number(b.address), Number(b.address) + b.size] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    blocks.forEach((b, i) => expect(rt.u8.subarray(Number(b.address), Number(b.address) + sizes[i]!).every((v) => v === i + 1)).toBe(true));
    for (const b of [...blocks, big]) pool.free(b, stream);
    expect(pool.stats().inUseBytes).toBe(0);
    pool.dispose();
  });

  it('reuses trimmed segments before growing the memory', () => {
    const pool = rt.createPool();
    const a = pool.alloc(32 << 20, stream);
    const keep = pool.alloc(8 << 20, stream);
    pool.free(a, stream);
    pool.trim();
    const grown = rt.memory.buffer.byteLength;
    // a lies below a live segment: it stays a released range of the heap.
    const released = rt.heap.stats().releasedBytes;
    expect(released).toBeGreaterThanOrEqual(32 << 20);
    const other = rt.createPool();
    const b = other.alloc(16 << 20, stream);
    const c = other.alloc(16 << 20, stream);
    expect(rt.memory.buffer.byteLength).toBe(grown);
    for (const x of [b, c]) {
      expect(Number(x.address)).toBeGreaterThanOrEqual(Number(a.address));
      expect(Number(x.address) + x.size).toBeLessThanOrEqual(Number(a.address) + a.size);
    }
    expect(rt.heap.stats().releasedBytes).toBe(released - b.size - c.size);
    other.free(b, stream);
    other.free(c, stream);
    other.dispose();
    pool.free(keep, stream);
    pool.dispose();
  });

  it('returns a released range at the top to the space growth uses', () => {
    const memory = new wasm.Memory({ initial: 1, maximum: 64, shared: true });
    const heap = new WasmHeap(memory, 0, 64 * WASM_PAGE);
    const a = heap.allocate(WASM_PAGE)!;
    const b = heap.allocate(WASM_PAGE)!;
    heap.release(b, WASM_PAGE);
    expect(heap.stats().releasedBytes).toBe(0);
    expect(heap.allocate(2 * WASM_PAGE)).toBe(b);
    expect(heap.memoryInfo().free).toBe(61 * WASM_PAGE);
    expect(a).toBe(0n);
  });

  it('merges released neighbours into one range', () => {
    const memory = new wasm.Memory({ initial: 1, maximum: 64, shared: true });
    const heap = new WasmHeap(memory, 0, 64 * WASM_PAGE);
    const a = heap.allocate(WASM_PAGE)!;
    const b = heap.allocate(WASM_PAGE)!;
    const c = heap.allocate(WASM_PAGE)!;
    heap.release(a, WASM_PAGE);
    heap.release(c, WASM_PAGE);
    heap.release(b, WASM_PAGE);
    expect(heap.allocate(3 * WASM_PAGE)).toBe(a);
  });

  it('a full memory gives OutOfMemoryError through the pool, after releasing its cache', () => {
    const memory = new wasm.Memory({ initial: 1, maximum: 64, shared: true });
    const heap = new WasmHeap(memory, 0, 64 * WASM_PAGE);
    const pool = new MemoryPool<object>(heap);
    const held = pool.alloc(40 * WASM_PAGE, stream);
    const cached = pool.alloc(20 * WASM_PAGE, stream);
    pool.free(cached, stream);
    // Needs the cached 20 pages plus growth to the maximum: the pool releases its cache and retries.
    const again = pool.alloc(22 * WASM_PAGE, stream);
    expect(Number(again.address)).toBeGreaterThan(0);
    expect(() => pool.alloc(10 * WASM_PAGE, stream)).toThrow(OutOfMemoryError);
    expect(heap.memoryInfo().total).toBe(64 * WASM_PAGE);
    pool.free(held, stream);
    pool.free(again, stream);
  });

  it('honours a pool limit', () => {
    const pool = rt.createPool({ limitBytes: 8 << 20 });
    const a = pool.alloc(6 << 20, stream);
    expect(() => pool.alloc(6 << 20, stream)).toThrow(OutOfMemoryError);
    pool.free(a, stream);
    pool.dispose();
  });
});
