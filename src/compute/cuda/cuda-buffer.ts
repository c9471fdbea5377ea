/**
 * The CUDA backend's buffers and streams: a buffer is a block of the caching
 * pool plus the stream that last used it, which is what orders it across
 * streams and decides which arena it returns to.
 */
import type { Event } from '../../driver/event.js';
import type { Stream } from '../../driver/stream.js';
import type { BackendBuffer, BackendStream } from '../backend.js';
import type { PoolBlock } from '../memory-pool.js';

/** A stream of the CUDA backend. */
export class CudaStream implements BackendStream {
  /** Reused to order other streams after this one (re-recording is safe once waited on). */
  marker: Event | undefined = undefined;

  constructor(
    readonly id: number,
    /** The driver stream (non-blocking). */
    readonly stream: Stream,
  ) {}
}

/** Device memory of the CUDA backend: a pool block. */
export class CudaBuffer implements BackendBuffer {
  /** The stream that used the buffer last; other streams wait for it before touching the buffer. */
  lastStream: CudaStream;
  /** Set once the buffer went back to the pool. */
  freed = false;

  constructor(
    readonly block: PoolBlock,
    /** Bytes requested (the block may be larger). */
    readonly byteLength: number,
    stream: CudaStream,
  ) {
    this.lastStream = stream;
  }

  /** Device address of the first byte. */
  get address(): bigint {
    return this.block.address;
  }
}
