/// <reference types="@webgpu/types" />
/**
 * The WebGPU backend of GpuCompute, through Dawn's npm package `webgpu` (loaded on first use):
 * Apple (Metal), AMD, Intel and NVIDIA GPUs (Vulkan, D3D12), and Mesa's lavapipe in CI.
 *
 * - Memory: the shared caching pool over GPUBuffer segments (`webgpu-memory.ts`), with the pool
 *   limit, stats and trim of the other GPU backends.
 * - Work: dispatches are recorded into one command encoder and submitted in batches
 *   (`command-batch.ts`); pipelines and bind groups are cached per kernel specialisation and
 *   binding layout (`dispatcher.ts`). Every op is a WGSL kernel of `kernels/wgsl/`.
 * - Streams: one queue orders everything; streams exist so code written for CUDA runs unchanged.
 * - Reads: `readAsync` maps a staging buffer without blocking the event loop; `read` (and
 *   `synchronize`) wait by driving Dawn's event processing by hand (`event-pump.ts`).
 * - Faults: Dawn's validation, out-of-memory and internal errors become {@link WebGpuError} (or
 *   the pool's out-of-memory error) for the op under way; after a device loss every call throws
 *   {@link WebGpuDeviceLostError}. Devices still open when the process exits are destroyed first.
 */
import { DisposedError, InvalidArgumentError, OutOfMemoryError, UnsupportedOperationError } from '../../errors.js';
import type { Backend, BackendStream, DeviceInfo, PoolStats } from '../backend/backend.js';
import { composedAttentionBackward } from '../backend/composed/attention-backward.js';
import type { AttentionBackwardParams } from '../core/attention-backward-params.js';
import type { AttentionParams } from '../core/attention-params.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { GruBackwardParams } from '../core/gru-backward-params.js';
import type { GruRecurrenceParams } from '../core/gru-params.js';
import type { Logger } from '../core/logger.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import { resolvePoolLimit } from '../core/pool-limit.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { BackendBuffer, TensorView } from '../core/view.js';
import { AutotuneStore } from '../gpu/autotune.js';
import { MemoryPool, type PoolStrategy } from '../gpu/memory-pool.js';
import type { WebGpuAdapterInfo, WebGpuAdapterOptions } from './adapter.js';
import { batchLabel, CommandBatch } from './command-batch.js';
import type { DawnImporter } from './dawn.js';
import { Dispatcher } from './dispatcher.js';
import { webgpuAttention } from './attention.js';
import * as elementwise from './elementwise.js';
import { GpuTimer } from './gpu-timer.js';
import { webgpuGruRecurrence } from './gru.js';
import { webgpuGruBackwardRecurrence } from './gru-backward.js';
import { webgpuMatmul } from './matmul.js';
import type { WebGpuOpContext, WebGpuScratch } from './op-context.js';
import { dropout, random } from './random.js';
import { Readback } from './readback.js';
import { oneHot } from './one-hot.js';
import { reduce } from './reduce.js';
import { layerNorm, softmax } from './rows.js';
import { transpose } from './transpose.js';
import { WebGpuDevice } from './webgpu-device.js';
import { webgpuDeviceInfo } from './device-info.js';
import { WEBGPU_UNSUPPORTED } from './support.js';
import { WebGpuCapabilityError, WebGpuOutOfMemoryError } from './webgpu-errors.js';
import { WebGpuBuffer, WebGpuSegments, type WebGpuStream } from './webgpu-memory.js';
import { probeSubgroups } from './team.js';
import { writeBytes } from './upload.js';


/** leakyRelu's slope when the caller gives none (as the CPU backend). */
const DEFAULT_ALPHA = 0.01;
/** Default limit of a synchronous wait for the GPU. */
const DEFAULT_SYNC_TIMEOUT_MS = 120_000;

/** Options of {@link createWebGpuBackend}. */
export interface WebGpuBackendOptions extends Omit<WebGpuAdapterOptions, 'importer'> {
  /** Pool limit in bytes; default `GPUCOMPUTE_POOL_LIMIT` or none. */
  poolLimitBytes?: number;
  /** Pool arena strategy; default best-fit. */
  poolStrategy?: PoolStrategy;
  /** Receives debug lines (kernel builds, autotuning) and warnings. */
  logger?: Logger;
  /** Longest synchronous wait (`toArraySync`, `synchronize`) in ms before a timeout error; default 120 000. */
  syncTimeoutMs?: number;
  /** Where the matmul autotuner keeps its choices; default the process-wide store beside the kernel cache. */
  autotuneStore?: AutotuneStore;
  /** Store f16 tensors natively where the adapter has shader-f16 (default true; false packs them in 32-bit words as bf16). */
  shaderF16?: boolean;
  /** Use subgroup operations where the adapter has them (default true; false takes the workgroup-memory paths). */
  subgroups?: boolean;
  /** @internal Replaces `import('webgpu')` (tests of the missing-package error). */
  importer?: DawnImporter;
}

