/// <reference types="@webgpu/types" />
/**
 * Device → host reads: a copy into a mappable staging buffer is recorded at the end of the batch,
 * the batch is submitted, and the staging buffer is mapped. `read` waits for the map by driving
 * Dawn's events by hand (see `event-pump.ts`); `readAsync` awaits it, raced against a device
 * loss (a map pending on a destroyed device never settles). Staging buffers are kept by size
 * class for reuse. Copies move whole 4-byte words, so a 16-bit view at an odd element is read
 * from the word before it and trimmed on the host.
 */
import { batchLabel, type CommandBatch } from './command-batch.js';
import type { WebGpuDevice } from './webgpu-device.js';
import { WebGpuDeviceLostError, WebGpuError, WebGpuTimeoutError } from './webgpu-errors.js';

/** Smallest staging buffer. */
const MIN_STAGING = 256;
/** Staging buffers kept per size class. */
const KEEP_PER_CLASS = 2;

/** One recorded read: the staging buffer, and where the asked-for bytes start in it. */
interface PendingRead {
  readonly staging: GPUBuffer;
  readonly skip: number;
}

/** Reads device memory back to the host. */
export class Readback {
  readonly #dev: WebGpuDevice;
  readonly #batch: CommandBatch;
  readonly #free = new Map<number, GPUBuffer[]>();
  /** Four bytes to copy at the end of a batch: once they are mapped, the batch has run. */
  readonly #fenceSource: GPUBuffer;

  constructor(dev: WebGpuDevice, batch: CommandBatch) {
    this.#dev = dev;
    this.#batch = batch;
    const { GPUBufferUsage } = dev.globals;
    this.#fenceSource = dev.device.createBuffer({ size: 4, usage: GPUBufferUsage.COPY_SRC, label: 'gpucompute fence' });
  }

  /**
   * Copies `dst.byteLength` bytes at `byteOffset` of `source` to `dst`, waiting (blocking the
   * thread) until the device has them. The caller checks first that the pump can wait.
   */
  read(op: string, source: GPUBuffer, byteOffset: number, dst: Uint8Array, timeoutMs: number): void {
    const pending = this.#record(op, source, byteOffset, dst.byteLength);
    const { staging } = pending;
    const mapping = this.#dev.pump.capture(() => staging.mapAsync(this.#dev.globals.GPUMapMode.READ));
    mapping.catch(() => {});
    const done = this.#dev.pump.waitUntil(() => staging.mapState !== 'pending', timeoutMs);
    if (!done) {
      // The map stays pending: the buffer cannot be reused.
      staging.destroy();
      throw new WebGpuTimeoutError(op, timeoutMs);
    }
    this.#finish(op, pending, dst);
  }

  /** As {@link read}, without blocking the event loop. */
  async readAsync(op: string, source: GPUBuffer, byteOffset: number, dst: Uint8Array): Promise<void> {
    const pending = this.#record(op, source, byteOffset, dst.byteLength);
    const { staging } = pending;
    const mapping = this.#dev.pump.capture(() => staging.mapAsync(this.#dev.globals.GPUMapMode.READ));
    const lost = this.#dev.lostPromise.then((loss) => {
      throw new WebGpuDeviceLostError(op, loss.reason, loss.message);
    });
    try {
      await Promise.race([mapping, lost]);
    } catch (err) {
      mapping.catch(() => {});
      staging.destroy();
      this.#dev.check(op);
      if (err instanceof WebGpuDeviceLostError) throw err;
      throw new WebGpuError(op, 'unknown', `mapping the read-back buffer failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      lost.catch(() => {});
    }
    this.#finish(op, pending, dst);
  }

  /** Submits the recorded work and waits (blocking) until the device has run it. */
  fence(op: string, timeoutMs: number): void {
    this.read(op, this.#fenceSource, 0, new Uint8Array(4), timeoutMs);
  }

  /** Submits the recorded work and resolves once the device has run it. */
  fenceAsync(op: string): Promise<void> {
    return this.readAsync(op, this.#fenceSource, 0, new Uint8Array(4));
  }

  /** Destroys the kept staging buffers. */
  dispose(): void {
    this.#fenceSource.destroy();
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
  }

  /** Records the copy into a staging buffer and submits the batch. */
  #record(op: string, source: GPUBuffer, byteOffset: number, length: number): PendingRead {
    const start = byteOffset & ~3;
    const size = Math.ceil((byteOffset + length) / 4) * 4 - start;
    const staging = this.#acquire(size);
    this.#batch.encoder(op).copyBufferToBuffer(source, start, staging, 0, size);
    const ops = this.#batch.flush();
    this.#dev.check(batchLabel(op, ops));
    return { staging, skip: byteOffset - start };
  }

  #finish(op: string, pending: PendingRead, dst: Uint8Array): void {
    const { staging, skip } = pending;
    if (staging.mapState !== 'mapped') {
      staging.destroy();
      this.#dev.check(op);
      throw new WebGpuError(op, 'unknown', 'the read-back buffer could not be mapped');
    }
    dst.set(new Uint8Array(staging.getMappedRange(), skip, dst.byteLength));
    staging.unmap();
    this.#release(staging);
  }

  #acquire(bytes: number): GPUBuffer {
    // Size classes (powers of two) up to 64 MiB; larger reads get a buffer of their own size.
    const size = bytes > 2 ** 26 ? bytes : Math.max(MIN_STAGING, 2 ** Math.ceil(Math.log2(bytes)));
    const kept = this.#free.get(size)?.pop();
    if (kept) return kept;
    const { GPUBufferUsage } = this.#dev.globals;
    return this.#dev.device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'gpucompute read-back' });
  }

  #release(staging: GPUBuffer): void {
    let list = this.#free.get(staging.size);
    if (!list) this.#free.set(staging.size, (list = []));
    if (list.length < KEEP_PER_CLASS) list.push(staging);
    else staging.destroy();
  }
}
