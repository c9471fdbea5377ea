/**
 * One u32 counter per stream in device memory, zero between kernels: the
 * single-launch full reduction counts finished blocks in it (and its last block
 * resets it). Kept outside the memory pool so a counter never pins a pool
 * segment (and trim can always release the whole cache).
 */
import type { Context } from '../../driver/context.js';
import { DeviceBuffer } from '../../driver/device-buffer.js';

/** Counters per device allocation. */
const PER_PAGE = 1024;

export class BlockCounters {
  readonly #context: Context;
  readonly #pages: DeviceBuffer[] = [];

  constructor(context: Context) {
    this.#context = context;
  }

  /** The counter of the stream numbered `streamId` (stream ids are small and unique per backend). */
  address(streamId: number): bigint {
    const page = Math.floor(streamId / PER_PAGE);
    while (this.#pages.length <= page) {
      const buffer = DeviceBuffer.alloc(this.#context, PER_PAGE * 4);
      buffer.fill(0, { dtype: 'u32' });
      // Zero everywhere before any stream's kernel reads it: once per page, not per reduction.
      this.#context.synchronize();
      this.#pages.push(buffer);
    }
    return this.#pages[page]!.ptr + BigInt((streamId % PER_PAGE) * 4);
  }

  dispose(): void {
    for (const page of this.#pages) page.dispose();
    this.#pages.length = 0;
  }
}
