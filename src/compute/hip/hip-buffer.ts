/**
 * The HIP backend's buffers and streams: a buffer is a block of the caching
 * pool plus the stream that last used it (which orders it across streams and
 * decides which arena it returns to), as in the CUDA backend.
 */
import type { HipEvent } from '../../hip/event.js';
import type { HipStream } from '../../hip/stream.js';
import type { BackendBuffer, BackendStream } from '../backend.js';
import type { PoolBlock } from '../memory-pool.js';

/** A stream of the HIP backend. */
export class HipBackendStream implements BackendStream {
  /** Reused to order other streams after this one. */
  marker: HipEvent | undefined = undefined;

  constructor(
    readonly id: number,
    readonly stream: HipStream,
  ) {}
}

/** Device memory of the HIP backend: a pool block. */
export class HipBuffer implements BackendBuffer {
  lastStream: HipBackendStream;
  freed = false;

  constructor(
    readonly block: PoolBlock,
    readonly byteLength: number,
    stream: HipBackendStream,
  ) {
    this.lastStream = stream;
  }

  get address(): bigint {
    return this.block.address;
  }
}