/**
 * Opens the WebGPU backend.
 * @throws WebGpuUnavailableError when the `webgpu` package is missing (the message has the install
 *   command), no adapter answers, or the device is refused; InvalidArgumentError for bad options.
 */
export async function createWebGpuBackend(options: WebGpuBackendOptions = {}): Promise<WebGpuBackend> {
  const limitBytes = resolvePoolLimit(options.poolLimitBytes);
  const timeout = options.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
  if (!(timeout > 0)) throw new InvalidArgumentError(`syncTimeoutMs must be a positive number of ms, got ${String(options.syncTimeoutMs)}`);
  const dev = await WebGpuDevice.open(options);
  try {
    const subgroupSize = options.subgroups === false ? undefined : await probeSubgroups(dev);
    return new WebGpuBackend(dev, {
      subgroupSize,
      nativeF16: options.shaderF16 !== false,
      limitBytes,
      strategy: options.poolStrategy ?? 'best-fit',
      logger: options.logger,
      syncTimeoutMs: timeout,
      ordinal: options.device ?? 0,
      autotune: options.autotuneStore ?? AutotuneStore.shared(),
    });
  } catch (err) {
    dev.destroy();
    throw err;
  }
}

/** The WebGPU implementation of {@link Backend}. */
export class WebGpuBackend implements Backend, WebGpuOpContext {
  readonly kind = 'webgpu' as const;
  readonly unsupported = WEBGPU_UNSUPPORTED;
  readonly dev: WebGpuDevice;
  readonly batch: CommandBatch;
  readonly dispatcher: Dispatcher;
  readonly pool: MemoryPool<WebGpuStream>;
  readonly subgroupSize: number | undefined;
  readonly logger: Logger | undefined;
  readonly timer: GpuTimer | undefined;
  readonly autotune: AutotuneStore;
  readonly deviceKey: string;
  readonly #segments: WebGpuSegments;
  readonly #readback: Readback;
  readonly #streams: WebGpuStream[] = [{ id: 0 }];
  readonly #syncTimeoutMs: number;
  readonly #ordinal: number;
  #current: WebGpuStream;
  #disposed = false;

  /** @internal Use {@link createWebGpuBackend}. */
  constructor(
    dev: WebGpuDevice,
    options: {
      subgroupSize: number | undefined;
      nativeF16: boolean;
      limitBytes: number | undefined;
      strategy: PoolStrategy;
      logger: Logger | undefined;
      syncTimeoutMs: number;
      ordinal: number;
      autotune: AutotuneStore;
    },
  ) {
    this.dev = dev;
    this.logger = options.logger;
    this.#syncTimeoutMs = options.syncTimeoutMs;
    this.#ordinal = options.ordinal;
    this.#current = this.#streams[0]!;
    this.subgroupSize = options.subgroupSize;
    this.batch = new CommandBatch(dev);
    this.dispatcher = new Dispatcher(dev, this.batch, options.nativeF16, options.logger);
    // Errors of a flush made to release memory surface at the next op (release runs inside dispose too).
    this.#segments = new WebGpuSegments(dev, () => this.batch.flush(), (segment) => this.dispatcher.evict(segment));
    this.pool = new MemoryPool<WebGpuStream>(this.#segments, {
      strategy: options.strategy,
      ...(options.limitBytes === undefined ? {} : { limitBytes: options.limitBytes }),
    });
    this.#readback = new Readback(dev, this.batch);
    this.timer = dev.pump.canWait ? new GpuTimer(dev, this.batch, this.#readback, options.syncTimeoutMs) : undefined;
    this.autotune = options.autotune;
    this.deviceKey = `webgpu ${dev.adapterInfo.backendType} ${dev.adapterInfo.description || dev.adapterInfo.device}`;
    this.logger?.debug(
      `webgpu: ${this.deviceKey}; features ${[...dev.features].join(', ') || 'none'}; ` +
        `subgroup shuffles ${this.subgroupSize ?? 'off'}; f16 ${this.dispatcher.nativeF16 ? 'native' : 'packed'}; ` +
        `synchronous waits ${dev.pump.canWait ? 'available' : 'unavailable'}`,
    );
  }

