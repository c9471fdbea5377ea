/**
 * The CPU backend: every op in plain TypeScript over ArrayBuffers, with the
 * same meaning as the GPU backends (f16/bf16 computed in f32 and rounded on
 * store, the same Philox stream), so it is both the fallback on machines
 * without a GPU and the reference the GPU results are checked against.
 * Calls run synchronously; streams exist so code written for the GPU runs unchanged.
 */
import { constants as bufferConstants } from 'node:buffer';
import { availableParallelism, cpus, freemem, totalmem } from 'node:os';
import { InvalidArgumentError, OutOfMemoryError } from '../../errors.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { Backend, BackendStream, DeviceInfo, PoolStats } from '../backend/backend.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { BackendBuffer, TensorView } from '../core/view.js';
import type { AttentionParams } from '../core/attention-params.js';
import { attention } from './attention.js';
import type { GruRecurrenceParams } from '../core/gru-params.js';
import { gruRecurrence } from './gru.js';
import { Blas } from '../../blas/blas.js';
import type { Logger } from '../core/logger.js';
import { blasEnabled, blasMatmul } from './blas-matmul.js';
import { CpuBuffer } from './cpu-buffer.js';
import { CPU_UNSUPPORTED } from './support.js';
import { cpuBuffer } from './element-io.js';
import * as elementwise from './elementwise.js';
import { layerNorm } from './layer-norm.js';
import { cpuMatmul, type HostMatmulIO } from './matmul.js';
import { dropout, random } from './random.js';
import { reduce } from './reduce.js';
import { softmax } from './softmax.js';
import { transpose } from './transpose.js';

/** Options of {@link CpuBackend}. */
export interface CpuBackendOptions {
  /** Refuse allocations that would take the bytes in use above this. */
  poolLimitBytes?: number;
  /** Receives a debug line saying which engine runs the products (the BLAS found, or why none). */
  logger?: Logger;
}

/** Storage of a view as the CPU matmul wants it: f32 values, or 16-bit patterns. */
const matmulIO: HostMatmulIO = {
  elements(view) {
    const buf = cpuBuffer(view);
    const end = view.offset + view.size;
    switch (view.dtype) {
      case 'f32':
        return buf.f32.subarray(view.offset, end);
      case 'i32':
        return buf.i32.subarray(view.offset, end);
      case 'f16':
      case 'bf16':
        return buf.u16.subarray(view.offset, end);
    }
  },
};

/** The host as a device: its CPU model, logical cores and memory. */
export function cpuDeviceInfo(): DeviceInfo {
  const cores = cpus();
  return {
    backend: 'cpu',
    platform: `CPU (${process.platform} ${process.arch}, Node ${process.versions.node})`,
    deviceName: cores[0]?.model.trim() || `${process.arch} CPU`,
    ordinal: 0,
    totalMemory: totalmem(),
    freeMemory: freemem(),
    multiprocessorCount: availableParallelism(),
    tensorCores: false,
    // f16/bf16 tensors work, but the CPU computes them in f32: no native arithmetic.
    fp16: false,
    bf16: false,
  };
}

/** The BLAS for the products, or undefined (logged at debug: switched off, or none found). */
function openBlasEngine(logger: Logger | undefined): Blas | undefined {
  if (!blasEnabled()) {
    logger?.debug('cpu: GPUCOMPUTE_BLAS=0, products on the built-in kernels');
    return undefined;
  }
  try {
    const blas = Blas.open();
    logger?.debug(`cpu: products through ${blas.vendor} (${blas.path}, ${blas.threads ?? '?'} threads)`);
    return blas;
  } catch (err) {
    logger?.debug(`cpu: no BLAS, products on the built-in kernels (${err instanceof Error ? err.message.replace(/\s*\n\s*/g, ' ') : String(err)})`);
    return undefined;
  }
}

export class CpuBackend implements Backend {
  readonly kind = 'cpu' as const;
  readonly unsupported = CPU_UNSUPPORTED;
  private readonly limitBytes: number | undefined;
  private inUseBytes = 0;
  private peakBytes = 0;
  private liveAllocations = 0;
  private nextStreamId = 1;
  private stream: BackendStream = { id: 0 };
  /** The streams this backend made (and its default one): setStream takes no other. */
  private readonly streams = new WeakSet<BackendStream>([this.stream]);

  /** The machine's BLAS, which runs the products; undefined without one (or with GPUCOMPUTE_BLAS=0). */
  readonly #blas: Blas | undefined;

  constructor(options: CpuBackendOptions = {}) {
    this.limitBytes = options.poolLimitBytes;
    this.#blas = openBlasEngine(options.logger);
  }

  info(): DeviceInfo {
    return cpuDeviceInfo();
  }

