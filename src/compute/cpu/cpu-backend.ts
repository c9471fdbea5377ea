/**
 * The CPU backend: tensors live in the shared linear memory of the WebAssembly SIMD kernels
 * (`simd/`), where every op runs on those kernels, split across worker threads above measured
 * sizes; products go through the machine's BLAS where one is found. Tensors that do not fit
 * there (past 4 GiB) run on the plain TypeScript loops of this folder, which give every op the
 * same meaning (f16/bf16 computed in f32 and rounded on store, the same Philox stream) and stay
 * the reference the GPU results are checked against.
 *
 * Ops on the kernels run in order, as on a GPU stream: small and moderate ones (up to a few
 * milliseconds) at once, the calling thread taking part; big ones are queued for the worker
 * threads and the call returns at once, so the event loop stays free (every op while others are
 * queued is queued too). A read waits for the jobs that use its buffer (`read` blocking,
 * `readAsync` keeping the event loop free), host writes to reused memory wait for the jobs
 * before them, and a kernel's failure surfaces at the next wait. The backend's streams all share
 * that one queue. Products through the BLAS run on the calling thread once the queue is idle,
 * except a GRU rollout's, which the threads share out among themselves (simd/gru-rollout.ts).
 */
import { availableParallelism, cpus, freemem, totalmem } from 'node:os';
import { InvalidArgumentError } from '../../errors.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { Backend, BackendStream, DeviceInfo, PoolStats } from '../backend/backend.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { BackendBuffer, TensorView } from '../core/view.js';
import type { AttentionBackwardParams } from '../core/attention-backward-params.js';
import type { AttentionParams } from '../core/attention-params.js';
import { attention } from './attention.js';
import { attentionBackward } from './attention-backward.js';
import type { GruBackwardParams } from '../core/gru-backward-params.js';
import type { GruRecurrenceParams, GruRolloutParams } from '../core/gru-params.js';
import { gruRecurrence } from './gru.js';
import { gruBackwardRecurrence } from './gru-backward.js';
import { Blas } from '../../blas/blas.js';
import type { Logger } from '../core/logger.js';
import { blasEnabled, blasMatmul } from './blas-matmul.js';
import type { CpuBuffer } from './cpu-buffer.js';
import { CpuMemory } from './cpu-memory.js';
import { CPU_UNSUPPORTED } from './support.js';
import { cpuBuffer } from './element-io.js';
import * as elementwise from './elementwise.js';
import { layerNorm } from './layer-norm.js';
import { oneHot } from './one-hot.js';
import { cpuMatmul, type HostMatmulIO } from './matmul.js';
import { ProductEngine } from './product-engine.js';
import { dropout, random } from './random.js';
import { reduce } from './reduce.js';
import { SimdRuntime, threadCount } from './simd/runtime.js';
import { describeEngine, type CpuEngine } from './cpu-engine.js';
import { softmax } from './softmax.js';
import { transpose } from './transpose.js';
import { WasmOps } from './wasm-ops.js';

