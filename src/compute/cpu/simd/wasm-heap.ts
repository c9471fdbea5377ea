/**
 * The WebAssembly linear memory as a device for the project's caching {@link MemoryPool}
 * (`gpu/memory-pool.ts`): a segment is a range of the linear memory, obtained by growing the
 * memory, and addresses are byte offsets into it. A wasm memory cannot shrink, so a segment the
 * pool releases is kept here (coalesced with free neighbours, or returned to the unused top) and
 * handed out again before the memory grows; `memoryInfo` counts it as free. `synchronize` waits
 * for the runtime's job queue (given by the runtime), so a range released while queued jobs use
 * it is not handed to another pool early. Pools here use one stream, so events are never needed.
 *
 * Growth stops at the memory's maximum (4 GiB for wasm32); past it `allocate` returns undefined
 * and the pool reports OutOfMemoryError. A tensor that cannot live here stays an ordinary
 * (Shared)ArrayBuffer served by the JS loops.
 */
import type { PoolDevice, PoolEvent } from '../../gpu/memory-pool.js';
import type { WasmMemory } from './wasm-api.js';

/** Bytes of one WebAssembly page. */
export const WASM_PAGE = 65536;

/** Alignment of every range handed out (the pool's granule). */
const ALIGN = 512;

const COMPLETE: PoolEvent = { isComplete: () => true, dispose: () => {} };

interface Range {
  start: number;
  size: number;
}

/** Counters of a {@link WasmHeap}. */
export interface WasmHeapStats {
  /** Bytes of the linear memory (it only grows). */
  memoryBytes: number;
  /** Bytes of the heap handed out to pools and runtimes (including what they cache). */
  allocatedBytes: number;
  /** Bytes released back and kept here for reuse. */
  releasedBytes: number;
  /** Bytes the memory may still grow by. */
  growableBytes: number;
}

export class WasmHeap implements PoolDevice<unknown> {
  readonly memory: WasmMemory;
  /** The memory's maximum size in bytes. */
  readonly maxBytes: number;
  /** First byte of the heap (below it: the module's data and the calling thread's stack). */
  readonly base: number;
  private top: number;
  /** Released ranges, sorted by start, never adjacent (they are merged). */
  private readonly released: Range[] = [];
  private releasedBytes = 0;

  readonly #synchronize: () => void;

  /** `synchronize` waits for the work in flight on the memory (nothing, by default). */
  constructor(memory: WasmMemory, base: number, maxBytes: number, synchronize: () => void = () => undefined) {
    this.#synchronize = synchronize;
    this.memory = memory;
    this.maxBytes = maxBytes;
    this.base = Math.ceil(base / WASM_PAGE) * WASM_PAGE;
    this.top = this.base;
  }

  /** A range of at least `bytes` bytes (rounded up to 512), or undefined when the memory is full. */
  allocate(bytes: number): bigint | undefined {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    let best = -1;
    for (let i = 0; i < this.released.length; i++) {
      const r = this.released[i]!;
      if (r.size >= size && (best < 0 || r.size < this.released[best]!.size)) best = i;
    }
    if (best >= 0) {
      const r = this.released[best]!;
      const start = r.start;
      if (r.size === size) this.released.splice(best, 1);
      else {
        r.start += size;
        r.size -= size;
      }
      this.releasedBytes -= size;
      return BigInt(start);
    }
    const end = this.top + size;
    if (end > this.maxBytes) return undefined;
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      try {
        this.memory.grow(Math.ceil((end - have) / WASM_PAGE));
      } catch {
        return undefined; // the engine refused (address space or memory exhausted)
      }
    }
    const start = this.top;
    this.top = end;
    return BigInt(start);
  }

  /** Keeps a range for reuse, merged with released neighbours (or with the unused top). */
  release(address: bigint, bytes: number): void {
    const start = Number(address);
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    let i = 0;
    while (i < this.released.length && this.released[i]!.start < start) i++;
    this.released.splice(i, 0, { start, size });
    this.releasedBytes += size;
    const next = this.released[i + 1];
    if (next && start + size === next.start) {
      this.released[i]!.size += next.size;
      this.released.splice(i + 1, 1);
    }
    const prev = this.released[i - 1];
    if (prev && prev.start + prev.size === start) {
      prev.size += this.released[i]!.size;
      this.released.splice(i, 1);
    }
    // A range that reaches the top joins the space above it, so growth can extend it.
    const last = this.released[this.released.length - 1]!;
    if (last.start + last.size === this.top) {
      this.top = last.start;
      this.releasedBytes -= last.size;
      this.released.pop();
    }
  }

  synchronize(): void {
    this.#synchronize();
  }

  memoryInfo(): { free: number; total: number } {
    return { free: this.maxBytes - this.top + this.releasedBytes, total: this.maxBytes };
  }

  recordEvent(): PoolEvent {
    return COMPLETE;
  }

  stats(): WasmHeapStats {
    return {
      memoryBytes: this.memory.buffer.byteLength,
      allocatedBytes: this.top - this.base - this.releasedBytes,
      releasedBytes: this.releasedBytes,
      growableBytes: this.maxBytes - this.memory.buffer.byteLength,
    };
  }
}
