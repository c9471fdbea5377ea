/**
 * The HIP backend of GpuCompute (AMD GPUs): one device, non-blocking streams,
 * the same caching stream-aware memory pool and stream-ordering rules as the
 * CUDA backend, and the portable kernels of `kernels/` compiled by hiprtc for
 * the device's target and wavefront size. Ops run through the same launchers
 * as on CUDA; ops whose kernels are CUDA-only throw UnsupportedOperationError.
 *
 * Not yet run on an AMD GPU: its compile path is tested in CI (hiprtc for
 * gfx90a and gfx1030), its launch path only by sharing the CUDA launchers.
 */
import { DisposedError, InvalidArgumentError, UnsupportedOperationError } from '../../errors.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import { HipDeviceBuffer } from '../../hip/device-buffer.js';
import { HipDevice } from '../../hip/device.js';
import { HipEvent } from '../../hip/event.js';
import { HipPinnedBuffer } from '../../hip/pinned-buffer.js';
import { memcpyDtoDAsync, memcpyDtoHAsync, memcpyHtoDAsync } from '../../hip/raw/memory.js';
import { HipStream } from '../../hip/stream.js';
import type { AttentionParams, Backend, BackendStream, DeviceInfo, GruRecurrenceParams, MatmulParams, PoolStats } from '../backend.js';
import type { ModuleSpec } from '../cuda/kernel-sources.js';
import type { OpKernel, Scratch } from '../cuda/op-context.js';
import { PortableOpsBackend } from '../cuda/portable-ops-backend.js';
import { dtypeSize } from '../dtype.js';
import type { Logger } from '../logger.js';
import { MemoryPool } from '../memory-pool.js';
import { resolvePoolLimit } from '../pool-limit.js';
import type { BackendBuffer, TensorView } from '../tensor-view.js';
import { HipBackendStream, HipBuffer } from './hip-buffer.js';
import { hipSegmentMemory } from './hip-device-memory.js';
import type { SegmentMemory } from '../segment-memory.js';
import { hipDeviceInfo } from './hip-device-info.js';
import { HipKernelRegistry } from './hip-kernel-registry.js';

/** Options of {@link createHipBackend}. */
export interface HipBackendOptions {
  device?: number;
  poolLimitBytes?: number;
  logger?: Logger;
}

/** Counters per block-counter page (one u32 per stream, zero between kernels). */
const COUNTERS = 1024;

/**
 * Opens the HIP backend on a device.
 * @throws LibraryNotFoundError without a HIP runtime, HipError when it refuses,
 *   InvalidArgumentError for a device ordinal that does not exist.
 */
export function createHipBackend(options: HipBackendOptions = {}): HipBackend {
  return new HipBackend(HipDevice.get(options.device ?? 0), resolvePoolLimit(options.poolLimitBytes), options.logger);
}

/** The HIP implementation of {@link Backend}, and the op context of the shared launchers. */
export class HipBackend extends PortableOpsBackend<HipStream> implements Backend {
  readonly kind = 'hip' as const;
  readonly device: HipDevice;
  readonly multiprocessorCount: number;
  readonly warpSize: number;
  /** HIP has no thread-block clusters. */
  readonly clusterLaunch = false;
  readonly pool: MemoryPool<HipBackendStream>;
  readonly #registry: HipKernelRegistry;
  readonly #memory: SegmentMemory<HipBackendStream>;
  readonly #counters: HipDeviceBuffer;
  readonly #streams: HipBackendStream[] = [];
  #current: HipBackendStream;
  #disposed = false;

