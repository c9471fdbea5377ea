/**
 * The front-end of `gpu.matmul(a, b, options)` and `gpu.linear(x, weight, bias, activation)`:
 * argument validation, NumPy-style batch broadcasting, output allocation, and the split of
 * a batched product into the fewest backend calls whose operands each advance by one
 * stride per batch entry (0 for a broadcast operand).
 *
 * Everything is checked here, before any backend call, so every backend reports bad input
 * with the same {@link InvalidArgumentError}.
 */
import { InvalidArgumentError } from '../errors.js';
import type { MatmulActivation, MatmulParams } from './backend/backend.js';
import type { DType } from './core/dtype.js';
import type { GpuCompute } from './gpu-compute.js';
import type { Tensor } from './tensor.js';
import type { TensorView } from './core/view.js';
import { formatShape } from './core/validation.js';

/** Activations `matmul` and `linear` can fuse into the product's epilogue. */
export const MATMUL_ACTIVATIONS: readonly MatmulActivation[] = ['relu', 'gelu', 'geluTanh', 'silu', 'sigmoid', 'tanh'];

/** Options of {@link matmul}: out = act(alpha·op(a)·op(b) + beta·c + bias). */
export interface MatmulOptions {
  /** Use aᵀ (swap a's last two dims). Default false. */
  transA?: boolean;
  /** Use bᵀ (swap b's last two dims). Default false. */
  transB?: boolean;
  /** Scale of the product. Default 1. */
  alpha?: number;
  /** Scale of `c`; default 1 when `c` is given. Needs `c` unless 0. */
  beta?: number;
  /** Added as beta·c: last two dims `[m, n]`, batch dims broadcast to the output's. */
  c?: Tensor;
  /** Row vector `[n]` added to every output row. */
  bias?: Tensor;
  /** Applied last, elementwise. */
  activation?: MatmulActivation | 'none';
  /**
   * 'highest' (default): f32 products in full f32. 'tf32': f32 inputs may use TF32 tensor
   * cores (10-bit mantissa products, f32 accumulation). f16/bf16 always use tensor cores.
   */
  precision?: 'highest' | 'tf32';
  /** CUDA: our kernels, cuBLAS, or 'auto' (default: whichever the autotuner measured faster). */
  engine?: 'auto' | 'kernels' | 'cublas';
  /** CUDA: time candidate kernels on first use of a shape class (default true). */
  autotune?: boolean;
}

/** The validated, resolved form of {@link MatmulOptions}. */
interface ResolvedOptions {
  transA: boolean;
  transB: boolean;
  alpha: number;
  beta: number;
  activation: MatmulActivation | undefined;
  precision: 'highest' | 'tf32';
  engine: 'auto' | 'kernels' | 'cublas';
  autotune: boolean;
}

/** One backend call of a batched product: element offsets into each operand and its batch strides. */
export interface MatmulCall {
  aOffset: number;
  bOffset: number;
  cOffset: number;
  outOffset: number;
  batch: number;
  aBatchStride: number;
  bBatchStride: number;
  cBatchStride: number;
  /** Rows of this call's product (m, or batch·m when the batch was folded into the rows). */
  m: number;
}

/** How a product of the given shapes runs. */
export interface MatmulPlan {
  outShape: number[];
  m: number;
  n: number;
  k: number;
  calls: MatmulCall[];
}

const MATMUL_DTYPES: readonly DType[] = ['f32', 'f16', 'bf16'];

/**
 * Shapes, batch broadcasting and call split of `op(a) · op(b)` (+ `c` of shape `cShape`).
 * Exported for tests; {@link matmul} is the public entry.
 */
