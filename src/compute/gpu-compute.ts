/**
 * GpuCompute: the entry point most users touch. It picks a backend, creates
 * tensors, and runs every op once against the {@link Backend} interface after
 * validating shapes, dtypes, axes, owners and lifetimes, so each backend only
 * executes and every backend reports bad input the same way.
 */
import { DisposedError, InvalidArgumentError } from '../errors.js';
import { BACKEND_KINDS, type Backend, type BackendKind, type BackendStream, type DeviceInfo, type PoolStats } from './backend/backend.js';
import { type ActivationGradOp, type BinaryOp, type UnaryOp } from './core/elementwise-ops.js';
import { type ReduceOp } from './core/reduce-plan.js';
import { type MatmulActivation } from './core/matmul-plan.js';
import { openBackend, type SkippedBackend } from './backend-selection.js';
import { broadcastShapes, planBroadcast } from './core/broadcast.js';
import { dtypeSize, isFloatDType, toBf16Array, toF16Array, type DType } from './core/dtype.js';
import { linear, matmul, type MatmulOptions } from './matmul-op.js';
import { svd, type SvdOptions, type SvdResult } from './svd-op.js';
import { attention, type AttentionOptions, type AttentionResult } from './attention-op.js';
import {
  gru,
  gruCell,
  gruRollout,
  type GruCommonOptions,
  type GruLayerWeights,
  type GruOptions,
  type GruResult,
  type GruRolloutOptions,
  type GruRolloutResult,
  type GruWeights,
} from './gru-op.js';
import { LOG_LEVELS, Logger, type LoggerFunction, type LogLevelSetting } from './core/logger.js';
import { resolvePoolLimit } from './core/pool-limit.js';
import { selectDevice, type DeviceRequirements, type DeviceSelection } from './select-device.js';
import { Tensor, TensorStorage, type StorageOwner } from './tensor.js';
import type { BackendBuffer } from './core/view.js';
import { shapeSize } from './core/shape.js';
import { formatShape } from './core/shape.js';
import {
  normalizeAxis,
  validateDType,
  validateFinite,
  validateSeed,
  validateShape,
} from './core/validation.js';

/** Options of {@link GpuCompute.create}. */
export interface GpuComputeOptions {
  /** Which backend; 'auto' (default) tries CUDA, HIP, Metal, then the CPU. */
  backend?: 'auto' | BackendKind;
  /** Device ordinal within the backend (default 0). */
  device?: number;
  /** Receives log messages (default: the console, prefixed `[gpucompute]`). */
  logger?: LoggerFunction;
  /** Lowest level delivered (default 'warn'). */
  logLevel?: LogLevelSetting;
  /** Cap on pooled device memory in bytes (default: env `GPUCOMPUTE_POOL_LIMIT`, else none). */
  poolLimitBytes?: number;
}

/** Elements accepted by {@link GpuCompute.tensor}. */
export type TensorData =
  | number[]
  | Float32Array
  | Float64Array
  | Int32Array
  | Int16Array
  | Int8Array
  | Uint8Array
  | Uint16Array
  | Uint32Array;

/** Options of {@link GpuCompute.rand}: uniform in [low, high). */
export interface RandOptions<D extends DType = DType> {
  /** Philox key; default: the next seed of this GpuCompute's sequence (0, 1, 2, ...). */
  seed?: number;
  dtype?: D;
  low?: number;
  high?: number;
}

/** Options of {@link GpuCompute.randn}: normal(mean, std). */
export interface RandnOptions<D extends DType = DType> {
  seed?: number;
  dtype?: D;
  mean?: number;
  std?: number;
}

/** Options of the reductions. Without `axis` they reduce over all elements. */
export interface ReduceOptions {
  /** Axis to reduce (negative counts from the end). */
  axis?: number;
  /** Keep the reduced axis (or, for all, every axis) with extent 1. */
  keepDims?: boolean;
}

/** GELU form: exact (erf) or the tanh approximation. */
export interface GeluOptions {
  approximate?: 'none' | 'tanh';
}

/** Activations with a backward op in {@link GpuCompute.activationGrad}. */
export type ActivationName = 'relu' | 'leakyRelu' | 'sigmoid' | 'tanh' | 'gelu' | 'geluTanh' | 'silu' | 'softplus';