  /** @internal Use {@link createHipBackend}. */
  constructor(device: HipDevice, limitBytes: number | undefined, logger: Logger | undefined) {
    super();
    this.device = device;
    this.multiprocessorCount = device.multiprocessorCount;
    this.warpSize = device.warpSize;
    this.#registry = new HipKernelRegistry(device, logger);
    this.#memory = hipSegmentMemory(device);
    this.pool = new MemoryPool<HipBackendStream>(this.#memory, { strategy: 'best-fit', ...(limitBytes === undefined ? {} : { limitBytes }) });
    this.#current = this.#newStream();
    this.#counters = HipDeviceBuffer.alloc(device, COUNTERS * 4);
    this.#counters.copyFrom(new Uint32Array(COUNTERS));
  }

  info(): DeviceInfo {
    this.#check();
    return hipDeviceInfo(this.device);
  }

  // ------------------------------------------------------------ memory

  alloc(byteLength: number): HipBuffer {
    this.#check();
    return new HipBuffer(this.pool.alloc(byteLength, this.#current), byteLength, this.#current);
  }

  free(buffer: BackendBuffer): void {
    const buf = this.#buffer(buffer);
    if (buf.freed || this.#disposed) return;
    buf.freed = true;
    this.pool.free(buf.block, buf.lastStream);
  }

  write(dst: BackendBuffer, src: ArrayBufferView, byteOffset = 0): void {
    const buf = this.#buffer(dst);
    this.#checkRange(buf, byteOffset, src.byteLength);
    if (src.byteLength === 0) return;
    const stream = this.#use(buf);
    memcpyHtoDAsync(buf.address + BigInt(byteOffset), src, src.byteLength, stream.handle);
    // HIP may read pageable memory after the call returns: wait, as the caller may reuse `src` at once.
    stream.synchronize();
  }

  read(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): void {
    const buf = this.#buffer(src);
    this.#checkRange(buf, byteOffset, dst.byteLength);
    if (dst.byteLength === 0) return;
    const stream = this.#use(buf);
    memcpyDtoHAsync(dst, buf.address + BigInt(byteOffset), dst.byteLength, stream.handle);
    stream.synchronize();
  }

  async readAsync(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): Promise<void> {
    const buf = this.#buffer(src);
    const bytes = dst.byteLength;
    this.#checkRange(buf, byteOffset, bytes);
    if (bytes === 0) return;
    const stream = this.#use(buf);
    const staging = HipPinnedBuffer.alloc(this.device, bytes);
    try {
      memcpyDtoHAsync(staging.address, buf.address + BigInt(byteOffset), bytes, stream.handle);
      await stream.synchronizeAsync();
      new Uint8Array(dst.buffer, dst.byteOffset, bytes).set(staging.bytes);
    } finally {
      staging.dispose();
    }
  }

  copy(dst: TensorView, src: TensorView): void {
    const stream = this.enqueue(dst, src);
    const bytes = src.size * dtypeSize[src.dtype];
    if (bytes > 0) memcpyDtoDAsync(this.address(dst), this.address(src), bytes, stream.handle);
  }

  memoryStats(): PoolStats {
    return this.pool.stats();
  }

  trim(): void {
    this.#check();
    this.pool.trim();
  }

  // ------------------------------------------------------------ ops with CUDA-only kernels

  matmul(_params: MatmulParams): void {
    throw new UnsupportedOperationError('matmul', 'hip', 'its kernels use NVIDIA tensor-core instructions (mma.sync, wgmma) or cuBLAS');
  }

  attention(_params: AttentionParams): void {
    throw new UnsupportedOperationError('attention', 'hip', 'its kernels use NVIDIA-only instructions (mma.sync, cp.async)');
  }

  gruRecurrence(_params: GruRecurrenceParams): void {
    throw new UnsupportedOperationError('gru', 'hip', 'its recurrence runs on matmul and CUDA-only kernels');
  }

  // ------------------------------------------------------------ streams

  synchronize(): void {
    this.#check();
    this.device.synchronize();
  }

  createStream(): BackendStream {
    this.#check();
    return this.#newStream();
  }

  setStream(s: BackendStream): void {
    this.#check();
    if (!(s instanceof HipBackendStream) || !this.#streams.includes(s)) {
      throw new InvalidArgumentError('setStream: the stream was not created by this HIP backend');
    }
    this.#current = s;
  }

  currentStream(): BackendStream {
    return this.#current;
  }

  dispose(): void {
    if (this.#disposed) return;
    try {
      this.device.synchronize();
    } finally {
      this.#disposed = true;
      this.pool.dispose();
      this.#memory.dispose();
      this.#counters.dispose();
      this.#registry.dispose();
      for (const s of this.#streams) {
        s.marker?.dispose();
        s.stream.dispose();
      }
      this.#streams.length = 0;
    }
  }

  // ------------------------------------------------------------ OpContext

  enqueue(...views: (TensorView | undefined)[]): HipStream {
    this.#check();
    const current = this.#current;
    for (const view of views) {
      if (view === undefined) continue;
      const buf = view.buffer as HipBuffer;
      if (buf.lastStream !== current) this.#handOver(buf, current);
    }
    this.device.makeCurrent();
    return current.stream;
  }

  address(view: TensorView): bigint {
    const base = (view.buffer as HipBuffer).address;
    return view.offset === 0 ? base : base + BigInt(view.offset * dtypeSize[view.dtype]);
  }

  scratch(bytes: number): Scratch {
    const stream = this.#current;
    const block = this.pool.alloc(bytes, stream);
    return { address: block.address, release: () => this.pool.free(block, stream) };
  }

  blockCounter(): bigint {
    const id = this.#current.id;
    if (id >= COUNTERS) throw new InvalidArgumentError(`the HIP backend keeps block counters for ${COUNTERS} streams`);
    return this.#counters.ptr + BigInt(id * 4);
  }

  kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): OpKernel<HipStream> {
    return this.#registry.get(key, spec, name, signature);
  }

  // ------------------------------------------------------------ internals

  #newStream(): HipBackendStream {
    const s = new HipBackendStream(this.#streams.length, HipStream.create(this.device, { nonBlocking: true }));
    this.#streams.push(s);
    return s;
  }

  /** `to` waits for everything queued so far on the buffer's last stream. */
  #handOver(buf: HipBuffer, to: HipBackendStream): void {
    const from = buf.lastStream;
    from.marker ??= HipEvent.create(this.device, { timing: false });
    from.marker.record(from.stream);
    to.stream.waitEvent(from.marker);
    buf.lastStream = to;
  }

  #use(buf: HipBuffer): HipStream {
    this.#check();
    if (buf.lastStream !== this.#current) this.#handOver(buf, this.#current);
    this.device.makeCurrent();
    return this.#current.stream;
  }

  #buffer(buffer: BackendBuffer): HipBuffer {
    if (!(buffer instanceof HipBuffer)) throw new InvalidArgumentError('the buffer was not allocated by the HIP backend');
    if (buffer.freed) throw new DisposedError('The buffer');
    return buffer;
  }

  #checkRange(buf: HipBuffer, byteOffset: number, byteLength: number): void {
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset + byteLength > buf.byteLength) {
      throw new InvalidArgumentError(`copy of ${byteLength} bytes at offset ${byteOffset} does not fit a ${buf.byteLength}-byte buffer`);
    }
  }

  #check(): void {
    if (this.#disposed) throw new DisposedError('The HIP backend');
  }
}
