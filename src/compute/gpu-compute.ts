/**
 * GpuCompute: the entry point most users touch. It picks a backend, creates tensors, and offers
 * every op as a method. Each method hands its arguments to the op's front-end (`ops/`), which
 * validates shapes, dtypes, axes, owners and lifetimes before any backend runs, so each backend
 * only executes and every backend reports bad input the same way.
 */
import { InvalidArgumentError } from '../errors.js';
import type { Backend, BackendStream, DeviceInfo, PoolStats } from './backend/backend.js';
import { withComposedOps, type ComposedBackend } from './backend/composed-ops.js';
import type { BackendUnavailableError } from './backend/registration.js';
import { BACKEND_KINDS, type BackendKind } from './backends.js';
import type { DType } from './core/dtype.js';
import { PLAIN_UNARY_OPS, type ActivationName, type PlainUnaryOp } from './core/elementwise-ops.js';
import { LOG_LEVELS, Logger, type LoggerFunction, type LogLevelSetting } from './core/logger.js';
import type { ProgressEvent, ProgressListener } from './core/progress.js';
import type { MatmulActivation } from './core/matmul-plan.js';
import { resolvePoolLimit } from './core/pool-limit.js';
import { checkChoice, checkFlag, checkInteger, checkOptions, describeValue, optionKeys } from './core/validation.js';
import { gradOf, type GradResult } from './autograd/backward.js';
import { activationGrad, binary, cast, copy, gelu, unary, vectorAdd } from './autograd/ops/elementwise.js';
import { transpose } from './autograd/ops/layout.js';
import { crossEntropy, mseLoss } from './autograd/ops/losses.js';
import { linear, matmul } from './autograd/ops/matmul.js';
import { dropout } from './autograd/ops/random.js';
import { reduce } from './autograd/ops/reduce.js';
import { layerNorm, softmax } from './autograd/ops/rows.js';
import { refuseRecording } from './autograd/ops/unrecorded.js';
import { attention } from './autograd/ops/attention.js';
import { gru, gruCell } from './autograd/ops/gru.js';
import type { AttentionOptions, AttentionResult } from './ops/attention.js';
import { capture, type CapturedFunction, type CaptureResult } from './ops/capture.js';
import { full, tensor, type TensorData } from './ops/creation.js';
import { DEFAULT_LEAKY_SLOPE, leakySlope, type ActivationGradOptions, type GeluOptions } from './ops/elementwise.js';
import {
  gruRollout,
  type GruCommonOptions,
  type GruLayerWeights,
  type GruOptions,
  type GruResult,
  type GruRolloutOptions,
  type GruRolloutResult,
  type GruWeights,
} from './ops/gru.js';
import type { LossOptions } from './ops/losses.js';
import type { MatmulOptions } from './ops/matmul.js';
import { oneHot } from './ops/one-hot.js';
import { rand, randn, type RandnOptions, type RandOptions } from './ops/random.js';
import type { ReduceOptions } from './ops/reduce.js';
import { DEFAULT_LAYER_NORM_EPS } from './ops/rows.js';
import { svd, type SvdOptions, type SvdResult } from './ops/svd.js';
import { to } from './ops/transfer.js';
import { selectDevice, type DeviceRequirements, type DeviceSelection } from './select-device.js';
import { openBackend, type SkippedBackend } from './selection.js';
import './tensor-methods.js';
import { Session } from './tensor/session.js';
import { Tensor } from './tensor/tensor.js';

/** Options of {@link GpuCompute.create}. */
export interface GpuComputeOptions {
  /** Which backend; 'auto' (default) tries each registered backend in order (CUDA, HIP, Metal, then the CPU). */
  backend?: 'auto' | BackendKind;
  /** Device ordinal within the backend (default 0). */
  device?: number;
  /** Receives log messages (default: the console, prefixed `[gpucompute]`). */
  logger?: LoggerFunction;
  /** Lowest level delivered (default 'warn'). */
  logLevel?: LogLevelSetting;
  /** Cap on pooled device memory in bytes (default: env `GPUCOMPUTE_POOL_LIMIT`, else none). */
  poolLimitBytes?: number;
  /**
   * Threads the CPU backend computes on, the calling one included (default: env
   * `GPUCOMPUTE_CPU_THREADS`, else every core): an integer from 1 to 256, where 1 runs every op on
   * the calling thread. GPU backends ignore it.
   */
  threads?: number;
  /**
   * Receives a {@link ProgressEvent} per step of long first-run work: each kernel module compiled
   * because the kernel cache did not have it (with its time), each candidate the matmul autotuner
   * times. The same steps are logged at info level. See `warmupKernels` to compile ahead of time.
   */
  onProgress?: ProgressListener;
}