const ACTIVATION_GRAD: Record<ActivationName, ActivationGradOp> = {
  relu: 'reluGrad',
  leakyRelu: 'leakyReluGrad',
  sigmoid: 'sigmoidGrad',
  tanh: 'tanhGrad',
  gelu: 'geluGrad',
  geluTanh: 'geluTanhGrad',
  silu: 'siluGrad',
  softplus: 'softplusGrad',
};

/** Ops that accept i32 tensors; every other op needs a float dtype. */
const INT_UNARY = new Set<UnaryOp>(['neg', 'abs']);
const INT_BINARY = new Set<BinaryOp>(['add', 'sub', 'mul', 'max', 'min']);
const INT_REDUCE = new Set<ReduceOp>(['sum', 'max', 'min', 'argmax']);

const DEFAULT_LEAKY_SLOPE = 0.01;
const DEFAULT_LAYER_NORM_EPS = 1e-5;
const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

/** Tensors, ops and memory on one device, through one backend. */
export class GpuCompute implements StorageOwner {
  /** The backend executing the ops (advanced: raw access for custom ops). */
  readonly backend: Backend;
  /** Backends that `auto` passed over, and why (empty for an explicit backend). */
  readonly skipped: readonly SkippedBackend[];
  /** Where this instance logs. */
  readonly logger: Logger;
  private isDisposed = false;
  private leakReported = false;
  private nextSeed = 0;

  private constructor(backend: Backend, skipped: readonly SkippedBackend[], logger: Logger) {
    this.backend = backend;
    this.skipped = Object.freeze([...skipped]);
    this.logger = logger;
  }

  /**
   * Opens a backend. With `backend: 'auto'` (the default) it takes the first of
   * CUDA, HIP, Metal and the CPU that works, logs the fallback at warn and lists
   * what it skipped in {@link GpuCompute.skipped}; an explicit backend that is
   * not available throws {@link BackendUnavailableError}.
   */
  static async create(options: GpuComputeOptions = {}): Promise<GpuCompute> {
    const op = 'GpuCompute.create';
    const requested = options.backend ?? 'auto';
    if (requested !== 'auto' && !BACKEND_KINDS.includes(requested)) {
      throw new InvalidArgumentError(`${op}: unknown backend ${String(requested)} (use 'auto', ${BACKEND_KINDS.map((k) => `'${k}'`).join(', ')})`);
    }
    const device = options.device ?? 0;
    if (!Number.isSafeInteger(device) || device < 0) {
      throw new InvalidArgumentError(`${op}: device must be an integer ≥ 0, got ${String(device)}`);
    }
    const logLevel = options.logLevel ?? 'warn';
    if (!LOG_LEVELS.includes(logLevel)) {
      throw new InvalidArgumentError(`${op}: unknown logLevel ${String(logLevel)} (use ${LOG_LEVELS.join(', ')})`);
    }
    if (options.logger !== undefined && typeof options.logger !== 'function') {
      throw new InvalidArgumentError(`${op}: logger must be a function (level, message) => void`);
    }
    const logger = new Logger(options.logger, logLevel);
    const poolLimitBytes = resolvePoolLimit(options.poolLimitBytes);
    const { backend, skipped } = await openBackend({
      backend: requested,
      device,
      logger,
      ...(poolLimitBytes === undefined ? {} : { poolLimitBytes }),
    });
    const gpu = new GpuCompute(backend, skipped, logger);
    if (logger.enabled('info')) {
      const info = backend.info();
      logger.info(`using ${info.backend} device ${info.ordinal}: ${info.deviceName} (${info.platform})`);
    }
    return gpu;
  }

  /**
   * Enumerates the local devices (CUDA devices and the CPU) and picks one by
   * the requirements, then by the most free memory. See {@link selectDevice}.
   */
  static selectDevice(requirements: DeviceRequirements = {}): Promise<DeviceSelection> {
    return selectDevice(requirements);
  }

  /** The device's capabilities, with a fresh free-memory reading. */
  get info(): DeviceInfo {
    this.assertLive();
    return this.backend.info();
  }

  /** The backend kind in use. */
  get kind(): BackendKind {
    return this.backend.kind;
  }