  /** The adapter: vendor, architecture, backend type, features and limits. */
  get adapterInfo(): WebGpuAdapterInfo {
    return this.dev.adapterInfo;
  }

  info(): DeviceInfo {
    this.#begin('info');
    return webgpuDeviceInfo(this.dev.adapterInfo, this.#ordinal, this.dev.features.has('shader-f16'));
  }

  // ------------------------------------------------------------ memory

  alloc(byteLength: number): WebGpuBuffer {
    this.#begin('alloc');
    const limit = this.dev.limits.maxStorageBufferBindingSize;
    if (byteLength > limit) {
      throw new WebGpuCapabilityError('alloc', 'maxStorageBufferBindingSize', `a buffer of ${byteLength} bytes is larger than the ${limit} bytes a kernel can bind`);
    }
    let block;
    try {
      block = this.pool.alloc(byteLength, this.#current);
    } catch (err) {
      const refusal = this.#segments.lastRefusal;
      this.#segments.lastRefusal = undefined;
      if (err instanceof OutOfMemoryError && refusal !== undefined) {
        throw new WebGpuOutOfMemoryError(
          {
            requestedBytes: err.requestedBytes,
            inUseBytes: err.inUseBytes,
            ...(err.limitBytes === undefined ? {} : { limitBytes: err.limitBytes }),
          },
          refusal,
        );
      }
      throw err;
    }
    const { segment, byteOffset } = this.#segments.locate(block);
    return new WebGpuBuffer(this, block, byteLength, segment, byteOffset, this.#current);
  }

  free(buffer: BackendBuffer): void {
    const buf = this.#own(buffer);
    if (this.#disposed) return;
    buf.freed = true;
    this.pool.free(buf.block, buf.lastStream);
  }

  write(dst: BackendBuffer, src: ArrayBufferView, byteOffset = 0): void {
    this.#begin('write');
    const buf = this.#own(dst);
    this.#checkRange(buf, byteOffset, src.byteLength);
    if (src.byteLength === 0) return;
    writeBytes(this, buf, byteOffset, new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
    this.dev.check('write');
  }

  read(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): void {
    this.#begin('read');
    const buf = this.#own(src);
    this.#checkRange(buf, byteOffset, dst.byteLength);
    if (dst.byteLength === 0) return;
    this.#requireWait('toArraySync');
    this.#readback.read('read', buf.segment.buffer, buf.byteOffset + byteOffset, new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength), this.#syncTimeoutMs);
  }

  async readAsync(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): Promise<void> {
    this.#begin('readAsync');
    const buf = this.#own(src);
    this.#checkRange(buf, byteOffset, dst.byteLength);
    if (dst.byteLength === 0) return;
    await this.#readback.readAsync('readAsync', buf.segment.buffer, buf.byteOffset + byteOffset, new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength));
  }

  copy(dst: TensorView, src: TensorView): void {
    this.#begin('copy');
    if (src.size > 0) elementwise.copy(this, dst, src);
  }

  memoryStats(): PoolStats {
    return this.pool.stats();
  }

  trim(): void {
    this.#begin('trim');
    this.pool.trim();
  }

  /** `bytes` of device memory for one op (see {@link WebGpuOpContext.scratch}). */
  scratch(bytes: number): WebGpuScratch {
    const buffer = this.alloc(bytes);
    return {
      view: (dtype, shape, offset = 0) => ({ buffer, dtype, shape, offset, size: shape.reduce((p, d) => p * d, 1) }),
      release: () => this.free(buffer),
    };
  }

  // ------------------------------------------------------------ ops

  fill(out: TensorView, value: number): void {
    this.#begin('fill');
    elementwise.fill(this, out, value);
  }

  random(out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void {
    this.#begin(kind === 'uniform' ? 'rand' : 'randn');
    random(this, out, kind, seed, a, b);
  }

  cast(x: TensorView, out: TensorView): void {
    this.#begin('cast');
    if (x.dtype === out.dtype) elementwise.copy(this, out, x);
    else elementwise.cast(this, x, out);
  }

  unary(op: UnaryOp, x: TensorView, out: TensorView, alpha = DEFAULT_ALPHA): void {
    this.#begin(op);
    elementwise.unary(this, op, x, out, alpha);
  }

  activationGrad(op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha = DEFAULT_ALPHA): void {
    this.#begin(op);
    elementwise.activationGrad(this, op, x, dy, out, alpha);
  }

  binary(op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
    this.#begin(op);
    elementwise.binary(this, op, a, b, out, plan);
  }

  reduce(op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
    this.#begin(op);
    reduce(this, op, x, out, plan);
  }

  softmax(x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
    this.#begin(log ? 'logSoftmax' : 'softmax');
    softmax(this, x, out, rows, cols, log);
  }

  layerNorm(x: TensorView, gamma: TensorView | undefined, beta: TensorView | undefined, out: TensorView, rows: number, cols: number, eps: number): void {
    this.#begin('layerNorm');
    layerNorm(this, x, gamma, beta, out, rows, cols, eps);
  }

  oneHot(indices: TensorView, out: TensorView, _outer: number, classes: number, inner: number): void {
    this.#begin('oneHot');
    oneHot(this, indices, out, classes, inner);
  }

  transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
    this.#begin('transpose');
    transpose(this, x, out, batch, rows, cols);
  }

  dropout(x: TensorView, out: TensorView, p: number, seed: number): void {
    this.#begin('dropout');
    dropout(this, x, out, p, seed);
  }

  matmul(params: MatmulParams): void {
    this.#begin('matmul');
    webgpuMatmul(this, params);
  }

  attention(params: AttentionParams): void {
    this.#begin('attention');
    webgpuAttention(this, params);
  }

  /** Composed from matmul and the core ops, in query blocks (see `backend/composed/attention-backward.ts`). */
  attentionBackward(params: AttentionBackwardParams): void {
    this.#begin('attentionBackward');
    composedAttentionBackward(this, params);
  }

  gruRecurrence(params: GruRecurrenceParams): void {
    this.#begin('gru');
    webgpuGruRecurrence(this, params);
  }

  gruBackwardRecurrence(params: GruBackwardParams): void {
    this.#begin('gruBackward');
    webgpuGruBackwardRecurrence(this, params);
  }

  // ------------------------------------------------------------ sync, streams, lifetime

  /** Submits the recorded work and waits until the device has finished it. */
  synchronize(): void {
    this.#begin('synchronize');
    this.#requireWait('synchronize');
    this.#readback.fence('synchronize', this.#syncTimeoutMs);
  }

  /** Submits the recorded work and resolves once the device has finished it (never blocks the event loop). */
  async synchronizeAsync(): Promise<void> {
    this.#begin('synchronize');
    await this.#readback.fenceAsync('synchronize');
  }

  /** Submits the work recorded so far without waiting for it (the GPU starts while the host goes on). */
  flush(): void {
    this.#begin('flush');
    const ops = this.batch.flush();
    if (ops.length > 0) this.dev.check(batchLabel('flush', ops));
  }

  createStream(): BackendStream {
    this.#begin('createStream');
    const stream = { id: this.#streams.length };
    this.#streams.push(stream);
    return stream;
  }

  setStream(s: BackendStream): void {
    this.#begin('setStream');
    const stream = this.#streams.find((x) => x === s);
    if (!stream) throw new InvalidArgumentError('setStream: the stream was not created by this WebGPU backend');
    this.#current = stream;
  }

  currentStream(): BackendStream {
    return this.#current;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      // Submits what is recorded (the pool's synchronize), then destroys the segments.
      this.pool.dispose();
    } finally {
      this.#segments.dispose();
      this.timer?.dispose();
      this.#readback.dispose();
      this.batch.dispose();
      this.dev.destroy();
    }
  }

  // ------------------------------------------------------------ internals

  /** Refuses work once disposed or lost, and reports what Dawn recorded since the last call. */
  #begin(op: string): void {
    if (this.#disposed) throw new DisposedError('The WebGPU backend');
    this.dev.check(op);
  }

  #requireWait(op: string): void {
    if (!this.dev.pump.canWait) {
      throw new UnsupportedOperationError(op, 'webgpu', 'this build of dawn.node offers no way to wait for the GPU synchronously; use the asynchronous form (await tensor.toArray())');
    }
  }

  #own(buffer: BackendBuffer): WebGpuBuffer {
    if (!(buffer instanceof WebGpuBuffer) || buffer.owner !== this) {
      throw new InvalidArgumentError('the buffer was not allocated by this WebGPU backend');
    }
    if (buffer.freed) throw new DisposedError('The buffer');
    return buffer;
  }

  #checkRange(buf: WebGpuBuffer, byteOffset: number, byteLength: number): void {
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset + byteLength > buf.byteLength) {
      throw new InvalidArgumentError(`copy of ${byteLength} bytes at offset ${byteOffset} does not fit a ${buf.byteLength}-byte buffer`);
    }
  }
}