  alloc(byteLength: number): BackendBuffer {
    if (this.limitBytes !== undefined && this.inUseBytes + byteLength > this.limitBytes) throw this.outOfMemory(byteLength, this.limitBytes);
    // One buffer is one Uint8Array, so the engine's typed-array limit (2^32 bytes on Node 20) caps it.
    if (byteLength > bufferConstants.MAX_LENGTH) throw this.outOfMemory(byteLength, bufferConstants.MAX_LENGTH);
    let buffer: CpuBuffer;
    try {
      buffer = new CpuBuffer(byteLength);
    } catch (err) {
      // The engine could not reserve the memory ("Array buffer allocation failed").
      if (err instanceof RangeError) throw this.outOfMemory(byteLength, this.limitBytes);
      throw err;
    }
    this.inUseBytes += byteLength;
    this.peakBytes = Math.max(this.peakBytes, this.inUseBytes);
    this.liveAllocations++;
    return buffer;
  }

  private outOfMemory(requestedBytes: number, limitBytes: number | undefined): OutOfMemoryError {
    return new OutOfMemoryError({
      requestedBytes,
      inUseBytes: this.inUseBytes,
      ...(limitBytes === undefined ? {} : { limitBytes }),
      deviceFreeBytes: freemem(),
      deviceTotalBytes: totalmem(),
    });
  }

  free(buffer: BackendBuffer): void {
    this.inUseBytes -= buffer.byteLength;
    this.liveAllocations--;
  }

  write(dst: BackendBuffer, src: ArrayBufferView, byteOffset = 0): void {
    (dst as CpuBuffer).bytes.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), byteOffset);
  }

  read(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): void {
    const from = (src as CpuBuffer).bytes.subarray(byteOffset, byteOffset + dst.byteLength);
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(from);
  }

  async readAsync(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): Promise<void> {
    // Work is already done when a CPU call returns; only the copy is left.
    this.read(src, dst, byteOffset);
  }

  copy(dst: TensorView, src: TensorView): void {
    elementwise.copy(dst, src);
  }

  fill(out: TensorView, value: number): void {
    elementwise.fill(out, value);
  }

  random(out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void {
    random(out, kind, seed, a, b);
  }

  cast(x: TensorView, out: TensorView): void {
    elementwise.cast(x, out);
  }

  unary(op: UnaryOp, x: TensorView, out: TensorView, alpha?: number): void {
    elementwise.unary(op, x, out, alpha);
  }

  activationGrad(op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha?: number): void {
    elementwise.activationGrad(op, x, dy, out, alpha);
  }

  binary(op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
    elementwise.binary(op, a, b, out, plan);
  }

  reduce(op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
    reduce(op, x, out, plan);
  }

  softmax(x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
    softmax(x, out, rows, cols, log);
  }

  layerNorm(
    x: TensorView,
    gamma: TensorView | undefined,
    beta: TensorView | undefined,
    out: TensorView,
    rows: number,
    cols: number,
    eps: number,
  ): void {
    layerNorm(x, gamma, beta, out, rows, cols, eps);
  }

  transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
    transpose(x, out, batch, rows, cols);
  }

  dropout(x: TensorView, out: TensorView, p: number, seed: number): void {
    dropout(x, out, p, seed);
  }

  matmul(params: MatmulParams): void {
    if (this.#blas) blasMatmul(this.#blas, params);
    else cpuMatmul(params, matmulIO);
  }

  attention(params: AttentionParams): void {
    attention(params);
  }

  gruRecurrence(params: GruRecurrenceParams): void {
    gruRecurrence(params, (product) => this.matmul(product));
  }

  synchronize(): void {
    // Every CPU call completes before it returns: nothing is ever pending.
  }

  createStream(): BackendStream {
    const stream = { id: this.nextStreamId++ };
    this.streams.add(stream);
    return stream;
  }

  setStream(s: BackendStream): void {
    if (typeof s !== 'object' || s === null || !this.streams.has(s)) {
      throw new InvalidArgumentError(`setStream: the cpu backend did not create this stream (${s === null ? 'null' : typeof s === 'object' ? `id ${String(s.id)}` : typeof s}); pass one from createStream()`);
    }
    this.stream = s;
  }

  currentStream(): BackendStream {
    return this.stream;
  }

  memoryStats(): PoolStats {
    return {
      inUseBytes: this.inUseBytes,
      // Freed ArrayBuffers go back to the JS heap, so the CPU backend never caches.
      cachedBytes: 0,
      peakBytes: this.peakBytes,
      allocations: this.liveAllocations,
      ...(this.limitBytes !== undefined ? { limitBytes: this.limitBytes } : {}),
    };
  }

  trim(): void {
    // Nothing is cached (see memoryStats), so there is nothing to release.
  }

  dispose(): void {
    this.inUseBytes = 0;
    this.liveAllocations = 0;
  }
}