/** The keys {@link GpuComputeOptions} takes. */
export const CREATE_OPTIONS = optionKeys<GpuComputeOptions>({
  backend: true,
  device: true,
  logger: true,
  logLevel: true,
  poolLimitBytes: true,
  threads: true,
  onProgress: true,
});
/** The keys {@link DeviceRequirements} takes. */
export const DEVICE_REQUIREMENTS = optionKeys<DeviceRequirements>({ minMemoryBytes: true, tensorCores: true, platforms: true, fp16: true, bf16: true });

/**
 * The methods of the plain unary ops (`UNARY_OPS` in `core/elementwise-ops.ts`): `gpu.exp(x)` and
 * the others take a float tensor (`neg` and `abs` an i32 one too) and return `op(x)` elementwise
 * in the same shape and dtype.
 */
export type PlainUnaryMethods = { readonly [K in PlainUnaryOp]: <D extends DType>(x: Tensor<D>) => Tensor<D> };

/** Tensors, ops and memory on one device, through one backend. */
export class GpuCompute {
  /** Backends that `auto` passed over, and why (empty for an explicit backend). */
  readonly skipped: readonly SkippedBackend[];
  readonly #session: Session;

  private constructor(session: Session, skipped: readonly SkippedBackend[]) {
    this.#session = session;
    this.skipped = Object.freeze([...skipped]);
  }