  /** True after {@link GpuCompute.dispose}. */
  get disposed(): boolean {
    return this.isDisposed;
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
    const op = 'tensor';
    this.assertLive();
    if (!Array.isArray(data) && !ArrayBuffer.isView(data)) {
      throw new InvalidArgumentError(`${op}: data must be an array of numbers or a typed array`);
    }
    const resolvedShape = validateShape(op, shape ?? [data.length]);
    if (dtype === undefined && data instanceof Uint16Array) {
      throw new InvalidArgumentError(`${op}: pass a dtype with a Uint16Array ('f16'/'bf16' read it as bit patterns)`);
    }
    const resolvedDType = dtype === undefined ? (data instanceof Int32Array ? 'i32' : 'f32') : validateDType(op, dtype);
    if (shapeSize(resolvedShape) !== data.length) {
      throw new InvalidArgumentError(
        `${op}: ${data.length} values do not fill shape ${formatShape(resolvedShape)} (${shapeSize(resolvedShape)} elements)`,
      );
    }
    const host = toHost(op, data, resolvedDType);
    const out = this.empty(resolvedShape, resolvedDType);
    if (out.size > 0) this.backend.write(out.view.buffer, host);
    return out;
  }

  /** An uninitialised tensor (its contents are whatever the pool block held). */
  empty<D extends DType = 'f32'>(shape: readonly number[], dtype: D = 'f32' as D): Tensor<D> {
    const op = 'empty';
    this.assertLive();
    const s = validateShape(op, shape);
    const d = validateDType(op, dtype) as D;
    // Empty tensors still get one element of storage so every tensor owns a real buffer.
    const bytes = Math.max(shapeSize(s), 1) * dtypeSize[d];
    return new Tensor(this, new TensorStorage(this, this.backend.alloc(bytes)), d, s);
  }

  /** A tensor of zeros. */
  zeros<D extends DType = 'f32'>(shape: readonly number[], dtype: D = 'f32' as D): Tensor<D> {
    return this.full(shape, 0, dtype);
  }

  /** A tensor of ones. */
  ones<D extends DType = 'f32'>(shape: readonly number[], dtype: D = 'f32' as D): Tensor<D> {
    return this.full(shape, 1, dtype);
  }

  /** A tensor filled with `value` (rounded to the dtype; an integer for i32). */
  full<D extends DType = 'f32'>(shape: readonly number[], value: number, dtype: D = 'f32' as D): Tensor<D> {
    const op = 'full';
    this.assertLive();
    checkScalar(op, value, validateDType(op, dtype));
    const out = this.empty(shape, dtype);
    if (out.size > 0) this.backend.fill(out.view, value);
    return out;
  }

  /** Uniform random numbers in [low, high) (default [0, 1)) from the seeded Philox stream. */
  rand<D extends DType = 'f32'>(shape: readonly number[], options: RandOptions<D> = {}): Tensor<D> {
    const op = 'rand';
    const low = validateFinite(op, 'low', options.low ?? 0);
    const high = validateFinite(op, 'high', options.high ?? 1);
    if (!(high > low)) throw new InvalidArgumentError(`${op}: high (${high}) must be greater than low (${low})`);
    return this.random(op, shape, options.dtype, options.seed, 'uniform', low, high);
  }

  /** Normal random numbers (default mean 0, std 1) from the seeded Philox stream. */
  randn<D extends DType = 'f32'>(shape: readonly number[], options: RandnOptions<D> = {}): Tensor<D> {
    const op = 'randn';
    const mean = validateFinite(op, 'mean', options.mean ?? 0);
    const std = validateFinite(op, 'std', options.std ?? 1);
    if (std < 0) throw new InvalidArgumentError(`${op}: std must be ≥ 0, got ${std}`);
    return this.random(op, shape, options.dtype, options.seed, 'normal', mean, std);
  }

  // ---------------------------------------------------------- binary ops

  /** a + b for tensors of the same shape and dtype (no broadcasting). */
  vectorAdd<D extends DType>(a: Tensor<D>, b: Tensor<D>): Tensor<D> {
    const op = 'vectorAdd';
    this.checkTensor(op, a, 'a');
    this.checkTensor(op, b, 'b');
    if (!sameShape(a.shape, b.shape)) {
      throw new InvalidArgumentError(`${op}: shapes ${formatShape(a.shape)} and ${formatShape(b.shape)} differ (use add() to broadcast)`);
    }
    return this.binary('add', a, b, op);
  }