export function planMatmul(
  op: string,
  aShape: readonly number[],
  bShape: readonly number[],
  transA: boolean,
  transB: boolean,
  cShape?: readonly number[],
): MatmulPlan {
  if (aShape.length < 2 || bShape.length < 2) {
    throw new InvalidArgumentError(
      `${op}: operands need at least 2 dims (got a ${formatShape(aShape)}, b ${formatShape(bShape)}); reshape a vector to [1, k] or [k, 1]`,
    );
  }
  const [aRows, aCols] = lastTwo(aShape);
  const [bRows, bCols] = lastTwo(bShape);
  const m = transA ? aCols : aRows;
  const k = transA ? aRows : aCols;
  const kb = transB ? bCols : bRows;
  const n = transB ? bRows : bCols;
  if (k !== kb) {
    throw new InvalidArgumentError(
      `${op}: inner dimensions differ: op(a) is ${m}x${k} (a ${formatShape(aShape)}${transA ? ', transA' : ''}) but op(b) is ` +
        `${kb}x${n} (b ${formatShape(bShape)}${transB ? ', transB' : ''})`,
    );
  }
  const aBatch = aShape.slice(0, -2);
  const bBatch = bShape.slice(0, -2);
  const rank = Math.max(aBatch.length, bBatch.length, cShape ? cShape.length - 2 : 0);
  const batchShape = new Array<number>(rank);
  for (let i = 0; i < rank; i++) {
    const da = dimFromRight(aBatch, rank, i);
    const db = dimFromRight(bBatch, rank, i);
    if (da !== db && da !== 1 && db !== 1) {
      throw new InvalidArgumentError(
        `${op}: batch dims of a ${formatShape(aShape)} and b ${formatShape(bShape)} do not broadcast (dim ${i - rank - 2} is ${da} vs ${db})`,
      );
    }
    batchShape[i] = da === 1 ? db : da;
  }
  const outShape = [...batchShape, m, n];
  let cBatch: readonly number[] = [];
  if (cShape) {
    const [cRows, cCols] = cShape.length >= 2 ? lastTwo(cShape) : [-1, -1];
    cBatch = cShape.slice(0, -2);
    const fits =
      cShape.length >= 2 &&
      cRows === m &&
      cCols === n &&
      cBatch.every((d, i) => d === 1 || d === batchShape[rank - cBatch.length + i]);
    if (!fits) {
      throw new InvalidArgumentError(
        `${op}: c ${formatShape(cShape)} must have last dims [${m}, ${n}] and batch dims that broadcast to the output ${formatShape(outShape)}`,
      );
    }
  }
  return { outShape, m, n, k, calls: splitBatch(batchShape, aBatch, bBatch, cShape ? cBatch : undefined, m, n, k, transA) };
}

/**
 * Splits the batch into calls. Dims from `s` on are done by one call when every operand either
 * repeats over all of them (stride 0) or has all of them (stride = its matrix size); the dims
 * before `s` loop on the host. The largest such suffix gives the fewest calls.
 */
function splitBatch(
  batchShape: readonly number[],
  aBatch: readonly number[],
  bBatch: readonly number[],
  cBatch: readonly number[] | undefined,
  m: number,
  n: number,
  k: number,
  transA: boolean,
): MatmulCall[] {
  const rank = batchShape.length;
  const hasC = cBatch !== undefined;
  const operands = [
    { dims: aBatch, matrix: m * k },
    { dims: bBatch, matrix: k * n },
    { dims: cBatch ?? [], matrix: m * n },
  ].map(({ dims, matrix }) => {
    const padded = batchShape.map((_, i) => dimFromRight(dims, rank, i));
    // Element stride of each batch dim inside this operand; 0 where it repeats.
    const strides = new Array<number>(rank);
    let s = matrix;
    for (let i = rank - 1; i >= 0; i--) {
      strides[i] = padded[i] === 1 ? 0 : s;
      s *= padded[i]!;
    }
    return { padded, strides, matrix };
  });
  const collapsible = (start: number) =>
    operands.map(({ padded, matrix }) => {
      const dims = padded.slice(start);
      if (dims.every((d) => d === 1)) return 0;
      if (dims.every((d, i) => d === batchShape[start + i])) return matrix;
      return undefined;
    });
  let start = 0;
  let inner = collapsible(0);
  while (inner.some((s) => s === undefined)) inner = collapsible(++start);
  const [aStride, bStride, cStride] = inner as [number, number, number];
  const innerBatch = batchShape.slice(start).reduce((p, d) => p * d, 1);
  const outer = batchShape.slice(0, start);
  const calls: MatmulCall[] = [];
  const index = new Array<number>(outer.length).fill(0);
  const outerCount = outer.reduce((p, d) => p * d, 1);
  for (let c = 0; c < outerCount; c++) {
    let outOffset = 0;
    let outStride = innerBatch * m * n;
    for (let i = outer.length - 1; i >= 0; i--) {
      outOffset += index[i]! * outStride;
      outStride *= outer[i]!;
    }
    const offset = (which: number) => index.reduce((sum, idx, i) => sum + idx * operands[which]!.strides[i]!, 0);
    calls.push(foldBatch({
      aOffset: offset(0),
      bOffset: offset(1),
      cOffset: offset(2),
      outOffset,
      batch: innerBatch,
      aBatchStride: aStride,
      bBatchStride: bStride,
      cBatchStride: cStride,
      m,
    }, m, k, n, transA, hasC));
    for (let i = outer.length - 1; i >= 0; i--) {
      if (++index[i]! < outer[i]!) break;
      index[i] = 0;
    }
  }
  return calls;
}

