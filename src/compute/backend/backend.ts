/**
 * The one interface every GpuCompute backend implements. Ops are written once in the front-end
 * against it: the front-end validates shapes, dtypes, axes and lifetimes and computes plans, so a
 * backend only executes and never needs to re-check arguments. Parameter types and plans are
 * plain data from `core/`.
 */
import type { AttentionBackwardParams } from '../core/attention-backward-params.js';
import type { AttentionParams } from '../core/attention-params.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { GruBackwardParams } from '../core/gru-backward-params.js';
import type { GruRecurrenceParams, GruRolloutParams } from '../core/gru-params.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import type { OptimizerStepParams } from '../core/optimizer-params.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { BackendBuffer, TensorView } from '../core/view.js';
import type { DenseLinalg } from './dense-linalg.js';

/** The capability record an orchestrator schedules on. */
export interface DeviceInfo {
  /** The backend's kind, e.g. 'cuda' (see the registry, `backends.ts`). */
  backend: string;
  /** Human-readable platform, e.g. "CUDA 13.0 (driver 580.65)" or "CPU (linux x64, Node 20.19.0)". */
  platform: string;
  deviceName: string;
  /** Device index within its backend (0 for the CPU). */
  ordinal: number;
  /** e.g. "9.0" (CUDA only). */
  computeCapability?: string;
  /** e.g. "sm_90" (CUDA only). */
  arch?: string;
  /** Bytes; NaN where the platform does not say (WebGPU). */
  totalMemory: number;
  /** Bytes, read now; NaN where the platform does not say, or a probe was told not to read it. */
  freeMemory: number;
  /** Streaming multiprocessors (GPU) or logical cores (CPU); NaN where the platform does not say. */
  multiprocessorCount: number;
  tensorCores: boolean;
  /** Native f16 arithmetic (f16 tensors work on every backend; the CPU emulates them through f32). */
  fp16: boolean;
  /** Native bf16 arithmetic (same remark as fp16). */
  bf16: boolean;
  /** The device is emulated on the CPU (a software WebGPU adapter such as Mesa's lavapipe). */
  software?: boolean;
  /** Details a GPU backend reports where it can read them (`gpucompute info` shows them). */
  uuid?: string;
  pciBusId?: string;
  warpSize?: number;
  maxThreadsPerBlock?: number;
  memoryBusWidthBits?: number;
  memoryClockKHz?: number;
  clockKHz?: number;
  sharedMemoryPerBlock?: number;
  /** Shared memory per block after opting in (cuFuncSetAttribute). */
  sharedMemoryPerBlockOptin?: number;
  l2CacheSize?: number;
  cooperativeLaunch?: boolean;
  clusterLaunch?: boolean;
  /** The backend's driver version (the CUDA version for CUDA devices). */
  driverVersion?: string;
}

/** An ordered queue of work. Opaque; ops on one stream run in the order they were called. */
export interface BackendStream {
  readonly id: number;
}

/** Memory-pool counters; the same meaning on every backend. */
export interface PoolStats {
  /** Bytes handed out and not yet freed. */
  inUseBytes: number;
  /** Bytes held by the pool for reuse (not in use). */
  cachedBytes: number;
  /** Highest `inUseBytes` seen. */
  peakBytes: number;
  /** Live allocations (blocks in use). */
  allocations: number;
  limitBytes?: number;
}

/**
 * What every backend executes: memory, streams, and the small core of ops that everything else
 * is built from. All views are dense, row-major and already validated.
 *
 * Shared semantics (so every backend gives the same answer):
 * - f16/bf16 are loaded to f32, computed in f32 (the CPU may use f64) and rounded to nearest-even
 *   on store. i32 add/sub/mul/neg/abs wrap modulo 2^32.
 * - binary max/min and reductions max/min propagate NaN; argmax returns the first NaN if any,
 *   else the first maximal index.
 * - cast float → i32 truncates toward zero, saturates at ±2^31, NaN → 0; i32 → f16/bf16 goes
 *   through f32.
 * - random: Philox4x32-10 (see `cpu/philox.ts`); uniform u = top24·2^-24 and the value is
 *   a + (b − a)·u in f32 with no FMA contraction (`__fmul_rn`/`__fadd_rn`), so it matches bit
 *   for bit; normal = a + b·z (Box–Muller).
 * - dropout: element i is kept when its uniform u (same stream as `random`) is ≥ f32(p), and
 *   kept values are x · scale in one f32 multiply, where scale = f32(1/(1−p)) is computed in
 *   double on the host. The front-end handles p = 0 and p = 1.
 * - activations propagate NaN (relu(NaN) = NaN, as in PyTorch).
 * - The front-end never calls an op with an empty output or an empty reduced axis.
 */