  /** a + b with broadcasting; either side may be a JS number. */
  add<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return this.binary('add', a, b, 'add');
  }
  /** a − b with broadcasting. */
  sub<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return this.binary('sub', a, b, 'sub');
  }
  /** a · b with broadcasting. */
  mul<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return this.binary('mul', a, b, 'mul');
  }
  /** a / b with broadcasting (float dtypes only). */
  div<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return this.binary('div', a, b, 'div');
  }
  /** Elementwise maximum with broadcasting; NaN propagates. */
  maximum<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return this.binary('max', a, b, 'maximum');
  }
  /** Elementwise minimum with broadcasting; NaN propagates. */
  minimum<D extends DType>(a: Tensor<D> | number, b: Tensor<D> | number): Tensor<D> {
    return this.binary('min', a, b, 'minimum');
  }

  // ----------------------------------------------------------- unary ops

  neg<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('neg', x);
  }
  abs<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('abs', x);
  }
  exp<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('exp', x);
  }
  log<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('log', x);
  }
  sqrt<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('sqrt', x);
  }
  /** 1/√x. */
  rsqrt<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('rsqrt', x);
  }
  relu<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('relu', x);
  }
  /** x for x > 0, slope·x otherwise (default slope 0.01). */
  leakyRelu<D extends DType>(x: Tensor<D>, slope = DEFAULT_LEAKY_SLOPE): Tensor<D> {
    return this.unary('leakyRelu', x, validateFinite('leakyRelu', 'slope', slope));
  }
  sigmoid<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('sigmoid', x);
  }
  tanh<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('tanh', x);
  }
  /** x·Φ(x) (exact, erf) or its tanh approximation with `{ approximate: 'tanh' }`. */
  gelu<D extends DType>(x: Tensor<D>, options: GeluOptions = {}): Tensor<D> {
    return this.unary(geluForm('gelu', options) === 'tanh' ? 'geluTanh' : 'gelu', x);
  }
  /** x·sigmoid(x). */
  silu<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('silu', x);
  }
  /** log(1 + eˣ). */
  softplus<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.unary('softplus', x);
  }

  /**
   * Backward of an activation: dy · f'(x), with x the activation's input.
   * `slope` applies to leakyRelu; `approximate: 'tanh'` to gelu.
   */
  activationGrad<D extends DType>(
    name: ActivationName,
    x: Tensor<D>,
    dy: Tensor<D>,
    options: { slope?: number } & GeluOptions = {},
  ): Tensor<D> {
    const op = 'activationGrad';
    if (!Object.hasOwn(ACTIVATION_GRAD, name)) {
      throw new InvalidArgumentError(`${op}: unknown activation ${String(name)} (use ${Object.keys(ACTIVATION_GRAD).join(', ')})`);
    }
    const gradOp = name === 'gelu' && geluForm(op, options) === 'tanh' ? 'geluTanhGrad' : ACTIVATION_GRAD[name];
    const slope = validateFinite(op, 'slope', options.slope ?? DEFAULT_LEAKY_SLOPE);
    this.checkFloat(op, x, 'x');
    this.checkFloat(op, dy, 'dy');
    if (x.dtype !== dy.dtype) throw dtypeMismatch(op, x.dtype, dy.dtype);
    if (!sameShape(x.shape, dy.shape)) {
      throw new InvalidArgumentError(`${op}: x ${formatShape(x.shape)} and dy ${formatShape(dy.shape)} must have the same shape`);
    }
    const out = this.empty(x.shape, x.dtype);
    if (out.size > 0) this.backend.activationGrad(gradOp, x.view, dy.view, out.view, slope);
    return out;
  }

  // ------------------------------------------------------ row-wise ops

  /** Softmax over the last axis (stable: the row maximum is subtracted first). */
  softmax<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.softmaxOp('softmax', x, false);
  }

  /** log(softmax(x)) over the last axis, computed stably. */
  logSoftmax<D extends DType>(x: Tensor<D>): Tensor<D> {
    return this.softmaxOp('logSoftmax', x, true);
  }

  /**
   * Layer normalisation over the last axis: (x − mean)/√(var + eps)·gamma + beta,
   * with the biased variance. gamma and beta, when given, have shape [lastDim].
   */
  layerNorm<D extends DType>(x: Tensor<D>, gamma?: Tensor<D> | null, beta?: Tensor<D> | null, eps = DEFAULT_LAYER_NORM_EPS): Tensor<D> {
    const op = 'layerNorm';
    this.checkFloat(op, x, 'x');
    validateFinite(op, 'eps', eps);
    if (eps < 0) throw new InvalidArgumentError(`${op}: eps must be ≥ 0, got ${eps}`);
    const cols = lastDim(x);
    for (const [name, param] of [['gamma', gamma], ['beta', beta]] as const) {
      if (param === undefined || param === null) continue;
      this.checkTensor(op, param, name);
      if (param.dtype !== x.dtype) throw dtypeMismatch(op, x.dtype, param.dtype);
      if (param.rank !== 1 || param.shape[0] !== cols) {
        throw new InvalidArgumentError(`${op}: ${name} must have shape [${cols}] (the last dim of x ${formatShape(x.shape)}), got ${formatShape(param.shape)}`);
      }
    }
    const out = this.empty(x.shape, x.dtype);
    if (out.size > 0) {
      this.backend.layerNorm(x.view, gamma?.view, beta?.view, out.view, x.size / cols, cols, eps);
    }
    return out;
  }

  // --------------------------------------------------------- reductions

  /** Sum over an axis, or over everything (f32 results accumulate in at least f32; CPU in f64). */
  sum<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return this.reduceOp('sum', x, axisOrOptions) as Tensor<D>;
  }
  /** Mean over an axis or everything (float dtypes only; NaN for an empty axis). */
  mean<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return this.reduceOp('mean', x, axisOrOptions) as Tensor<D>;
  }
  /** Maximum over an axis or everything; NaN propagates. */
  max<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return this.reduceOp('max', x, axisOrOptions) as Tensor<D>;
  }
  /** Minimum over an axis or everything; NaN propagates. */
  min<D extends DType>(x: Tensor<D>, axisOrOptions?: number | ReduceOptions): Tensor<D> {
    return this.reduceOp('min', x, axisOrOptions) as Tensor<D>;
  }
  /** i32 index of the maximum (the first one; the first NaN if any) over an axis or everything (flat index). */
  argmax(x: Tensor, axisOrOptions?: number | ReduceOptions): Tensor<'i32'> {
    return this.reduceOp('argmax', x, axisOrOptions) as Tensor<'i32'>;
  }

  // ---------------------------------------------------- layout and misc

  /**
   * out = act(alpha·op(a)·op(b) + beta·c + bias): 2-D or batched (3-D, 4-D, NumPy-broadcast batch
   * dims) products in f32, f16 or bf16 (f32 accumulation). `precision: 'tf32'` lets f32 inputs use
   * tensor cores; `engine` picks our kernels, cuBLAS, or whichever the autotuner measured faster.
   */
  matmul<D extends DType>(a: Tensor<D>, b: Tensor<D>, options: MatmulOptions = {}): Tensor<D> {
    return matmul(this, a, b, options) as Tensor<D>;
  }

  /**
   * A dense layer in one fused kernel: x `[..., in]` · weightᵀ (`[out, in]`, PyTorch's layout)
   * + bias `[out]`, then `activation`.
   */
  linear<D extends DType>(
    x: Tensor<D>,
    weight: Tensor<D>,
    bias?: Tensor<D>,
    activation?: MatmulActivation | 'none',
    options: Pick<MatmulOptions, 'precision' | 'engine' | 'autotune'> = {},
  ): Tensor<D> {
    return linear(this, x, weight, bias, activation, options) as Tensor<D>;
  }

  /**
   * Truncated SVD of an f32 matrix `a` [m, n]: a ≈ u·diag(s)·v with u [m, k] and v [k, n]
   * orthonormal, s [k] descending, k = `rank`. Randomized range finder (q = rank + oversample
   * Gaussian columns keyed by `seed`, `powerIterations` re-orthonormalised power iterations), the
   * large products on the device; the small dense steps in float64 on the host for q ≤ 64, through
   * cuSOLVER on CUDA above that (where it is found). Defaults: rank min(6, m, n),
   * oversample 10, powerIterations 2 (torch.svd_lowrank's niter), seed 0 (deterministic).
   * `full: true` gives the exact SVD of a small matrix (min(m, n) ≤ 512; k = rank or min(m, n)).
   * Refuses NaN/±Infinity, non-2-D and non-f32 input. Synchronous.
   */
  svd(a: Tensor<'f32'>, options: SvdOptions = {}): SvdResult {
    return svd(this, a, options);
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
    return attention(this, q, k, v, options);
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
  gru<D extends DType>(x: Tensor<D>, h0: Tensor<D> | undefined, weights: GruWeights, options: GruOptions = {}): GruResult<D> {
    return gru(this, x, h0, weights, options) as GruResult<D>;
  }

  /** One GRU step (torch.nn.GRUCell): x [B, in] ([E, B, in] or shared), h [B, H] ([E, B, H]) → new h. */
  gruCell<D extends DType>(x: Tensor<D>, h: Tensor<D>, weights: GruLayerWeights, options: GruCommonOptions = {}): Tensor<D> {
    return gruCell(this, x, h, weights, options) as Tensor<D>;
  }

  /**
   * Autoregressive rollout: from `state` [B, S] each step runs the GRU stack, maps the last
   * layer's state through `outputProjection` (hidden → S) and feeds the prediction back as the
   * next input. Returns the predicted states [B, steps, S] ([E, B, steps, S]) and the final hidden state.
   */
  gruRollout<D extends DType>(state: Tensor<D>, h0: Tensor<D> | undefined, weights: GruWeights, options: GruRolloutOptions): GruRolloutResult<D> {
    return gruRollout(this, state, h0, weights, options) as GruRolloutResult<D>;
  }

  /** Swaps the last two dims (a 2-D transpose, batched over leading dims). */
  transpose<D extends DType>(x: Tensor<D>): Tensor<D> {
    const op = 'transpose';
    this.checkTensor(op, x, 'x');
    if (x.rank < 2) throw new InvalidArgumentError(`${op}: needs a tensor of rank ≥ 2, got ${x.toString()}`);
    const rows = x.shape[x.rank - 2]!;
    const cols = x.shape[x.rank - 1]!;
    const out = this.empty([...x.shape.slice(0, -2), cols, rows], x.dtype);
    if (out.size > 0) this.backend.transpose(x.view, out.view, x.size / (rows * cols), rows, cols);
    return out;
  }

  /**
   * Zeroes each element with probability p and scales the rest by 1/(1−p).
   * The mask comes from the Philox stream keyed by `seed`, so it is reproducible.
   */
  dropout<D extends DType>(x: Tensor<D>, p: number, seed?: number): Tensor<D> {
    const op = 'dropout';
    this.checkFloat(op, x, 'x');
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new InvalidArgumentError(`${op}: p must be in [0, 1], got ${String(p)}`);
    const key = seed === undefined ? this.takeSeed() : validateSeed(op, seed);
    if (p === 0) return this.copy(x);
    if (p === 1) return this.zeros(x.shape, x.dtype);
    const out = this.empty(x.shape, x.dtype);
    if (out.size > 0) this.backend.dropout(x.view, out.view, p, key);
    return out;
  }

  /** Converts to another dtype (float → i32 truncates toward zero and saturates; NaN → 0). */
  cast<T extends DType>(x: Tensor, dtype: T): Tensor<T> {
    const op = 'cast';
    this.checkTensor(op, x, 'x');
    const target = validateDType(op, dtype) as T;
    const out = this.empty(x.shape, target);
    if (out.size > 0) this.backend.cast(x.view, out.view);
    return out;
  }

  /** A copy of x with its own storage. */
  copy<D extends DType>(x: Tensor<D>): Tensor<D> {
    this.checkTensor('copy', x, 'x');
    const out = this.empty(x.shape, x.dtype);
    if (out.size > 0) this.backend.copy(out.view, x.view);
    return out;
  }

  // ----------------------------------------------- memory, streams, life

  /** Pool counters: bytes in use, cached, peak, live allocations, limit. */
  memoryStats(): PoolStats {
    this.assertLive();
    return this.backend.memoryStats();
  }

  /** Returns cached, unused pool memory to the device. */
  trim(): void {
    this.assertLive();
    this.backend.trim();
  }

  /** Waits until all queued work has finished. */
  synchronize(): void {
    this.assertLive();
    this.backend.synchronize();
  }

  /** A new stream for concurrent work (see {@link GpuCompute.setStream}). */
  createStream(): BackendStream {
    this.assertLive();
    return this.backend.createStream();
  }

  /** Queues later ops on `stream`. */
  setStream(stream: BackendStream): void {
    this.assertLive();
    this.backend.setStream(stream);
  }

  /** The stream ops are queued on. */
  currentStream(): BackendStream {
    this.assertLive();
    return this.backend.currentStream();
  }

  /** Releases the backend and its memory; every tensor of this instance becomes unusable. */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    this.backend.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** @internal StorageOwner: a tensor's last reference went away. */
  releaseBuffer(buffer: BackendBuffer): void {
    // After dispose() the backend has released everything at once.
    if (!this.isDisposed) this.backend.free(buffer);
  }

  /** @internal StorageOwner: the safety net freed a tensor that was never disposed. */
  reportLeak(description: string): void {
    // After dispose() nothing leaked: the backend released every buffer at once.
    if (this.leakReported || this.isDisposed) return;
    this.leakReported = true;
    this.logger.warn(
      `${description} was garbage-collected without dispose(); its memory was freed late. ` +
        `Call dispose() or declare tensors with \`using\` (reported once per GpuCompute).`,
    );
  }

  /**
   * Throws unless `t` is a live tensor of this GpuCompute. For code that adds
   * ops on top of the backend (e.g. matmul) so it validates like the built-in ones.
   */
  checkTensor(op: string, t: unknown, name: string): asserts t is Tensor {
    this.assertLive();
    if (!(t instanceof Tensor)) throw new InvalidArgumentError(`${op}: ${name} must be a Tensor, got ${describeValue(t)}`);
    t.assertLive();
    if (t.gpu !== this) {
      throw new InvalidArgumentError(
        `${op}: ${name} ${t.toString()} belongs to another GpuCompute (${deviceLabel(t.gpu)}), not this one (${deviceLabel(this)}); ` +
          `copy it over with gpu.tensor(await x.toArray(), x.shape, x.dtype)`,
      );
    }
  }

  // ------------------------------------------------------------ private

  private assertLive(): void {
    if (this.isDisposed) throw new DisposedError('GpuCompute');
  }

  private checkFloat(op: string, t: unknown, name: string): asserts t is Tensor {
    this.checkTensor(op, t, name);
    if (!isFloatDType(t.dtype)) {
      throw new InvalidArgumentError(
        `${op}: ${name} must be a float tensor (f32, f16 or bf16), got ${t.toString()}; cast it first, e.g. gpu.cast(x, 'f32')`,
      );
    }
  }

  private takeSeed(): number {
    return this.nextSeed++;
  }

  private random<D extends DType>(
    op: string,
    shape: readonly number[],
    dtype: D | undefined,
    seed: number | undefined,
    kind: 'uniform' | 'normal',
    a: number,
    b: number,
  ): Tensor<D> {
    this.assertLive();
    const d = validateDType(op, dtype ?? 'f32') as D;
    if (!isFloatDType(d)) throw new InvalidArgumentError(`${op}: dtype must be f32, f16 or bf16, got ${d}`);
    const key = seed === undefined ? this.takeSeed() : validateSeed(op, seed);
    const out = this.empty(shape, d);
    if (out.size > 0) this.backend.random(out.view, kind, key, a, b);
    return out;
  }

  private unary<D extends DType>(op: UnaryOp, x: Tensor<D>, alpha?: number): Tensor<D> {
    if (INT_UNARY.has(op)) this.checkTensor(op, x, 'x');
    else this.checkFloat(op, x, 'x');
    const out = this.empty(x.shape, x.dtype);
    if (out.size > 0) this.backend.unary(op, x.view, out.view, alpha);
    return out;
  }

  private binary<D extends DType>(kind: BinaryOp, a: Tensor<D> | number, b: Tensor<D> | number, op: string): Tensor<D> {
    if (typeof a === 'number' && typeof b === 'number') {
      throw new InvalidArgumentError(`${op}: at least one operand must be a Tensor`);
    }
    if (typeof a !== 'number') this.checkTensor(op, a, 'a');
    if (typeof b !== 'number') this.checkTensor(op, b, 'b');
    const dtype = (typeof a === 'number' ? (b as Tensor<D>) : a).dtype;
    if (typeof a !== 'number' && typeof b !== 'number' && a.dtype !== b.dtype) throw dtypeMismatch(op, a.dtype, b.dtype);
    if (!isFloatDType(dtype) && !INT_BINARY.has(kind)) {
      throw new InvalidArgumentError(`${op}: not defined for i32 tensors; cast to a float dtype first, e.g. gpu.cast(x, 'f32')`);
    }
    const left = typeof a === 'number' ? this.scalar(op, a, dtype) : a;
    const right = typeof b === 'number' ? this.scalar(op, b, dtype) : b;
    try {
      const plan = planBroadcast(op, left.shape, right.shape);
      const out = this.empty(broadcastShapes(op, left.shape, right.shape), dtype);
      if (out.size > 0) this.backend.binary(kind, left.view, right.view, out.view, plan);
      return out;
    } finally {
      if (left !== a) left.dispose();
      if (right !== b) right.dispose();
    }
  }

  /** A JS number operand as a shape-[] tensor of the other operand's dtype. */
  private scalar<D extends DType>(op: string, value: number, dtype: D): Tensor<D> {
    checkScalar(op, value, dtype);
    return this.full([], value, dtype);
  }

  private softmaxOp<D extends DType>(op: string, x: Tensor<D>, log: boolean): Tensor<D> {
    this.checkFloat(op, x, 'x');
    const cols = lastDim(x);
    const out = this.empty(x.shape, x.dtype);
    if (out.size > 0) this.backend.softmax(x.view, out.view, x.size / cols, cols, log);
    return out;
  }

  private reduceOp(op: ReduceOp, x: Tensor, axisOrOptions: number | ReduceOptions | undefined): Tensor {
    if (INT_REDUCE.has(op)) this.checkTensor(op, x, 'x');
    else this.checkFloat(op, x, 'x');
    const options: ReduceOptions = typeof axisOrOptions === 'number' ? { axis: axisOrOptions } : (axisOrOptions ?? {});
    const keepDims = options.keepDims ?? false;
    let outer: number;
    let axisLen: number;
    let inner: number;
    let outShape: number[];
    if (options.axis === undefined) {
      [outer, axisLen, inner] = [1, x.size, 1];
      outShape = keepDims ? x.shape.map(() => 1) : [];
    } else {
      const axis = normalizeAxis(op, options.axis, x.rank);
      outer = shapeSize(x.shape.slice(0, axis));
      axisLen = x.shape[axis]!;
      inner = shapeSize(x.shape.slice(axis + 1));
      outShape = keepDims ? x.shape.map((d, i) => (i === axis ? 1 : d)) : x.shape.filter((_, i) => i !== axis);
    }
    const outDType: DType = op === 'argmax' ? 'i32' : x.dtype;
    if (axisLen === 0 && outer * inner > 0 && (op === 'max' || op === 'min' || op === 'argmax')) {
      throw new InvalidArgumentError(`${op}: cannot reduce an empty axis of ${x.toString()} (${op} has no identity)`);
    }
    const out = this.empty(outShape, outDType);
    if (out.size === 0) return out;
    if (axisLen === 0) this.backend.fill(out.view, op === 'sum' ? 0 : NaN);
    else this.backend.reduce(op, x.view, out.view, { outer, axisLen, inner });
    return out;
  }
}

