/**
 * The CPU backend's memory: tensors live in the WebAssembly kernels' linear memory, through a
 * caching pool over it (`gpu/memory-pool.ts` on a `WasmHeap`), so ops run on the kernels in
 * place. When the linear memory is full (it stops at 4 GiB), a tensor gets a SharedArrayBuffer
 * of its own and the ops on it take the JS loops. The limit (`poolLimitBytes`) counts the bytes
 * asked for, as it always has on this backend: the pool's 512-byte rounding and its cache are
 * not charged to the user.
 *
 * Reuse is stream-ordered, as in the GPU pools: a freed block goes back to the pool at once even
 * while queued jobs still use it, since the jobs of a later op run after them. Only the host
 * could touch it early, so a buffer made from such a block inherits the last job using it
 * ({@link CpuBuffer.lastUse}), and its views wait for that job. Reusing at once keeps a chain of
 * ops on a few cache-warm blocks instead of fresh memory per op.
 */
import { constants as bufferConstants } from 'node:buffer';
import { freemem, totalmem } from 'node:os';
import { OutOfMemoryError } from '../../errors.js';
import type { PoolStats } from '../backend/backend.js';
import { MemoryPool } from '../gpu/memory-pool.js';
import { CpuBuffer } from './cpu-buffer.js';
import type { SimdRuntime } from './simd/runtime.js';

export class CpuMemory {
  readonly limitBytes: number | undefined;
  readonly #rt: SimdRuntime;
  readonly #pool: MemoryPool<object>;
  /** The pool's one arena: the CPU runs its ops in order, whatever the stream. */
  readonly #stream = {};
  #inUseBytes = 0;
  #peakBytes = 0;
  #allocations = 0;
  /** Byte ranges freed while queued jobs still used them, with the last such job, oldest first. */
  #busy: { start: number; end: number; lastUse: number }[] = [];

  /** `kernelLimitBytes` caps the pool's share of the linear memory (in use and cached). */
  constructor(rt: SimdRuntime, limitBytes: number | undefined, kernelLimitBytes?: number) {
    this.limitBytes = limitBytes;
    this.#rt = rt;
    this.#pool = rt.createPool(kernelLimitBytes === undefined ? {} : { limitBytes: kernelLimitBytes });
  }

  /**
   * A buffer of `byteLength` bytes: a pool block of the linear memory, else one of its own.
   * @throws OutOfMemoryError over the limit, or when neither place can hold it.
   */
  alloc(byteLength: number): CpuBuffer {
    if (this.limitBytes !== undefined && this.#inUseBytes + byteLength > this.limitBytes) throw this.outOfMemory(byteLength, this.limitBytes);
    // A buffer of its own is one typed array, so the engine's limit (2^32 bytes on Node 20) caps it.
    if (byteLength > bufferConstants.MAX_LENGTH) throw this.outOfMemory(byteLength, bufferConstants.MAX_LENGTH);
    let buffer: CpuBuffer;
    try {
      buffer = new CpuBuffer(byteLength, { runtime: this.#rt, block: this.#pool.alloc(byteLength, this.#stream) });
      buffer.lastUse = this.busyUntil(buffer.address, buffer.address + byteLength);
    } catch (err) {
      if (!(err instanceof OutOfMemoryError)) throw err;
      buffer = this.ownBuffer(byteLength);
    }
    this.#inUseBytes += byteLength;
    this.#peakBytes = Math.max(this.#peakBytes, this.#inUseBytes);
    this.#allocations++;
    return buffer;
  }

  /** Gives a buffer back to the pool (see the file comment for blocks queued jobs still use). */
  free(buffer: CpuBuffer): void {
    const block = buffer.block;
    if (block) {
      if (buffer.lastUse > this.#rt.completed) this.#busy.push({ start: buffer.address, end: buffer.address + block.size, lastUse: buffer.lastUse });
      this.#pool.free(block, this.#stream);
    }
    this.#inUseBytes -= buffer.byteLength;
    this.#allocations--;
  }

  stats(): PoolStats {
    return {
      inUseBytes: this.#inUseBytes,
      cachedBytes: this.#pool.stats().cachedBytes,
      peakBytes: this.#peakBytes,
      allocations: this.#allocations,
      ...(this.limitBytes !== undefined ? { limitBytes: this.limitBytes } : {}),
    };
  }

  /** Hands the pool's cached blocks back to the linear memory's heap (a wasm memory cannot shrink, but other pools reuse them). */
  trim(): void {
    this.#rt.settle();
    this.#pool.trim();
  }

  /** Releases every block at once (the backend is closing; the queue has been waited for). */
  dispose(): void {
    this.#busy = [];
    this.#pool.dispose();
    this.#inUseBytes = 0;
    this.#allocations = 0;
  }

  /** The last queued job still using bytes [start, end) of freed buffers (0: none). */
  private busyUntil(start: number, end: number): number {
    const done = this.#rt.completed;
    let first = 0;
    while (first < this.#busy.length && this.#busy[first]!.lastUse <= done) first++;
    if (first > 0) this.#busy.splice(0, first);
    let last = 0;
    for (const range of this.#busy) if (range.lastUse > done && range.start < end && start < range.end) last = Math.max(last, range.lastUse);
    return last;
  }

  private ownBuffer(byteLength: number): CpuBuffer {
    try {
      return new CpuBuffer(byteLength);
    } catch (err) {
      // The engine could not reserve the memory ("Array buffer allocation failed").
      if (err instanceof RangeError) throw this.outOfMemory(byteLength, this.limitBytes);
      throw err;
    }
  }

  private outOfMemory(requestedBytes: number, limitBytes: number | undefined): OutOfMemoryError {
    return new OutOfMemoryError({
      requestedBytes,
      inUseBytes: this.#inUseBytes,
      ...(limitBytes === undefined ? {} : { limitBytes }),
      deviceFreeBytes: freemem(),
      deviceTotalBytes: totalmem(),
    });
  }
}
