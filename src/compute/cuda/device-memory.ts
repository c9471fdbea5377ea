/**
 * The memory pool's view of a CUDA device: segments are driver allocations
 * (DeviceBuffer), out-of-memory is an `undefined` allocation rather than an
 * error, and the events that guard cross-stream reuse are recycled.
 */
import type { Context } from '../../driver/context.js';
import { CudaError } from '../../driver/cuda-error.js';
import { DeviceBuffer } from '../../driver/device-buffer.js';
import { Event } from '../../driver/event.js';
import { CudaResult } from '../../driver/result-code.js';
import type { PoolDevice, PoolEvent } from '../memory-pool.js';
import type { CudaStream } from './cuda-buffer.js';

export class DeviceMemory implements PoolDevice<CudaStream> {
  readonly #context: Context;
  readonly #segments = new Map<bigint, DeviceBuffer>();
  /** Events given back by the pool, ready to be recorded again. */
  readonly #idleEvents: Event[] = [];

  constructor(context: Context) {
    this.#context = context;
  }

  allocate(bytes: number): bigint | undefined {
    try {
      const buffer = DeviceBuffer.alloc(this.#context, bytes);
      this.#segments.set(buffer.ptr, buffer);
      return buffer.ptr;
    } catch (err) {
      if (err instanceof CudaError && err.result === CudaResult.CUDA_ERROR_OUT_OF_MEMORY) return undefined;
      throw err;
    }
  }

  release(address: bigint): void {
    const buffer = this.#segments.get(address);
    if (!buffer) return;
    this.#segments.delete(address);
    buffer.dispose();
  }

  synchronize(): void {
    this.#context.synchronize();
  }

  memoryInfo(): { free: number; total: number } {
    return this.#context.memoryInfo();
  }

  recordEvent(stream: CudaStream): PoolEvent {
    const event = this.#idleEvents.pop() ?? Event.create(this.#context, { timing: false });
    event.record(stream.stream);
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
    for (const buffer of this.#segments.values()) buffer.dispose();
    this.#segments.clear();
    for (const event of this.#idleEvents) event.dispose();
    this.#idleEvents.length = 0;
  }
}