export interface BackendCore {
  /** The backend's kind, as registered (`backends.ts`), e.g. 'cuda'. */
  readonly kind: string;
  /** The device's capabilities, with a fresh free-memory reading. */
  info(): DeviceInfo;
  /** Allocates through the backend's caching pool. */
  alloc(byteLength: number): BackendBuffer;
  /** Returns a buffer to the pool. */
  free(buffer: BackendBuffer): void;
  write(dst: BackendBuffer, src: ArrayBufferView, byteOffset?: number): void;
  /** Synchronous read: waits for the work queued on the current stream. */
  read(src: BackendBuffer, dst: ArrayBufferView, byteOffset?: number): void;
  /** Read that keeps the event loop free while the device finishes. */
  readAsync(src: BackendBuffer, dst: ArrayBufferView, byteOffset?: number): Promise<void>;
  /** Same dtype, same size. */
  copy(dst: TensorView, src: TensorView): void;
  fill(out: TensorView, value: number): void;
  /** Philox4x32-10 keyed by `seed`: uniform in [a, b) or normal(mean a, std b). */
  random(out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void;
  cast(x: TensorView, out: TensorView): void;
  /** `alpha` is the leakyRelu slope. */
  unary(op: UnaryOp, x: TensorView, out: TensorView, alpha?: number): void;
  binary(op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void;
  /** argmax writes i32 indices. */
  reduce(op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void;
  /** Swaps the last two dims of `[batch, rows, cols]`. */
  transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void;
  synchronize(): void;
  createStream(): BackendStream;
  /** Queues later work on `s`; refuses a stream this backend did not create. */
  setStream(s: BackendStream): void;
  currentStream(): BackendStream;
  memoryStats(): PoolStats;
  /** Releases cached, unused memory back to the device. */
  trim(): void;
  dispose(): void;
}

/**
 * Ops a backend may leave out. Where one can be composed correctly from others, a backend without
 * it gets the composition (`composed-ops.ts`: binaryScalar, softmax, layerNorm, optimizerStep); otherwise the op is unavailable on that backend, with the reason the backend gives in
 * {@link Backend.unsupported}, and the front-end refuses it with an UnsupportedOperationError.
 */
export interface OptionalOps {
  /**
   * out = x op scalar, or scalar op x when `scalarFirst`: a binary op with a JS number operand,
   * passed to the kernel as an argument. `scalar` is already rounded to x's dtype.
   */
  binaryScalar(op: BinaryOp, x: TensorView, scalar: number, scalarFirst: boolean, out: TensorView): void;
  /** Backward of an activation: out = dy · f'(x). */
  activationGrad(op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha?: number): void;
  /** Zeroes each element with probability p (Philox keyed by `seed`) and scales kept ones by 1/(1-p). */
  dropout(x: TensorView, out: TensorView, p: number, seed: number): void;
  /**
   * One-hot encoding: `indices` (i32) seen as `[outer, inner]`, `out` (a float dtype) as
   * `[outer, classes, inner]`; out[o, c, i] = 1 where indices[o, i] = c, else 0 (a row whose index
   * lies outside [0, classes) is all zeros).
   */
  oneHot(indices: TensorView, out: TensorView, outer: number, classes: number, inner: number): void;
  /** Over the last axis of a tensor seen as `[rows, cols]`; `log` gives logSoftmax. */
  softmax(x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void;
  layerNorm(
    x: TensorView,
    gamma: TensorView | undefined,
    beta: TensorView | undefined,
    out: TensorView,
    rows: number,
    cols: number,
    eps: number,
  ): void;
  matmul(params: MatmulParams): void;
  /** Scaled dot-product attention forward; see `core/attention-params.ts` for the shared semantics. */
  attention(params: AttentionParams): void;
  /** Gradients of q, k and v from the forward's output and log-sum-exp; see `core/attention-backward-params.ts`. */
  attentionBackward(params: AttentionBackwardParams): void;
  /** One GRU layer's recurrence over precomputed input projections; see `core/gru-params.ts` for the shared semantics. */
  gruRecurrence(params: GruRecurrenceParams): void;
  /** The sequential part of one GRU layer's backward pass; see `core/gru-backward-params.ts`. */
  gruBackwardRecurrence(params: GruBackwardParams): void;
  /**
   * A whole rollout of a one-layer GRU with its output projection in one go (`gpu.gruRollout`'s
   * fast path). Returns false, having queued nothing, where the shape does not suit it; the
   * front-end then runs the rollout step by step on `gruRecurrence` and `matmul`.
   */
  gruRollout(params: GruRolloutParams): boolean;
  /**
   * One optimizer step over many parameters, in place (one launch on CUDA and HIP); see
   * `core/optimizer-params.ts` for the formulas and the order of operations every backend keeps.
   */
  optimizerStep(params: OptimizerStepParams): void;
  /**
   * Device dense factorizations for `gpu.svd` (cuSOLVER on CUDA); undefined where the device has
   * none at run time (the library did not load), and the SVD then runs its host path.
   */
  denseLinalg(): DenseLinalg | undefined;
  /**
   * Records the work `fn` queues (on a private stream) into a graph instead of running it:
   * `gpu.capture`. While it records, host reads and writes and synchronisation throw
   * CaptureError, and every pool block allocated or freed joins the graph's reservation.
   */
  recordGraph(fn: () => void): RecordedGraph;
  /**
   * Copies `src`, a tensor of `from` (another instance of this backend's kind: another device, or
   * another GpuCompute on the same one), into `dst`, device to device (peer to peer where the
   * devices can reach each other), ordered after the work queued on both, and before later work
   * of `from` on src's buffer. `x.to(gpu)` goes through the host where the backends differ in
   * kind or this op is missing.
   */
  copyFromPeer(dst: TensorView, src: TensorView, from: Backend): void;
}

/** Work recorded by {@link OptionalOps.recordGraph}, replayed with one launch. */
export interface RecordedGraph {
  /** Queues the recorded work on the current stream, after what is queued there (and on the buffers' last streams). */
  replay(): void;
  /** Pool bytes the graph holds: every block its work allocated or freed. */
  readonly reservedBytes: number;
  /** Frees the graph and its reserved memory (waits for replays in flight). Idempotent. */
  dispose(): void;
}

/** The name of an optional op. */
export type OptionalOp = keyof OptionalOps;

/** What a backend implements: the core, and whichever optional ops it has. */
export interface Backend extends BackendCore, Partial<OptionalOps> {
  /** Why each optional op this backend leaves out is missing (shown in errors and the support table). */
  readonly unsupported?: Readonly<Partial<Record<OptionalOp, string>>>;
}