/**
 * A batch of row-major A matrices stored back to back times one shared B is one taller
 * product (batch·m rows), which kernels run far better than many small ones. C must then be
 * absent or stored back to back too (a broadcast C would have to repeat every m rows).
 */
function foldBatch(call: MatmulCall, m: number, k: number, n: number, transA: boolean, hasC: boolean): MatmulCall {
  const foldable =
    call.batch > 1 && !transA && call.bBatchStride === 0 && call.aBatchStride === m * k && (!hasC || call.cBatchStride === m * n);
  if (!foldable) return call;
  return { ...call, m: call.batch * m, batch: 1, aBatchStride: 0, cBatchStride: 0 };
}

/**
 * out = act(alpha·op(a)·op(b) + beta·c + bias) for 2-D or batched (3-D, 4-D, ...) tensors with
 * NumPy batch broadcasting; f32, f16 or bf16 (f16/bf16 accumulate in f32).
 */
export function matmul(gpu: GpuCompute, a: Tensor, b: Tensor, options: MatmulOptions = {}): Tensor {
  const op = 'matmul';
  gpu.checkTensor(op, a, 'a');
  gpu.checkTensor(op, b, 'b');
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`${op}: options must be an object`);
  const dtype = checkDType(op, a, 'a');
  if (b.dtype !== dtype) throw mismatch(op, 'b', b, dtype);
  const { c, bias } = options;
  if (c !== undefined) {
    gpu.checkTensor(op, c, 'c');
    if (c.dtype !== dtype) throw mismatch(op, 'c', c, dtype);
  }
  const resolved = resolveOptions(op, options);
  const plan = planMatmul(op, a.shape, b.shape, resolved.transA, resolved.transB, c?.shape);
  if (bias !== undefined) checkBias(gpu, op, bias, plan.n, dtype);
  return run(gpu, plan, a, b, c, bias, resolved);
}

/**
 * A dense layer, x·weightᵀ + bias followed by `activation`, as ONE fused product:
 * x `[..., in]` (a vector `[in]` too), weight `[out, in]` (PyTorch's layout), bias `[out]`.
 */
export function linear(
  gpu: GpuCompute,
  x: Tensor,
  weight: Tensor,
  bias?: Tensor,
  activation?: MatmulActivation | 'none',
  options: Pick<MatmulOptions, 'precision' | 'engine' | 'autotune'> = {},
): Tensor {
  const op = 'linear';
  gpu.checkTensor(op, x, 'x');
  gpu.checkTensor(op, weight, 'weight');
  const dtype = checkDType(op, x, 'x');
  if (weight.dtype !== dtype) throw mismatch(op, 'weight', weight, dtype);
  if (weight.rank !== 2) throw new InvalidArgumentError(`${op}: weight must be [out, in], got ${weight.toString()}`);
  const [outFeatures, inFeatures] = weight.shape as [number, number];
  if (x.rank < 1 || x.shape[x.rank - 1] !== inFeatures) {
    throw new InvalidArgumentError(`${op}: x ${formatShape(x.shape)} must end in the ${inFeatures} input features of weight ${formatShape(weight.shape)}`);
  }
  if (bias !== undefined) checkBias(gpu, op, bias, outFeatures, dtype);
  const resolved = resolveOptions(op, { ...options, transB: true, activation });
  // Every leading dim of x is a row of one product with the shared weight.
  const rows = x.size / inFeatures;
  const plan = planMatmul(op, [rows, inFeatures], weight.shape, false, true);
  const out = run(gpu, plan, x, weight, undefined, bias, resolved);
  const outShape = [...x.shape.slice(0, -1), outFeatures];
  if (outShape.length === 2) return out;
  try {
    return out.reshape(outShape);
  } finally {
    out.dispose();
  }
}

function run(
  gpu: GpuCompute,
  plan: MatmulPlan,
  a: Tensor,
  b: Tensor,
  c: Tensor | undefined,
  bias: Tensor | undefined,
  o: ResolvedOptions,
): Tensor {
  const out = gpu.empty(plan.outShape, a.dtype);
  if (out.size === 0) return out;
  try {
    const av = a.view;
    const bv = b.view;
    const ov = out.view;
    const cv = c && o.beta !== 0 ? c.view : undefined;
    const biasView = bias?.view;
    const { n, k } = plan;
    for (const call of plan.calls) {
      const rowsPerEntry = call.m;
      const params: MatmulParams = {
        a: sub(av, call.aOffset, call.batch, call.aBatchStride, o.transA ? [k, rowsPerEntry] : [rowsPerEntry, k]),
        b: sub(bv, call.bOffset, call.batch, call.bBatchStride, o.transB ? [n, k] : [k, n]),
        out: sub(ov, call.outOffset, call.batch, rowsPerEntry * n, [rowsPerEntry, n]),
        m: rowsPerEntry,
        n,
        k,
        batch: call.batch,
        aBatchStride: call.aBatchStride,
        bBatchStride: call.bBatchStride,
        cBatchStride: call.cBatchStride,
        transA: o.transA,
        transB: o.transB,
        alpha: o.alpha,
        beta: cv ? o.beta : 0,
        precision: o.precision,
        engine: o.engine,
        autotune: o.autotune,
      };
      if (cv) params.c = sub(cv, call.cOffset, call.batch, call.cBatchStride, [rowsPerEntry, n]);
      if (biasView) params.bias = biasView;
      if (o.activation) params.activation = o.activation;
      gpu.backend.matmul(params);
    }
    return out;
  } catch (err) {
    out.dispose();
    throw err;
  }
}