  static {
    for (const op of PLAIN_UNARY_OPS) {
      Object.defineProperty(GpuCompute.prototype, op, {
        value: function (this: GpuCompute, x: Tensor) {
          return unary(this.#session, op, x);
        },
        writable: true,
        configurable: true,
      });
    }
  }

  /**
   * Opens a backend. With `backend: 'auto'` (the default) it takes the first registered backend
   * that works (CUDA, HIP, Metal, then the CPU), logs the fallback at warn and lists what it
   * skipped in {@link GpuCompute.skipped}; an explicit backend that is not available throws
   * {@link BackendUnavailableError}.
   */
  static async create(options: GpuComputeOptions = {}): Promise<GpuCompute> {
    const op = 'GpuCompute.create';
    const o = checkOptions<GpuComputeOptions>(op, options, CREATE_OPTIONS);
    const requested = checkChoice(op, 'backend', o.backend, ['auto', ...BACKEND_KINDS], 'auto', 'unknown');
    const device = checkInteger(op, 'device', o.device ?? 0, 0);
    const logLevel = checkChoice(op, 'logLevel', o.logLevel, LOG_LEVELS, 'warn', 'unknown');
    if (o.logger !== undefined && typeof o.logger !== 'function') {
      throw new InvalidArgumentError(`${op}: logger must be a function (level, message) => void, got ${describeValue(o.logger)}`);
    }
    if (o.poolLimitBytes !== undefined && (!Number.isSafeInteger(o.poolLimitBytes) || o.poolLimitBytes <= 0)) {
      throw new InvalidArgumentError(`${op}: poolLimitBytes must be a positive integer number of bytes, got ${describeValue(o.poolLimitBytes)}`);
    }
    const threads = o.threads === undefined ? undefined : checkInteger(op, 'threads', o.threads, 1, 256);
    if (o.onProgress !== undefined && typeof o.onProgress !== 'function') {
      throw new InvalidArgumentError(`${op}: onProgress must be a function (event) => void, got ${describeValue(o.onProgress)}`);
    }
    // The logger carries the listener down to every backend part that logs (kernel compiles, tuning).
    const logger = new Logger(o.logger, logLevel, o.onProgress);
    const poolLimitBytes = resolvePoolLimit(o.poolLimitBytes);
    const { backend, skipped } = await openBackend(requested, {
      device,
      logger,
      ...(poolLimitBytes === undefined ? {} : { poolLimitBytes }),
      ...(threads === undefined ? {} : { threads }),
    });
    const gpu = new GpuCompute(new Session(backend, logger), skipped);
    if (logger.enabled('info')) {
      const info = backend.info();
      logger.info(`using ${info.backend} device ${info.ordinal}: ${info.deviceName} (${info.platform})`);
    }
    return gpu;
  }

  /**
   * @internal A GpuCompute over a backend opened by hand (the library's tests open backends with
   * options `create` does not take); its composable ops are filled in as `create` does.
   */
  static over(backend: Backend, logger: Logger = new Logger(undefined, 'silent')): GpuCompute {
    return new GpuCompute(new Session(withComposedOps(backend), logger), []);
  }

  /**
   * Enumerates the local devices (every registered backend's, the CPU among them) and picks one
   * by the requirements, then by the most free memory. See {@link selectDevice}.
   */
  static async selectDevice(requirements: DeviceRequirements = {}): Promise<DeviceSelection> {
    const op = 'selectDevice';
    const r = checkOptions<DeviceRequirements>(op, requirements, DEVICE_REQUIREMENTS, 'requirements');
    for (const name of ['tensorCores', 'fp16', 'bf16'] as const) checkFlag(op, name, r[name], false);
    if (r.platforms !== undefined && !Array.isArray(r.platforms)) {
      throw new InvalidArgumentError(`${op}: platforms must be an array of backend kinds (${BACKEND_KINDS.join(', ')}), got ${describeValue(r.platforms)}`);
    }
    // selectDevice checks the platforms' names and minMemoryBytes itself.
    return selectDevice(r);
  }

  /** @internal The session the ops run in (the library's own tests and benchmarks call front-ends with it). */
  get session(): Session {
    return this.#session;
  }

  /** The backend executing the ops (advanced: raw access for custom ops). */
  get backend(): ComposedBackend {
    return this.#session.backend;
  }

  /** Where this instance logs. */
  get logger(): Logger {
    return this.#session.logger;
  }

  /** The device's capabilities, with a fresh free-memory reading. */
  get info(): DeviceInfo {
    this.#session.assertLive();
    return this.#session.backend.info();
  }

  /** The backend kind in use. */
  get kind(): BackendKind {
    return this.#session.backend.kind as BackendKind;
  }

  /** True after {@link GpuCompute.dispose}. */
  get disposed(): boolean {
    return this.#session.disposed;
  }

  // ---------------------------------------------------------------- creation

  /**
   * A tensor holding `data` (row-major), of `shape` (default `[data.length]`).
   * The dtype defaults to i32 for an Int32Array and f32 otherwise. A Uint16Array
   * with dtype f16/bf16 is taken as raw bit patterns; values for i32 must be integers.
   */
  tensor<D extends DType>(data: TensorData, shape: readonly number[] | undefined, dtype: D): Tensor<D>;
  tensor(data: Int32Array, shape?: readonly number[]): Tensor<'i32'>;
  tensor(data: Exclude<TensorData, Int32Array | Uint16Array>, shape?: readonly number[]): Tensor<'f32'>;
  tensor(data: TensorData, shape?: readonly number[], dtype?: DType): Tensor {
    return tensor(this.#session, data, shape, dtype);
  }

  /** An uninitialised tensor (its contents are whatever the pool block held). */
  empty<D extends DType = 'f32'>(shape: readonly number[], dtype: D = 'f32' as D): Tensor<D> {
    return this.#session.empty('empty', shape, dtype);
  }

  /** A tensor of zeros. */
  zeros<D extends DType = 'f32'>(shape: readonly number[], dtype: D = 'f32' as D): Tensor<D> {
    return full(this.#session, 'zeros', shape, 0, dtype);
  }

  /** A tensor of ones. */
  ones<D extends DType = 'f32'>(shape: readonly number[], dtype: D = 'f32' as D): Tensor<D> {
    return full(this.#session, 'ones', shape, 1, dtype);
  }

  /** A tensor filled with `value` (rounded to the dtype; an integer for i32). */
  full<D extends DType = 'f32'>(shape: readonly number[], value: number, dtype: D = 'f32' as D): Tensor<D> {
    return full(this.#session, 'full', shape, value, dtype);
  }

  /** Uniform random numbers in [low, high) (default [0, 1)) from the seeded Philox stream. */
  rand<D extends DType = 'f32'>(shape: readonly number[], options: RandOptions<D> = {}): Tensor<D> {
    return rand(this.#session, shape, options);
  }

  /** Normal random numbers (default mean 0, std 1) from the seeded Philox stream. */
  randn<D extends DType = 'f32'>(shape: readonly number[], options: RandnOptions<D> = {}): Tensor<D> {
    return randn(this.#session, shape, options);
  }

  // ---------------------------------------------------------- binary ops

  /** a + b for tensors of the same shape and dtype (no broadcasting). */
  vectorAdd<D extends DType>(a: Tensor<D>, b: Tensor<D>): Tensor<D> {
    return vectorAdd(this.#session, a, b);
  }

  /** a + b with broadcasting; either side may be a JS number. */
  add<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return binary(this.#session, 'add', a, b, 'add');
  }
  /** a − b with broadcasting. */
  sub<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return binary(this.#session, 'sub', a, b, 'sub');
  }
  /** a · b with broadcasting. */
  mul<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return binary(this.#session, 'mul', a, b, 'mul');
  }
  /** a / b with broadcasting (float dtypes only). */
  div<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return binary(this.#session, 'div', a, b, 'div');
  }
  /** Elementwise maximum with broadcasting; NaN propagates. */
  maximum<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return binary(this.#session, 'max', a, b, 'maximum');
  }
  /** Elementwise minimum with broadcasting; NaN propagates. */
  minimum<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return binary(this.#session, 'min', a, b, 'minimum');
  }

  // ----------------------------------------------------------- unary ops (the plain ones: PlainUnaryMethods)

  /** x for x > 0, slope·x otherwise (default slope 0.01; the slope is rounded to f32). */
  leakyRelu<D extends DType>(x: Tensor<D>, slope = DEFAULT_LEAKY_SLOPE): Tensor<D> {
    return unary(this.#session, 'leakyRelu', x, leakySlope('leakyRelu', slope));
  }

  /** x·Φ(x) (exact, erf) or its tanh approximation with `{ approximate: 'tanh' }`. */
  gelu<D extends DType>(x: Tensor<D>, options: GeluOptions = {}): Tensor<D> {
    return gelu(this.#session, x, options);
  }

  /**
   * Backward of an activation: dy · f'(x), with x the activation's input.
   * `slope` applies to leakyRelu; `approximate: 'tanh'` to gelu.
   */
  activationGrad<D extends DType>(name: ActivationName, x: Tensor<D>, dy: Tensor<D>, options: ActivationGradOptions = {}): Tensor<D> {
    return activationGrad(this.#session, name, x, dy, options);
  }

  // ------------------------------------------------------ row-wise ops

  /** Softmax over the last axis (stable: the row maximum is subtracted first). */
  softmax<D extends DType>(x: Tensor<D>): Tensor<D> {
    return softmax(this.#session, x, false);
  }

  /** log(softmax(x)) over the last axis, computed stably. */
  logSoftmax<D extends DType>(x: Tensor<D>): Tensor<D> {
    return softmax(this.#session, x, true);
  }

  /**
   * Layer normalisation over the last axis: (x − mean)/√(var + eps)·gamma + beta,
   * with the biased variance. gamma and beta, when given, have shape [lastDim].
   */
  layerNorm<D extends DType>(x: Tensor<D>, gamma?: Tensor<D> | null, beta?: Tensor<D> | null, eps = DEFAULT_LAYER_NORM_EPS): Tensor<D> {
    return layerNorm(this.#session, x, gamma, beta, eps);
  }

  // --------------------------------------------------------- reductions

  /** Sum over an axis, or over everything (f32 results accumulate in at least f32; CPU in f64). */
  sum<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return reduce(this.#session, 'sum', x, axisOrOptions);
  }
  /** Mean over an axis or everything (float dtypes only; NaN for an empty axis). */
  mean<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return reduce(this.#session, 'mean', x, axisOrOptions);
  }
  /** Maximum over an axis or everything; NaN propagates. */
  max<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return reduce(this.#session, 'max', x, axisOrOptions);
  }
  /** Minimum over an axis or everything; NaN propagates. */
  min<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return reduce(this.#session, 'min', x, axisOrOptions);
  }
  /** i32 index of the maximum (the first one; the first NaN if any) over an axis or everything (flat index). */
  argmax(x: Tensor, axisOrOptions?: number | ReduceOptions): Tensor<'i32'> {
    return reduce(this.#session, 'argmax', x, axisOrOptions) as Tensor<'i32'>;
  }

  // ---------------------------------------------------- products and sequences

  /**
   * out = act(alpha·op(a)·op(b) + beta·c + bias): 2-D or batched (3-D, 4-D, NumPy-broadcast batch
   * dims) products in f32, f16 or bf16 (f32 accumulation). `precision: 'tf32'` lets f32 inputs use
   * tensor cores; `engine` picks our kernels, cuBLAS, or whichever the autotuner measured faster.
   */
  matmul<D extends DType>(a: Tensor<D>, b: Tensor<D>, options: MatmulOptions = {}): Tensor<D> {
    return matmul(this.#session, a, b, options);
  }

  /**
   * A dense layer in one fused kernel: x `[..., in]` · weightᵀ (`[out, in]`, PyTorch's layout)
   * + bias `[out]`, then `activation`.
   */
  linear<D extends DType>(
    x: Tensor<D>,
    weight: Tensor<D>,
    bias?: Tensor<D> | null,
    activation?: MatmulActivation | 'none',
    options: Pick<MatmulOptions, 'precision' | 'engine' | 'autotune'> = {},
  ): Tensor<D> {
    return linear(this.#session, x, weight, bias, activation, options);
  }

  /**
   * Truncated SVD of an f32 matrix `a` of shape [m, n]: a ≈ u·diag(s)·v with u [m, k] and v [k, n]
   * orthonormal, s [k] descending, k = `rank`. Randomized range finder (q = rank + oversample
   * Gaussian columns keyed by `seed`, `powerIterations` re-orthonormalised power iterations), the
   * large products on the device; the small dense steps in float64 on the host for q ≤ 44, through
   * the backend's dense routines (cuSOLVER on CUDA) above that, where it has them. Defaults: rank
   * min(6, m, n), oversample 10, powerIterations 2 (torch.svd_lowrank's niter), seed 0
   * (deterministic). `full: true` gives the exact SVD of a small matrix (min(m, n) ≤ 512; k = rank
   * or min(m, n)). Refuses NaN/±Infinity, non-2-D and non-f32 input. Synchronous.
   */
  svd(a: Tensor<'f32'>, options: SvdOptions = {}): SvdResult {
    refuseRecording(this.#session, 'svd', a);
    return svd(this.#session, a, options);
  }

  /**
   * Scaled dot-product attention forward, softmax(scale·q·kᵀ + mask)·v, without ever forming the
   * seqQ × seqK score matrix (flash-attention kernels on CUDA; a tiled loop on the CPU).
   *
   * q is `[batch, heads, seqQ, headDim]`, k and v `[batch, kvHeads, seqK, headDim]` with heads a
   * multiple of kvHeads (grouped-query / multi-query attention); headDim 1..256; f32, f16 or bf16
   * (f32 accumulation). Options: `causal` (PyTorch `is_causal`: query i sees keys 0..i, aligned
   * top-left when seqQ ≠ seqK), `scale` (default 1/√headDim), `keyLengths` (an i32 tensor
   * `[batch]`, clamped to [0, seqK] on the device, or a number array, checked: keys at or after
   * the length are masked) and `returnLogSumExp` (also return the natural-log log-sum-exp of each
   * row's scaled scores, `[batch, heads, seqQ]` f32). A row that sees no key gives zeros and a
   * log-sum-exp of -Infinity.
   */
  attention<D extends DType>(q: Tensor<D>, k: Tensor<D>, v: Tensor<D>, options: AttentionOptions & { returnLogSumExp: true }): AttentionResult<D>;
  attention<D extends DType>(q: Tensor<D>, k: Tensor<D>, v: Tensor<D>, options?: AttentionOptions & { returnLogSumExp?: false }): Tensor<D>;
  attention(q: Tensor, k: Tensor, v: Tensor, options?: AttentionOptions): Tensor | AttentionResult;
  attention(q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): Tensor | AttentionResult {
    return attention(this.#session, q, k, v, options);
  }

  /**
   * A GRU (or a stack of them, or an ensemble of E independent ones run in one launch) over
   * x [B, T, in] from h0, with weights in PyTorch's layout and gate order (W_ih [3H, in], W_hh
   * [3H, H], b_ih, b_hh [3H]; r, z, n; a leading [E] dim for an ensemble): matches
   * torch.nn.GRU(batch_first=True) given the same weights. h0 is [B, H] ([E, B, H]) for one layer,
   * [L, B, H] ([L, E, B, H]) for a stack, zeros when omitted. Returns the last layer's states
   * (every step unless `returnSequences: false`) and each layer's final state, shaped like h0.
   * Optional per-layer layer norm of the state and seeded dropout; f32 (opt-in tf32), f16, bf16.
   */
  gru<D extends DType>(x: Tensor<D>, h0: Tensor<D> | null | undefined, weights: GruWeights, options: GruOptions = {}): GruResult<D> {
    return gru(this.#session, x, h0, weights, options) as GruResult<D>;
  }

  /** One GRU step (torch.nn.GRUCell): x [B, in] ([E, B, in] or shared), h [B, H] ([E, B, H]) → new h. */
  gruCell<D extends DType>(x: Tensor<D>, h: Tensor<D>, weights: GruLayerWeights, options: GruCommonOptions = {}): Tensor<D> {
    return gruCell(this.#session, x, h, weights, options);
  }

  /**
   * Autoregressive rollout: from `state` [B, S] each step runs the GRU stack, maps the last
   * layer's state through `outputProjection` (hidden → S) and feeds the prediction back as the
   * next input. Returns the predicted states [B, steps, S] ([E, B, steps, S]) and the final hidden state.
   */
  gruRollout<D extends DType>(state: Tensor<D>, h0: Tensor<D> | null | undefined, weights: GruWeights, options: GruRolloutOptions): GruRolloutResult<D> {
    refuseRecording(this.#session, 'gruRollout', state, h0, weights, options);
    return gruRollout(this.#session, state, h0, weights, options) as GruRolloutResult<D>;
  }

  // ---------------------------------------------------- layout and misc

  /**
   * Swaps the last two dims (a 2-D transpose, batched over leading dims). Where one of the two is
   * 1 the result is a view over x's storage, as {@link Tensor.reshape} gives (no copy); else a copy.
   */
  transpose<D extends DType>(x: Tensor<D>): Tensor<D> {
    return transpose(this.#session, x);
  }

  /**
   * Zeroes each element with probability p and scales the rest by 1/(1−p).
   * The mask comes from the Philox stream keyed by `seed`, so it is reproducible.
   */
  dropout<D extends DType>(x: Tensor<D>, p: number, seed?: number): Tensor<D> {
    return dropout(this.#session, x, p, seed);
  }

  /** Converts to another dtype (float → i32 truncates toward zero and saturates; NaN → 0). */
  cast<T extends DType>(x: Tensor, dtype: T): Tensor<T> {
    return cast(this.#session, x, dtype);
  }

  /** A copy of x with its own storage. */
  copy<D extends DType>(x: Tensor<D>): Tensor<D> {
    return copy(this.#session, x);
  }

  /**
   * `indices` (i32 class indices, any shape) one-hot encoded: shape `[...indices.shape, classes]`,
   * 1 at each index and 0 elsewhere, in `dtype` (a float dtype, default f32). An index outside
   * [0, classes) gives a row of zeros.
   */
  oneHot<D extends DType = 'f32'>(indices: Tensor<'i32'>, classes: number, dtype: D = 'f32' as D): Tensor<D> {
    return oneHot(this.#session, indices, classes, dtype);
  }

  // ------------------------------------------------------------- training

  /**
   * Mean squared error of `pred` against `target` (same shape and dtype): the mean of
   * (pred − target)², or with `{ reduction: 'sum' }` the sum, with `'none'` each square.
   * Differentiable in both.
   */
  mseLoss<D extends DType>(pred: Tensor<D>, target: Tensor<D>, options: LossOptions = {}): Tensor<D> {
    return mseLoss(this.#session, pred, target, options);
  }

  /**
   * Cross-entropy of `logits` `[..., classes]` (classes on the last axis) against `targets`: i32
   * class indices `[...]`, or class probabilities `[..., classes]` in the logits' dtype. Computed
   * through logSoftmax (stable for any logits; f32 inside for 16-bit logits). Reduction: 'mean'
   * (default: over the rows, or with class indices over the rows not ignored), 'sum', or 'none'
   * (one loss per row). A class index outside [0, classes), such as PyTorch's ignore index −100,
   * marks a row to ignore: loss and gradient 0. Differentiable in the logits and in probabilities.
   */
  crossEntropy<D extends DType>(logits: Tensor<D>, targets: Tensor<D> | Tensor<'i32'>, options: LossOptions = {}): Tensor<D> {
    return crossEntropy(this.#session, logits, targets, options);
  }

  /**
   * Runs `fn` with autograd recording off: the ops it runs are not recorded even where their
   * inputs require grad, and their results do not require grad (for evaluation, and for updates
   * made by hand). Returns what `fn` returns; `fn` must be synchronous. Nests; `gpu.grad` inside
   * records again.
   */
  noGrad<T>(fn: () => T): T {
    this.#session.assertLive();
    if (typeof fn !== 'function') throw new InvalidArgumentError(`noGrad: fn must be a function, got ${describeValue(fn)}`);
    const result = this.#session.gradMode.run(false, fn);
    if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
      throw new InvalidArgumentError('noGrad: fn must be synchronous (it returned a promise); the ops after an await would be recorded');
    }
    return result;
  }

  /**
   * The gradient of a function's value with respect to its inputs, without touching any
   * {@link Tensor.grad}: `fn` runs on leaves over the inputs' storage (float tensors; they need not
   * require grad), must return a one-element tensor, and gets `grads[i]` = d value / d inputs[i]
   * (zeros where the value does not depend on an input). The tensors `fn` creates are disposed as
   * in {@link GpuCompute.scope}; `value` and `grads` are the caller's. Recording is on inside `fn`,
   * even under {@link GpuCompute.noGrad}.
   *
   * ```ts
   * const { value, grads: [dx] } = gpu.grad((x) => gpu.sum(gpu.mul(x, x)), [x]); // dx = 2x
   * ```
   */
  grad<A extends Tensor[]>(fn: (...inputs: A) => Tensor, inputs: A): GradResult {
    return gradOf(this.#session, fn, inputs);
  }

  // ----------------------------------------------- memory, streams, life

  /**
   * Runs `fn` and disposes every tensor created while it ran, except the ones it returns (a
   * tensor, or tensors inside arrays, Maps, Sets and plain objects) and those passed to
   * {@link GpuCompute.keep}; if `fn` throws, all of them. Returned tensors belong to the
   * enclosing scope when scopes nest. Memory comes back at once, where a forgotten `dispose()`
   * waits for the garbage collector, which runs only when the event loop gets control:
   *
   * ```ts
   * for (let step = 0; step < 1000; step++) {
   *   const loss = gpu.scope(() => {
   *     const d = gpu.sub(model(x), y); // disposed when the scope ends
   *     return gpu.mean(gpu.mul(d, d)); // returned: the caller disposes it
   *   });
   *   losses.push(loss.toArraySync()[0]!);
   *   loss.dispose();
   * }
   * ```
   * `fn` must be synchronous: one that returns a promise is refused with InvalidArgumentError.
   */
  scope<T>(fn: () => T): T {
    this.#session.assertLive();
    return this.#session.scopes.run('scope', fn);
  }

  /**
   * Records `fn`, a function of GpuCompute ops, once and returns a function that replays it with
   * new inputs of the same shapes and dtypes as `exampleInputs`: on CUDA one graph launch for the
   * whole function instead of a launch (and its host cost) per op. `fn` runs once eagerly first
   * (compiling and tuning what it uses), then once recorded on a private stream; the tensors it
   * creates and does not return are disposed as in {@link GpuCompute.scope}, and their memory stays
   * reserved to the graph until the capture is disposed. A call copies its inputs into the
   * capture's input slots, replays, and returns copies of the outputs (the caller disposes them).
   *
   * ```ts
   * const step = gpu.capture((x, h) => gpu.tanh(gpu.add(gpu.matmul(x, w), h)), [x0, h0]);
   * const h1 = step(x1, h0); // one graph launch
   * step.dispose();
   * ```
   * `fn` must return tensors its ops created (a tensor, an array or an object of them). What a
   * graph cannot hold throws {@link CaptureError} while recording: host reads and writes
   * (`toArray`, `gpu.tensor`, `svd`'s host steps), `synchronize`, a nested capture; so does a call
   * with inputs of other shapes. Random ops without a seed draw their seed when recorded, so each
   * replay repeats their numbers. Backends without graphs (the CPU, WebGPU, HIP) run `fn`
   * eagerly with the same checks; `graphed` says which.
   */
  capture<A extends Tensor[], R extends CaptureResult>(fn: (...inputs: A) => R, exampleInputs: A): CapturedFunction<A, R> {
    return capture(this.#session, fn, exampleInputs);
  }

  /** Exempts `t` from every {@link GpuCompute.scope}: no scope disposes it, the caller does. Returns `t`. */
  keep<D extends DType>(t: Tensor<D>): Tensor<D> {
    this.#session.checkTensor('keep', t, 't');
    this.#session.scopes.keep(t);
    return t;
  }

  /** Pool counters: bytes in use, cached, peak, live allocations, limit. */
  memoryStats(): PoolStats {
    this.#session.assertLive();
    return this.#session.backend.memoryStats();
  }

  /** Returns cached, unused pool memory to the device. */
  trim(): void {
    this.#session.assertLive();
    this.#session.backend.trim();
  }

  /** Waits until all queued work has finished. */
  synchronize(): void {
    this.#session.assertLive();
    this.#session.backend.synchronize();
  }

  /** A new stream for concurrent work (see {@link GpuCompute.setStream}). */
  createStream(): BackendStream {
    this.#session.assertLive();
    return this.#session.backend.createStream();
  }

  /** Queues later ops on `stream`, one that {@link GpuCompute.createStream} of this instance made (or its current stream). */
  setStream(stream: BackendStream): void {
    this.#session.assertLive();
    if (typeof stream !== 'object' || stream === null) {
      throw new InvalidArgumentError(`setStream: stream must be a stream from createStream(), got ${describeValue(stream)}`);
    }
    this.#session.backend.setStream(stream);
  }

  /** The stream ops are queued on. */
  currentStream(): BackendStream {
    this.#session.assertLive();
    return this.#session.backend.currentStream();
  }

  /** Releases the backend and its memory; every tensor of this instance becomes unusable. */
  dispose(): void {
    this.#session.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /**
   * Throws unless `t` is a live tensor of this GpuCompute. For code that adds
   * ops on top of the backend so it validates like the built-in ones.
   */
  checkTensor(op: string, t: unknown, name: string): asserts t is Tensor {
    this.#session.checkTensor(op, t, name);
  }
}

// The plain unary ops' methods, installed from the op table by the static block above.
export interface GpuCompute extends PlainUnaryMethods {}

// Tensor#to takes a GpuCompute, so it is declared and installed here rather than in tensor-methods.ts.
declare module './tensor/tensor.js' {
  interface Tensor<D extends DType = DType> {
    /**
     * A copy on `target`, another GpuCompute (another device, or another backend), which owns it:
     * between CUDA devices device to device (peer to peer where they can reach each other, peer
     * access being enabled on the first copy), otherwise through host memory. Ordered after the
     * work queued on this tensor; the result is ready for `target`'s ops at once. On this
     * tensor's own GpuCompute, a copy like `clone()`.
     */
    to(target: GpuCompute): Tensor<D>;
  }
}

Object.defineProperty(Tensor.prototype, 'to', {
  value: function (this: Tensor, target: GpuCompute) {
    return to(this.owner as Session, this, target);
  },
  writable: true,
  configurable: true,
});
