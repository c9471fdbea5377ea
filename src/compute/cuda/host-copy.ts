/**
 * Copies between JS memory and the device, ordered on a stream.
 *
 * Pageable (ordinary JS) memory goes through the driver's own staging:
 * cuMemcpyHtoDAsync from pageable memory returns once the source has been
 * staged, and cuMemcpyDtoHAsync into pageable memory returns once the copy is
 * done (CUDA's "API synchronization behavior"), so the JS memory is free to
 * reuse on return and both copies stay in stream order without a whole-stream
 * synchronisation first. `readAsync` instead copies into pinned staging memory
 * and waits without blocking the event loop.
 */
import type { Context } from '../../driver/context.js';
import { cuda } from '../../driver/bindings.js';
import { check } from '../../driver/cuda-error.js';
import { PinnedBuffer } from '../../driver/pinned-buffer.js';
import type { Stream } from '../../driver/stream.js';

/** Host → device, in `stream`'s order; `src` may be reused as soon as this returns. */
export function copyHostToDevice(stream: Stream, dst: bigint, src: ArrayBufferView): void {
  if (src.byteLength === 0) return;
  check(cuda.cuMemcpyHtoDAsync_v2(dst, src, src.byteLength, stream.handle), 'cuMemcpyHtoDAsync_v2');
}

/** Device → host, in `stream`'s order; returns when `dst` holds the data. */
export function copyDeviceToHost(stream: Stream, dst: ArrayBufferView, src: bigint): void {
  if (dst.byteLength === 0) return;
  check(cuda.cuMemcpyDtoHAsync_v2(dst, src, dst.byteLength, stream.handle), 'cuMemcpyDtoHAsync_v2');
}

/** Smallest staging buffer allocated (pinning has a fixed cost worth amortising). */
const MIN_STAGING = 1 << 20;
/** Idle staging buffers kept for reuse. */
const MAX_IDLE = 4;

/** Pinned host buffers for asynchronous reads, reused across calls. */
export class PinnedStaging {
  readonly #context: Context;
  readonly #idle: PinnedBuffer[] = [];

  constructor(context: Context) {
    this.#context = context;
  }

  /** A pinned buffer of at least `bytes` bytes, owned by the caller until {@link release}. */
  acquire(bytes: number): PinnedBuffer {
    let best = -1;
    for (let i = 0; i < this.#idle.length; i++) {
      const size = this.#idle[i]!.byteLength;
      if (size >= bytes && (best < 0 || size < this.#idle[best]!.byteLength)) best = i;
    }
    if (best >= 0) return this.#idle.splice(best, 1)[0]!;
    return PinnedBuffer.alloc(this.#context, Math.max(MIN_STAGING, 2 ** Math.ceil(Math.log2(Math.max(1, bytes)))));
  }

  /** Returns a buffer whose copies have completed. */
  release(buffer: PinnedBuffer): void {
    this.#idle.push(buffer);
    if (this.#idle.length > MAX_IDLE) {
      this.#idle.sort((a, b) => b.byteLength - a.byteLength);
      this.#idle.pop()!.dispose();
    }
  }

  dispose(): void {
    for (const buffer of this.#idle) buffer.dispose();
    this.#idle.length = 0;
  }
}
