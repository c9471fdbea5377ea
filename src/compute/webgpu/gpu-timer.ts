/// <reference types="@webgpu/types" />
/**
 * Timing recorded work on the device, for the matmul autotuner and the benchmark: with
 * timestamp queries at the start and end of one compute pass where the device has
 * 'timestamp-query' (the time the GPU spent, nothing of the host's), else the wall time from a
 * synchronisation before to one after.
 */
import type { CommandBatch } from './command-batch.js';
import type { Readback } from './readback.js';
import type { WebGpuDevice } from './webgpu-device.js';

/** How long some recorded work took, in ms. */
export class GpuTimer {
  readonly #dev: WebGpuDevice;
  readonly #batch: CommandBatch;
  readonly #readback: Readback;
  readonly #timeoutMs: number;
  #queries: { set: GPUQuerySet; resolve: GPUBuffer } | undefined;
  /** Dispatches the last {@link time} recorded. */
  lastDispatches = 0;

  constructor(dev: WebGpuDevice, batch: CommandBatch, readback: Readback, timeoutMs: number) {
    this.#dev = dev;
    this.#batch = batch;
    this.#readback = readback;
    this.#timeoutMs = timeoutMs;
  }

  /** Whether the device's own clock is used (else the host's around synchronisations). */
  get deviceClock(): boolean {
    return this.#dev.features.has('timestamp-query');
  }

  /**
   * Milliseconds for `record` to run on the device (it records dispatches only: they all land in
   * one timed compute pass). Blocks until the device is done.
   * @throws Error when `record` fills a batch (over 1024 dispatches): the pass would end early and
   *   the time cover only part of the work; time fewer at once ({@link lastDispatches} says how many one took).
   */
  time(op: string, record: () => void): number {
    if (!this.deviceClock) return this.timeWall(op, record);
    const queries = this.#ensureQueries();
    // A batch that filled up mid-recording would end the timed pass early: start from an empty one.
    this.#batch.flush();
    this.#batch.timedPass(op, { querySet: queries.set, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 });
    const flushes = this.#batch.flushes;
    record();
    this.lastDispatches = this.#batch.dispatches;
    if (this.#batch.flushes !== flushes) {
      this.#batch.flush();
      throw new Error(`${op}: the timed work filled a batch and was submitted in parts; time fewer dispatches at once`);
    }
    this.#batch.encoder(op).resolveQuerySet(queries.set, 0, 2, queries.resolve, 0);
    const stamps = new BigUint64Array(2);
    this.#readback.read(op, queries.resolve, 0, new Uint8Array(stamps.buffer), this.#timeoutMs);
    return Number(stamps[1]! - stamps[0]!) / 1e6;
  }

  /**
   * Milliseconds of host wall time from a synchronisation before `record` to one after it: for
   * work a compute pass's timestamps do not see (buffer copies), best amortised over many calls.
   */
  timeWall(op: string, record: () => void): number {
    this.#readback.fence(op, this.#timeoutMs);
    const start = performance.now();
    record();
    this.#readback.fence(op, this.#timeoutMs);
    return performance.now() - start;
  }

  dispose(): void {
    this.#queries?.set.destroy();
    this.#queries?.resolve.destroy();
    this.#queries = undefined;
  }

  #ensureQueries(): { set: GPUQuerySet; resolve: GPUBuffer } {
    if (!this.#queries) {
      const { device, globals } = this.#dev;
      this.#queries = {
        set: device.createQuerySet({ type: 'timestamp', count: 2, label: 'gpucompute timer' }),
        resolve: device.createBuffer({ size: 16, usage: globals.GPUBufferUsage.QUERY_RESOLVE | globals.GPUBufferUsage.COPY_SRC, label: 'gpucompute timer' }),
      };
    }
    return this.#queries;
  }
}