/** Options of {@link CpuBackend}. */
export interface CpuBackendOptions {
  /** Refuse allocations that would take the bytes in use above this. */
  poolLimitBytes?: number;
  /**
   * Threads that share big ops, the calling one included, for the WebAssembly kernels and the
   * BLAS (default `GPUCOMPUTE_CPU_THREADS`, else `os.availableParallelism()`; 1: no workers).
   */
  threads?: number;
  /**
   * Most bytes of tensors kept in the kernels' linear memory (default: all it holds, up to 4 GiB).
   * That memory never shrinks, so this caps what the process keeps reserved; tensors beyond it
   * get memory of their own and run on the (much slower) TypeScript loops.
   */
  kernelMemoryLimitBytes?: number;
  /** Receives a debug line saying which engines run the ops (the BLAS found, or why none). */
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

/** The host as a device: its CPU model, logical cores and memory; `engine` names what computes. */
export function cpuDeviceInfo(engine?: CpuEngine): DeviceInfo {
  const cores = cpus();
  return {
    backend: 'cpu',
    platform: `CPU (${process.platform} ${process.arch}, Node ${process.versions.node}${engine ? `; ${describeEngine(engine)}` : ''})`,
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
function openBlasEngine(threads: number, logger: Logger | undefined): Blas | undefined {
  if (!blasEnabled()) {
    logger?.debug('cpu: GPUCOMPUTE_BLAS=0, products on the WebAssembly sgemm');
    return undefined;
  }
  try {
    const blas = Blas.open({ threads });
    logger?.debug(`cpu: products through ${blas.vendor} (${blas.path}, ${blas.threads ?? '?'} threads)`);
    return blas;
  } catch (err) {
    logger?.debug(`cpu: no BLAS, products on the WebAssembly sgemm (${err instanceof Error ? err.message.replace(/\s*\n\s*/g, ' ') : String(err)})`);
    return undefined;
  }
}

export class CpuBackend implements Backend {
  readonly kind = 'cpu' as const;
  readonly unsupported = CPU_UNSUPPORTED;
  /** What computes here: the products' engine, the WebAssembly build and the thread count. */
  readonly engine: CpuEngine;
  private nextStreamId = 1;
  private stream: BackendStream = { id: 0 };
  /** The streams this backend made (and its default one): setStream takes no other. */
  private readonly streams = new WeakSet<BackendStream>([this.stream]);
  readonly #rt: SimdRuntime;
  readonly #memory: CpuMemory;
  readonly #products: ProductEngine;
  readonly #wasm: WasmOps;

  /** @throws InvalidArgumentError for a thread count (option or `GPUCOMPUTE_CPU_THREADS`) that is not an integer from 1 to 256. */
  constructor(options: CpuBackendOptions = {}) {
    const threads = threadCount(options.threads);
    const rt = SimdRuntime.shared(threads);
    const blas = openBlasEngine(threads, options.logger);
    this.engine = { products: blas?.vendor ?? 'wasm', simd: rt.variant, threads };
    this.#rt = rt;
    this.#memory = new CpuMemory(rt, options.poolLimitBytes, options.kernelMemoryLimitBytes);
    this.#products = new ProductEngine(rt, blas);
    this.#wasm = new WasmOps(rt, this.#products);
    options.logger?.debug(`cpu: ${describeEngine(this.engine)}`);
  }

  info(): DeviceInfo {
    return cpuDeviceInfo(this.engine);
  }

  alloc(byteLength: number): BackendBuffer {
    return this.#memory.alloc(byteLength);
  }

  free(buffer: BackendBuffer): void {
    this.#memory.free(buffer as CpuBuffer);
  }

  write(dst: BackendBuffer, src: ArrayBufferView, byteOffset = 0): void {
    (dst as CpuBuffer).bytes.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), byteOffset);
  }

  read(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): void {
    const from = (src as CpuBuffer).bytes.subarray(byteOffset, byteOffset + dst.byteLength);
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(from);
  }

  async readAsync(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): Promise<void> {
    await (src as CpuBuffer).settleAsync();
    this.read(src, dst, byteOffset);
  }

  copy(dst: TensorView, src: TensorView): void {
    if (this.#wasm.holds(dst, src)) this.#wasm.copy(dst, src);
    else elementwise.copy(dst, src);
  }

  fill(out: TensorView, value: number): void {
    if (this.#wasm.holds(out)) this.#wasm.fill(out, value);
    else elementwise.fill(out, value);
  }

  random(out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void {
    // Normals stay on the JS loop: its Box–Muller (Math.log/cos/sin) is the stream's definition.
    if (kind === 'uniform' && this.#wasm.holds(out)) this.#wasm.randomUniform(out, seed, a, b);
    else random(out, kind, seed, a, b);
  }

  cast(x: TensorView, out: TensorView): void {
    if (this.#wasm.holds(x, out)) this.#wasm.cast(x, out);
    else elementwise.cast(x, out);
  }

  unary(op: UnaryOp, x: TensorView, out: TensorView, alpha?: number): void {
    if (this.#wasm.holds(x, out)) this.#wasm.unary(op, x, out, alpha);
    else elementwise.unary(op, x, out, alpha);
  }

  activationGrad(op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha?: number): void {
    if (this.#wasm.holds(x, dy, out)) this.#wasm.activationGrad(op, x, dy, out, alpha);
    else elementwise.activationGrad(op, x, dy, out, alpha);
  }

  binary(op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
    if (this.#wasm.holds(a, b, out)) this.#wasm.binary(op, a, b, out, plan);
    else elementwise.binary(op, a, b, out, plan);
  }

  reduce(op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
    if (this.#wasm.holds(x, out)) this.#wasm.reduce(op, x, out, plan);
    else reduce(op, x, out, plan);
  }

  oneHot(indices: TensorView, out: TensorView, outer: number, classes: number, inner: number): void {
    oneHot(indices, out, outer, classes, inner);
  }

  softmax(x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
    if (this.#wasm.holds(x, out)) this.#wasm.softmax(x, out, rows, cols, log);
    else softmax(x, out, rows, cols, log);
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
    if (this.#wasm.holds(x, gamma, beta, out)) this.#wasm.layerNorm(x, gamma, beta, out, rows, cols, eps);
    else layerNorm(x, gamma, beta, out, rows, cols, eps);
  }

  transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
    if (this.#wasm.holds(x, out)) this.#wasm.transpose(x, out, batch, rows, cols);
    else transpose(x, out, batch, rows, cols);
  }

  dropout(x: TensorView, out: TensorView, p: number, seed: number): void {
    if (this.#wasm.holds(x, out)) this.#wasm.dropout(x, out, p, seed);
    else dropout(x, out, p, seed);
  }

  matmul(params: MatmulParams): void {
    if (this.#wasm.holds(params.a, params.b, params.out, params.c, params.bias)) this.#wasm.matmul(params);
    else if (this.#products.blas) blasMatmul(this.#products.blas, params);
    else cpuMatmul(params, matmulIO);
  }

  attention(params: AttentionParams): void {
    if (this.#wasm.holds(params.q, params.k, params.v, params.out, params.lse, params.keyLengths)) this.#wasm.attention(params);
    else attention(params);
  }

  attentionBackward(params: AttentionBackwardParams): void {
    const { q, k, v, out, lse, dOut, dq, dk, dv, keyLengths } = params;
    if (this.#wasm.holds(q, k, v, out, lse, dOut, dq, dk, dv, keyLengths)) this.#wasm.attentionBackward(params);
    else attentionBackward(params);
  }

  gruRecurrence(params: GruRecurrenceParams): void {
    const p = params;
    const ln = p.layerNorm;
    if (this.#wasm.holdsGru(p.hidden) && this.#wasm.holds(p.gx, p.wHh, p.bIh, p.bHh, p.h0, p.hSeq, p.hN, ln?.gamma, ln?.beta)) this.#wasm.gruRecurrence(p);
    else gruRecurrence(p, (product) => this.matmul(product));
  }

  gruRollout(params: GruRolloutParams): boolean {
    const p = params;
    return this.#wasm.holds(p.state, p.h0, p.wIh, p.wHh, p.bIh, p.bHh, p.outWeight, p.outBias, p.states, p.hN) && this.#wasm.gruRollout(p);
  }

  gruBackwardRecurrence(params: GruBackwardParams): void {
    gruBackwardRecurrence(params, (product) => this.matmul(product));
  }

  synchronize(): void {
    this.#rt.settle();
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
    return this.#memory.stats();
  }

  trim(): void {
    this.#memory.trim();
  }

  dispose(): void {
    try {
      this.#rt.settle();
    } catch {
      // A queued kernel failed, and no one is left to read what it wrote.
    }
    this.#memory.dispose();
  }
}