/**
 * The part of `view` one call reads or writes: from `offset`, `batch` matrices of shape `matrix`
 * `stride` elements apart, or a single matrix when the operand repeats (stride 0).
 */
function sub(view: TensorView, offset: number, batch: number, stride: number, matrix: [number, number]): TensorView {
  const entries = stride === 0 ? 1 : batch;
  const size = (entries - 1) * stride + matrix[0] * matrix[1];
  return { buffer: view.buffer, dtype: view.dtype, shape: entries === 1 ? matrix : [entries, ...matrix], offset: view.offset + offset, size };
}

function resolveOptions(op: string, options: MatmulOptions): ResolvedOptions {
  const transA = flag(op, 'transA', options.transA);
  const transB = flag(op, 'transB', options.transB);
  const alpha = finite(op, 'alpha', options.alpha ?? 1);
  const hasC = options.c !== undefined;
  const beta = finite(op, 'beta', options.beta ?? (hasC ? 1 : 0));
  if (!hasC && beta !== 0) throw new InvalidArgumentError(`${op}: beta is ${beta} but no c was given (beta scales c)`);
  const act = options.activation;
  if (act !== undefined && act !== 'none' && !MATMUL_ACTIVATIONS.includes(act)) {
    throw new InvalidArgumentError(`${op}: unknown activation ${String(act)} (use ${MATMUL_ACTIVATIONS.join(', ')} or 'none')`);
  }
  const precision = options.precision ?? 'highest';
  if (precision !== 'highest' && precision !== 'tf32') {
    throw new InvalidArgumentError(`${op}: precision must be 'highest' or 'tf32', got ${String(precision)}`);
  }
  const engine = options.engine ?? 'auto';
  if (engine !== 'auto' && engine !== 'kernels' && engine !== 'cublas') {
    throw new InvalidArgumentError(`${op}: engine must be 'auto', 'kernels' or 'cublas', got ${String(engine)}`);
  }
  const autotune = flag(op, 'autotune', options.autotune ?? true);
  return { transA, transB, alpha, beta, activation: act === 'none' ? undefined : act, precision, engine, autotune };
}

function checkDType(op: string, t: Tensor, name: string): DType {
  if (!MATMUL_DTYPES.includes(t.dtype)) {
    throw new InvalidArgumentError(`${op}: ${name} must be f32, f16 or bf16, got ${t.toString()}; cast it first, e.g. gpu.cast(x, 'f32')`);
  }
  return t.dtype;
}

function checkBias(gpu: GpuCompute, op: string, bias: Tensor, n: number, dtype: DType): void {
  gpu.checkTensor(op, bias, 'bias');
  if (bias.dtype !== dtype) throw mismatch(op, 'bias', bias, dtype);
  if (bias.rank !== 1 || bias.shape[0] !== n) {
    throw new InvalidArgumentError(`${op}: bias must be a vector [${n}] (one value per output column), got ${bias.toString()}`);
  }
}

function mismatch(op: string, name: string, t: Tensor, dtype: DType): InvalidArgumentError {
  return new InvalidArgumentError(
    `${op}: dtype mismatch: ${name} is ${t.dtype} but the product is ${dtype}; there is no implicit promotion, cast with gpu.cast(x, '${dtype}')`,
  );
}

function flag(op: string, name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`${op}: ${name} must be a boolean, got ${String(value)}`);
  return value;
}

function finite(op: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(`${op}: ${name} must be a finite number, got ${String(value)}`);
  }
  return value;
}

function lastTwo(shape: readonly number[]): [number, number] {
  return [shape[shape.length - 2]!, shape[shape.length - 1]!];
}

/** Dim `i` of a batch shape right-aligned inside `rank` dims (1 where it has none). */
function dimFromRight(dims: readonly number[], rank: number, i: number): number {
  return dims[dims.length - rank + i] ?? 1;
}