/** Refuses a scalar the dtype cannot hold exactly in meaning (non-integers for i32). */
function checkScalar(op: string, value: unknown, dtype: DType): void {
  if (typeof value !== 'number') throw new InvalidArgumentError(`${op}: value must be a number, got ${describeValue(value)}`);
  if (dtype === 'i32' && (!Number.isInteger(value) || value < I32_MIN || value > I32_MAX)) {
    throw new InvalidArgumentError(`${op}: ${value} is not an i32 value (an integer in [-2^31, 2^31))`);
  }
}

/** Host words for `data` in `dtype`. */
function toHost(op: string, data: TensorData, dtype: DType): ArrayBufferView {
  switch (dtype) {
    case 'f32':
      return data instanceof Float32Array ? data : Float32Array.from(data);
    case 'f16':
      return data instanceof Uint16Array ? data : toF16Array(data);
    case 'bf16':
      return data instanceof Uint16Array ? data : toBf16Array(data);
    case 'i32': {
      if (data instanceof Int32Array) return data;
      for (let i = 0; i < data.length; i++) {
        const v = data[i]!;
        if (!Number.isInteger(v) || v < I32_MIN || v > I32_MAX) {
          throw new InvalidArgumentError(`${op}: value ${v} at index ${i} is not an i32 value (an integer in [-2^31, 2^31))`);
        }
      }
      return Int32Array.from(data);
    }
  }
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function lastDim(x: Tensor): number {
  return x.rank === 0 ? 1 : x.shape[x.rank - 1]!;
}

function geluForm(op: string, options: GeluOptions): 'none' | 'tanh' {
  const form = options.approximate ?? 'none';
  if (form !== 'none' && form !== 'tanh') {
    throw new InvalidArgumentError(`${op}: approximate must be 'none' or 'tanh', got ${String(form)}`);
  }
  return form;
}

function dtypeMismatch(op: string, a: DType, b: DType): InvalidArgumentError {
  return new InvalidArgumentError(
    `${op}: dtype mismatch (${a} vs ${b}); there is no implicit promotion, cast one operand with gpu.cast(x, dtype)`,
  );
}

function deviceLabel(gpu: GpuCompute): string {
  if (gpu.disposed) return `${gpu.kind}, disposed`;
  const info = gpu.backend.info();
  return `${info.backend}:${info.ordinal} ${info.deviceName}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  return typeof value;
}
