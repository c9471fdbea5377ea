/**
 * The CUDA backend of GpuCompute, on the driver's safe tier: one primary
 * context, a non-blocking default stream, a caching stream-aware memory pool,
 * and the kernels under `kernels/` compiled on first use.
 *
 * Stream ordering: every buffer remembers the stream that used it last. When
 * an op on stream S touches a buffer last used on stream T, S waits for an
 * event recorded on T at that moment (which covers the buffer's last use
 * there); the buffer then belongs to S. Freed buffers return to the pool arena
 * of their last stream, so S may reuse them at once and other streams only
 * once that work is done.
 */
import type { Context } from '../../driver/context.js';
import { Device } from '../../driver/device.js';
import { Event } from '../../driver/event.js';
import { driverGetVersion } from '../../driver/raw/init.js';
import { memcpyDtoDAsync, memcpyDtoHAsync } from '../../driver/raw/memory.js';
import { Stream } from '../../driver/stream.js';
import { DisposedError, InvalidArgumentError } from '../../errors.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { Backend, BackendStream, DeviceInfo, MatmulParams, PoolStats } from '../backend.js';
import { dtypeSize } from '../dtype.js';
import type { Logger } from '../logger.js';
import { MemoryPool, type PoolStrategy } from '../memory-pool.js';
import { resolvePoolLimit } from '../pool-limit.js';
import type { BackendBuffer, TensorView } from '../tensor-view.js';
import type { AttentionParams } from '../attention-op.js';
import { cudaAttention, releaseCudaAttention } from './attention.js';
import type { GruRecurrenceParams } from '../gru-op.js';
import { cudaGruRecurrence, releaseCudaGru } from './gru.js';
import type { DenseLinalg } from '../dense-linalg.js';
import { cudaDenseLinalg, releaseCudaDenseLinalg } from './dense-linalg.js';
import { BlockCounters } from './block-counters.js';
import { CudaBuffer, CudaStream } from './cuda-buffer.js';
import { cudaSegmentMemory } from './device-memory.js';
import type { SegmentMemory } from '../segment-memory.js';
import { copyDeviceToHost, copyHostToDevice, PinnedStaging } from './host-copy.js';
import { KernelRegistry, type RegisteredKernel } from './kernel-registry.js';
import type { ModuleSpec } from './kernel-sources.js';
import { cudaMatmul, releaseCudaMatmul } from './matmul.js';
import type { CudaOpContext, Scratch } from './op-context.js';
import { PortableOpsBackend } from './portable-ops-backend.js';

/** Options of {@link createCudaBackend}. */
export interface CudaBackendOptions {
  /** Device ordinal; default 0. */
  device?: number;
  /** Pool limit in bytes; default `GPUCOMPUTE_POOL_LIMIT` or none. */
  poolLimitBytes?: number;
  /** Pool arena strategy; default best-fit (see `PoolStrategy`). */
  poolStrategy?: PoolStrategy;
  /** Receives debug lines (kernel compiles) and warnings. */
  logger?: Logger;
}

/**
 * Opens the CUDA backend on a device.
 * @throws LibraryNotFoundError without a CUDA driver, CudaError when the
 *   driver refuses, InvalidArgumentError for a device ordinal that does not exist.
 */
export function createCudaBackend(options: CudaBackendOptions = {}): CudaBackend {
  const ordinal = options.device ?? 0;
  const device = Device.get(ordinal);
  const context = device.primaryContext();
  try {
    return new CudaBackend(device, context, {
      limitBytes: resolvePoolLimit(options.poolLimitBytes),
      strategy: options.poolStrategy ?? 'best-fit',
      logger: options.logger,
    });
  } catch (err) {
    context.dispose();
    throw err;
  }
}

/** The CUDA implementation of {@link Backend}; also the context the op launchers and matmul work in. */
export class CudaBackend extends PortableOpsBackend<Stream> implements Backend, CudaOpContext {
  readonly kind = 'cuda' as const;
  readonly device: Device;
  readonly context: Context;
  readonly registry: KernelRegistry;
  readonly pool: MemoryPool<CudaStream>;
  readonly multiprocessorCount: number;
  readonly warpSize: number;
  readonly clusterLaunch: boolean;
  readonly logger: Logger | undefined;
  readonly #memory: SegmentMemory<CudaStream>;
  readonly #staging: PinnedStaging;
  readonly #counters: BlockCounters;
  readonly #streams: CudaStream[] = [];
  #current: CudaStream;
  #disposed = false;

