/// <reference types="@webgpu/types" />
/**
 * Device memory of the WebGPU backend: the shared caching pool (`gpu/memory-pool.ts`) over
 * GPUBuffers. WebGPU has no addresses, so each segment (one GPUBuffer) gets a synthetic one,
 * its id shifted far above any buffer size; a block is then (segment, byte offset) and kernels
 * take element offsets as uniforms.
 *
 * One queue serves every stream, so work is ordered by submission and a block freed on one
 * stream is safe on another at once: the pool's cross-stream events are always complete.
 * Releasing a segment needs no wait either: Dawn frees a destroyed buffer once the work already
 * submitted with it is done; only work still being recorded must be submitted first
 * (`synchronize` is the batch's flush).
 *
 * Dawn reports an allocation it cannot satisfy as a GPUOutOfMemoryError inside createBuffer:
 * the allocation then answers `undefined`, so the pool empties its cache and retries before it
 * throws, and the message Dawn gave is kept for that error.
 */
import type { BackendBuffer } from '../core/view.js';
import type { PoolBlock, PoolDevice, PoolEvent } from '../gpu/memory-pool.js';
import type { WebGpuDevice } from './webgpu-device.js';
import { WebGpuError } from './webgpu-errors.js';

/** A stream of the WebGPU backend: an id; every stream feeds the device's one queue. */
export interface WebGpuStream {
  readonly id: number;
}

/** Bits below a segment's synthetic address: 1 TiB, above any WebGPU buffer. */
const SEGMENT_SHIFT = 40n;
const OFFSET_MASK = (1n << SEGMENT_SHIFT) - 1n;

/** One GPUBuffer of the pool. */
export interface Segment {
  readonly id: number;
  readonly buffer: GPUBuffer;
}

const COMPLETE: PoolEvent = { isComplete: () => true, dispose: () => {} };

/** The pool's device: GPUBuffers as segments. */
export class WebGpuSegments implements PoolDevice<WebGpuStream> {
  readonly #device: WebGpuDevice;
  readonly #segments = new Map<number, Segment>();
  readonly #flush: () => void;
  readonly #onRelease: (segment: Segment) => void;
  #nextId = 1;
  /** Dawn's message for the last allocation it refused. */
  lastRefusal: string | undefined;

  /**
   * @param flush - submits the work recorded so far (before a segment is destroyed)
   * @param onRelease - told of every segment destroyed (to drop bind groups that hold it)
   */
  constructor(device: WebGpuDevice, flush: () => void, onRelease: (segment: Segment) => void) {
    this.#device = device;
    this.#flush = flush;
    this.#onRelease = onRelease;
  }

  allocate(bytes: number): bigint | undefined {
    const { device, globals } = this.#device;
    const id = this.#nextId++;
    const usage = globals.GPUBufferUsage.STORAGE | globals.GPUBufferUsage.COPY_SRC | globals.GPUBufferUsage.COPY_DST;
    // Sizes stay multiples of 4 (copies and writes move whole words); the pool rounds to 512 anyway.
    const size = Math.max(4, Math.ceil(bytes / 4) * 4);
    const mark = this.#device.errorMark();
    const buffer = device.createBuffer({ size, usage, label: `gpucompute segment ${id}` });
    const errors = this.#device.takeErrorsSince(mark);
    const oom = errors.find((e) => e.kind === 'out-of-memory');
    if (oom) {
      buffer.destroy();
      this.lastRefusal = oom.message;
      return undefined;
    }
    if (errors.length > 0) {
      buffer.destroy();
      throw new WebGpuError('alloc', errors[0]!.kind, errors[0]!.message);
    }
    this.#segments.set(id, { id, buffer });
    return BigInt(id) << SEGMENT_SHIFT;
  }

  release(address: bigint): void {
    const segment = this.#segments.get(Number(address >> SEGMENT_SHIFT));
    if (!segment) return;
    this.#segments.delete(segment.id);
    this.#onRelease(segment);
    segment.buffer.destroy();
  }

  synchronize(): void {
    this.#flush();
  }

  memoryInfo(): { free: number; total: number } {
    throw new Error('WebGPU does not report device memory');
  }

  recordEvent(): PoolEvent {
    return COMPLETE;
  }

  /** The segment and byte offset of a pool block. */
  locate(block: PoolBlock): { segment: Segment; byteOffset: number } {
    const segment = this.#segments.get(Number(block.address >> SEGMENT_SHIFT))!;
    return { segment, byteOffset: Number(block.address & OFFSET_MASK) };
  }

  /** Destroys every segment still held (the backend is closing). */
  dispose(): void {
    for (const segment of this.#segments.values()) segment.buffer.destroy();
    this.#segments.clear();
  }
}

/** Device memory of the WebGPU backend: a pool block, located once. */
export class WebGpuBuffer implements BackendBuffer {
  /** Set once the buffer went back to the pool. */
  freed = false;

  constructor(
    /** The backend that allocated it. */
    readonly owner: object,
    readonly block: PoolBlock,
    /** Bytes requested (the block may be larger). */
    readonly byteLength: number,
    readonly segment: Segment,
    /** Where the block starts in its segment (a multiple of 512). */
    readonly byteOffset: number,
    /** The stream that freed blocks go back to. */
    public lastStream: WebGpuStream,
  ) {}
}
