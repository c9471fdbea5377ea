/// <reference types="@webgpu/types" />
/**
 * Command batching: dispatches and copies are recorded into one command encoder (dispatches into
 * one open compute pass) and submitted together at a flush: at a read-back, a synchronisation, a
 * release of memory back to the device (trim, dispose), or when the batch reaches its size bound
 * (host writes are recorded too, see `upload.ts`). A `queue.submit` costs about 0.3 ms of host
 * time on an NVIDIA driver, so never one per op.
 *
 * Kernel parameters go into a uniform arena: each dispatch takes an aligned 256-byte window of a
 * host copy, bound with a dynamic offset; the flush uploads the used part with one writeBuffer
 * ahead of the submit. The queue orders that write after earlier submits, so one arena serves
 * every batch.
 */
import type { WebGpuDevice } from './webgpu-device.js';

/** Bytes of one dispatch's uniform window (the binding size). */
export const PARAM_WINDOW = 256;

/** Dispatches per batch before it is submitted anyway (GPU work starts while the host records more). */
const MAX_DISPATCHES = 1024;

/**
 * How an error met at a submit is attributed: the operation that submitted and the ops recorded
 * in the batch. Dawn drops a command buffer it refuses whole, so none of them ran.
 */
export function batchLabel(op: string, ops: readonly string[]): string {
  const others = ops.filter((o) => o !== op);
  return others.length === 0 ? op : `${op} (submitting ${others.join(', ')}; a refused batch runs none of them)`;
}

/** The open batch of recorded work. */
export class CommandBatch {
  readonly #dev: WebGpuDevice;
  readonly arena: GPUBuffer;
  readonly #host: ArrayBuffer;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  readonly #align: number;
  readonly #capacity: number;
  #used = 0;
  #encoder: GPUCommandEncoder | undefined;
  #pass: GPUComputePassEncoder | undefined;
  #passPipeline: GPUComputePipeline | undefined;
  #dispatches = 0;
  #flushes = 0;
  /** The ops recorded since the last flush (for error messages), in order, without repeats in a row. */
  readonly #ops: string[] = [];
  /** Run once the batch is submitted (e.g. destroying upload buffers its copies read). */
  readonly #afterSubmit: (() => void)[] = [];

  constructor(dev: WebGpuDevice) {
    this.#dev = dev;
    this.#align = Math.max(dev.limits.minUniformBufferOffsetAlignment, 4);
    // Room for MAX_DISPATCHES windows at the device's alignment, plus the last window's tail.
    const stride = Math.ceil(PARAM_WINDOW / this.#align) * this.#align;
    this.#capacity = Math.min(MAX_DISPATCHES * stride, 4 * 2 ** 20);
    const { GPUBufferUsage } = dev.globals;
    this.arena = dev.device.createBuffer({
      size: this.#capacity + PARAM_WINDOW,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
      label: 'gpucompute kernel parameters',
    });
    this.#host = new ArrayBuffer(this.#capacity + PARAM_WINDOW);
    this.u32 = new Uint32Array(this.#host);
    this.i32 = new Int32Array(this.#host);
    this.f32 = new Float32Array(this.#host);
  }

  /** Dispatches recorded since the last flush. */
  get dispatches(): number {
    return this.#dispatches;
  }

  /** Flushes that submitted something so far (a timer checks none happened inside its timed pass). */
  get flushes(): number {
    return this.#flushes;
  }

  /** Whether anything is recorded and not yet submitted. */
  get pending(): boolean {
    return this.#encoder !== undefined;
  }

  /**
   * Reserves a parameter window of `bytes` (≤ {@link PARAM_WINDOW}) for the next dispatch and
   * returns its byte offset in the arena; a full arena is submitted first.
   */
  reserveParams(bytes: number): number {
    const size = Math.ceil(bytes / this.#align) * this.#align;
    if (this.#used + size > this.#capacity || this.#dispatches >= MAX_DISPATCHES) this.flush();
    const offset = this.#used;
    this.#used += size;
    this.#dispatches++;
    return offset;
  }

  /** The compute pass to record dispatches into (opened on demand). */
  pass(op: string): GPUComputePassEncoder {
    this.note(op);
    if (!this.#pass) {
      this.#pass = this.encoder(op).beginComputePass();
      this.#passPipeline = undefined;
    }
    return this.#pass;
  }

  /** Sets `pipeline` on the open pass unless it is already set. */
  setPipeline(pass: GPUComputePassEncoder, pipeline: GPUComputePipeline): void {
    if (this.#passPipeline === pipeline) return;
    pass.setPipeline(pipeline);
    this.#passPipeline = pipeline;
  }

  /** The encoder, for copies: ends the open compute pass. */
  encoder(op: string): GPUCommandEncoder {
    this.note(op);
    this.endPass();
    this.#encoder ??= this.#dev.device.createCommandEncoder({ label: 'gpucompute batch' });
    return this.#encoder;
  }

  /** Opens a compute pass that writes timestamps at its start and end (the autotuner's timing). */
  timedPass(op: string, timestampWrites: GPUComputePassTimestampWrites): GPUComputePassEncoder {
    const encoder = this.encoder(op);
    this.#pass = encoder.beginComputePass({ timestampWrites });
    this.#passPipeline = undefined;
    return this.#pass;
  }

  /** Ends the open compute pass, if any. */
  endPass(): void {
    if (!this.#pass) return;
    this.#pass.end();
    this.#pass = undefined;
    this.#passPipeline = undefined;
  }

  /** Records an op name for error messages. */
  note(op: string): void {
    if (this.#ops[this.#ops.length - 1] !== op) this.#ops.push(op);
  }

  /** Runs `task` once the current batch is submitted. */
  afterSubmit(task: () => void): void {
    this.#afterSubmit.push(task);
  }

  /** Submits what is recorded (nothing happens when nothing is); returns the ops it held. */
  flush(): string[] {
    if (!this.#encoder) return [];
    this.#flushes++;
    this.endPass();
    const { queue } = this.#dev.device;
    if (this.#used > 0) queue.writeBuffer(this.arena, 0, this.#host, 0, this.#used);
    const commands = this.#encoder.finish();
    this.#encoder = undefined;
    this.#used = 0;
    this.#dispatches = 0;
    const ops = this.#ops.splice(0);
    try {
      queue.submit([commands]);
    } finally {
      for (const task of this.#afterSubmit.splice(0)) task();
    }
    return ops;
  }

  /** Drops what is recorded without submitting it (the device is gone) and frees the arena. */
  dispose(): void {
    this.#pass = undefined;
    this.#encoder = undefined;
    for (const task of this.#afterSubmit.splice(0)) task();
    this.arena.destroy();
  }
}