  /** @internal Use {@link createCudaBackend}. */
  constructor(
    device: Device,
    context: Context,
    options: { limitBytes: number | undefined; strategy: PoolStrategy; logger: Logger | undefined },
  ) {
    super();
    this.device = device;
    this.context = context;
    this.logger = options.logger;
    this.multiprocessorCount = device.multiprocessorCount;
    this.warpSize = device.warpSize;
    this.clusterLaunch = device.clusterLaunch;
    this.registry = new KernelRegistry(context, options.logger ? { logger: options.logger } : {});
    this.#memory = cudaSegmentMemory(context);
    this.pool = new MemoryPool<CudaStream>(this.#memory, {
      strategy: options.strategy,
      ...(options.limitBytes === undefined ? {} : { limitBytes: options.limitBytes }),
    });
    this.#staging = new PinnedStaging(context);
    this.#counters = new BlockCounters(context);
    this.#current = this.#newStream();
  }

  info(): DeviceInfo {
    this.#check();
    const { major, minor } = this.device.computeCapability;
    const driver = driverGetVersion();
    const { free, total } = this.context.memoryInfo();
    return {
      backend: 'cuda',
      platform: `CUDA ${Math.floor(driver / 1000)}.${Math.floor((driver % 1000) / 10)} (driver API)`,
      deviceName: this.device.name,
      ordinal: this.device.ordinal,
      computeCapability: `${major}.${minor}`,
      arch: this.device.arch,
      totalMemory: total,
      freeMemory: free,
      multiprocessorCount: this.multiprocessorCount,
      tensorCores: this.device.supportsTensorCores,
      fp16: this.device.supportsFp16,
      bf16: this.device.supportsBf16,
    };
  }

  // ------------------------------------------------------------ memory

  alloc(byteLength: number): CudaBuffer {
    this.#check();
    const block = this.pool.alloc(byteLength, this.#current);
    return new CudaBuffer(block, byteLength, this.#current);
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
    const stream = this.#use(buf);
    copyHostToDevice(stream, buf.address + BigInt(byteOffset), src);
  }

  read(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): void {
    const buf = this.#buffer(src);
    this.#checkRange(buf, byteOffset, dst.byteLength);
    const stream = this.#use(buf);
    copyDeviceToHost(stream, dst, buf.address + BigInt(byteOffset));
  }

  async readAsync(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): Promise<void> {
    const buf = this.#buffer(src);
    const bytes = dst.byteLength;
    this.#checkRange(buf, byteOffset, bytes);
    if (bytes === 0) return;
    const stream = this.#use(buf);
    const staging = this.#staging.acquire(bytes);
    try {
      memcpyDtoHAsync(staging.address, buf.address + BigInt(byteOffset), bytes, stream.handle);
      await stream.synchronizeAsync();
      new Uint8Array(dst.buffer, dst.byteOffset, bytes).set(staging.bytes.subarray(0, bytes));
    } finally {
      this.#staging.release(staging);
    }
  }

  copy(dst: TensorView, src: TensorView): void {
    const stream = this.enqueue(dst, src);
    const bytes = src.size * dtypeSize[src.dtype];
    if (bytes === 0) return;
    this.context.makeCurrent();
    memcpyDtoDAsync(this.address(dst), this.address(src), bytes, stream.handle);
  }

  memoryStats(): PoolStats {
    return this.pool.stats();
  }

  trim(): void {
    this.#check();
    this.pool.trim();
  }

  // ------------------------------------------------------------ ops (the portable ones: PortableOpsBackend)

  matmul(params: MatmulParams): void {
    this.#check();
    cudaMatmul(this, params);
  }

  attention(params: AttentionParams): void {
    this.#check();
    cudaAttention(this, params);
  }

  denseLinalg(): DenseLinalg | undefined {
    this.#check();
    return cudaDenseLinalg(this);
  }

  gruRecurrence(params: GruRecurrenceParams): void {
    this.#check();
    cudaGruRecurrence(this, params);
  }

  // ------------------------------------------------------------ streams

  synchronize(): void {
    this.#check();
    this.context.synchronize();
  }

  createStream(): BackendStream {
    this.#check();
    return this.#newStream();
  }

  setStream(s: BackendStream): void {
    this.#check();
    if (!(s instanceof CudaStream) || !this.#streams.includes(s)) {
      throw new InvalidArgumentError('setStream: the stream was not created by this CUDA backend');
    }
    this.#current = s;
  }

  currentStream(): BackendStream {
    return this.#current;
  }

  /** The driver stream work is queued on now. */
  get stream(): Stream {
    return this.#current.stream;
  }

  dispose(): void {
    if (this.#disposed) return;
    try {
      if (!this.context.unusable) this.context.synchronize();
    } finally {
      this.#disposed = true;
      this.pool.dispose();
      this.#memory.dispose();
      this.#staging.dispose();
      this.#counters.dispose();
      // cuBLAS handle and sm_90a modules belong to the context: release them before it goes.
      releaseCudaMatmul(this);
      releaseCudaAttention(this);
      releaseCudaGru(this);
      releaseCudaDenseLinalg(this);
      this.registry.dispose();
      for (const s of this.#streams) {
        s.marker?.dispose();
        s.stream.dispose();
      }
      this.#streams.length = 0;
      this.context.dispose();
    }
  }

  // ------------------------------------------------------------ CudaOpContext

  enqueue(...views: (TensorView | undefined)[]): Stream {
    this.#check();
    const current = this.#current;
    for (const view of views) {
      if (view === undefined) continue;
      const buf = view.buffer as CudaBuffer;
      if (buf.lastStream !== current) this.#handOver(buf, current);
    }
    return current.stream;
  }

  address(view: TensorView): bigint {
    const base = (view.buffer as CudaBuffer).address;
    return view.offset === 0 ? base : base + BigInt(view.offset * dtypeSize[view.dtype]);
  }

  scratch(bytes: number): Scratch {
    const stream = this.#current;
    const block = this.pool.alloc(bytes, stream);
    return { address: block.address, release: () => this.pool.free(block, stream) };
  }

  blockCounter(): bigint {
    return this.#counters.address(this.#current.id);
  }

  kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): RegisteredKernel {
    return this.registry.cached(key) ?? this.registry.get(spec(), name, signature, key);
  }

  // ------------------------------------------------------------ internals

  #newStream(): CudaStream {
    const s = new CudaStream(this.#streams.length, Stream.create(this.context, { nonBlocking: true }));
    this.#streams.push(s);
    return s;
  }

  /** Orders `buf` onto `to`: `to` waits for everything queued so far on the buffer's last stream. */
  #handOver(buf: CudaBuffer, to: CudaStream): void {
    const from = buf.lastStream;
    from.marker ??= Event.create(this.context, { timing: false });
    from.marker.record(from.stream);
    to.stream.waitEvent(from.marker);
    buf.lastStream = to;
  }

  /** Orders a whole buffer onto the current stream, for copies. */
  #use(buf: CudaBuffer): Stream {
    this.#check();
    if (buf.lastStream !== this.#current) this.#handOver(buf, this.#current);
    this.context.makeCurrent();
    return this.#current.stream;
  }

  #buffer(buffer: BackendBuffer): CudaBuffer {
    if (!(buffer instanceof CudaBuffer)) throw new InvalidArgumentError('the buffer was not allocated by the CUDA backend');
    if (buffer.freed) throw new DisposedError('The buffer');
    return buffer;
  }

  #checkRange(buf: CudaBuffer, byteOffset: number, byteLength: number): void {
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset + byteLength > buf.byteLength) {
      throw new InvalidArgumentError(
        `copy of ${byteLength} bytes at offset ${byteOffset} does not fit a ${buf.byteLength}-byte buffer`,
      );
    }
  }

  #check(): void {
    if (this.#disposed) throw new DisposedError('The CUDA backend');
  }
}
