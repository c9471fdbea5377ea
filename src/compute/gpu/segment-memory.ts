/**
 * The memory pool's view of a GPU, written once for every runtime: segments are the runtime's
 * device allocations, out-of-memory is an `undefined` allocation rather than an error, and the
 * events that guard cross-stream reuse are recycled. A runtime (CUDA driver, HIP) supplies the
 * few calls that differ through {@link SegmentRuntime}.
 */
import type { PoolDevice, PoolEvent } from './memory-pool.js';

/** One device allocation of a runtime. */
export interface Segment {
  readonly ptr: bigint;
  dispose(): void;
}

/** An event of a runtime, recorded on one of its backend streams S. */
export interface SegmentEvent<S> {
  record(stream: S): void;
  query(): boolean;
  dispose(): void;
}

/** What {@link SegmentMemory} needs from a runtime. */
export interface SegmentRuntime<S> {
  /** A device allocation, or undefined when the device is out of memory (other failures throw). */
  allocate(bytes: number): Segment | undefined;
  synchronize(): void;
  memoryInfo(): { free: number; total: number };
  /** A new event without timing. */
  createEvent(): SegmentEvent<S>;
  /** Whether a fault has left the device unusable (where the runtime tracks it): no work runs any more. */
  broken?(): boolean;
}

/** The event of a freed block on a broken device: no work of it can still be pending. */
const SETTLED: PoolEvent = { isComplete: () => true, dispose: () => {} };

export class SegmentMemory<S> implements PoolDevice<S> {
  readonly #runtime: SegmentRuntime<S>;
  readonly #segments = new Map<bigint, Segment>();
  /** Events given back by the pool, ready to be recorded again. */
  readonly #idleEvents: SegmentEvent<S>[] = [];

  constructor(runtime: SegmentRuntime<S>) {
    this.#runtime = runtime;
  }

  allocate(bytes: number): bigint | undefined {
    const segment = this.#runtime.allocate(bytes);
    if (segment) this.#segments.set(segment.ptr, segment);
    return segment?.ptr;
  }

  release(address: bigint): void {
    const segment = this.#segments.get(address);
    if (!segment) return;
    this.#segments.delete(address);
    segment.dispose();
  }

  synchronize(): void {
    // A broken device runs nothing more, and its memory can still be released.
    if (this.#runtime.broken?.()) return;
    this.#runtime.synchronize();
  }

  memoryInfo(): { free: number; total: number } {
    return this.#runtime.memoryInfo();
  }

  recordEvent(stream: S): PoolEvent {
    // Freeing must still work after a fault, so the tensors of a broken context can be disposed.
    if (this.#runtime.broken?.()) return SETTLED;
    const event = this.#idleEvents.pop() ?? this.#runtime.createEvent();
    try {
      event.record(stream);
    } catch (err) {
      this.#idleEvents.push(event);
      throw err;
    }
    let live = true;
    return {
      isComplete: () => event.query(),
      dispose: () => {
        if (!live) return;
        live = false;
        this.#idleEvents.push(event);
      },
    };
  }

  /** Frees every segment still held and the recycled events. */
  dispose(): void {
    for (const segment of this.#segments.values()) segment.dispose();
    this.#segments.clear();
    for (const event of this.#idleEvents) event.dispose();
    this.#idleEvents.length = 0;
  }
}
