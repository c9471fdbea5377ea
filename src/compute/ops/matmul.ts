/**
 * The front-end of `gpu.matmul(a, b, options)` and `gpu.linear(x, weight, bias, activation)`:
 * argument validation, NumPy-style batch broadcasting, output allocation, and the split of
 * a batched product into the fewest backend calls whose operands each advance by one
 * stride per batch entry (0 for a broadcast operand).
 *
 * Everything is checked here, before any backend call, so every backend reports bad input
 * with the same {@link InvalidArgumentError}.
 */
import { InvalidArgumentError } from '../../errors.js';
import { MATMUL_ACTIVATIONS, planMatmul, type MatmulActivation, type MatmulParams, type MatmulPlan } from '../core/matmul-plan.js';
import type { DType } from '../core/dtype.js';
import { checkChoice, checkFlag, checkOptions, optionKeys, validateFinite } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import type { TensorView } from '../core/view.js';
import { formatShape } from '../core/shape.js';

/** Options of `gpu.matmul`: out = act(alpha·op(a)·op(b) + beta·c + bias). */
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

/** The options of `gpu.linear` (the GpuCompute method spells the same Pick, which the package exports through MatmulOptions). */
export type LinearOptions = Pick<MatmulOptions, 'precision' | 'engine' | 'autotune'>;

/** The keys {@link MatmulOptions} takes. */
export const MATMUL_OPTIONS = optionKeys<MatmulOptions>({
  transA: true,
  transB: true,
  alpha: true,
  beta: true,
  c: true,
  bias: true,
  activation: true,
  precision: true,
  engine: true,
  autotune: true,
});
/** The keys {@link LinearOptions} takes. */
export const LINEAR_OPTIONS = optionKeys<LinearOptions>({ precision: true, engine: true, autotune: true });

const MATMUL_DTYPES: readonly DType[] = ['f32', 'f16', 'bf16'];
const ACTIVATION_CHOICES: readonly (MatmulActivation | 'none')[] = [...MATMUL_ACTIVATIONS, 'none'];
const PRECISIONS: readonly ResolvedOptions['precision'][] = ['highest', 'tf32'];
const ENGINES: readonly ResolvedOptions['engine'][] = ['auto', 'kernels', 'cublas'];

/**
 * out = act(alpha·op(a)·op(b) + beta·c + bias) for 2-D or batched (3-D, 4-D, ...) tensors with
 * NumPy batch broadcasting; f32, f16 or bf16 (f16/bf16 accumulate in f32).
 */
export function matmul<D extends DType>(s: Session, a: Tensor<D>, b: Tensor<D>, opts?: unknown): Tensor<D> {
  const op = 'matmul';
  s.checkTensor(op, a, 'a');
  s.checkTensor(op, b, 'b');
  const options = checkOptions<MatmulOptions>(op, opts, MATMUL_OPTIONS);
  const dtype = checkDType(op, a, 'a');
  if (b.dtype !== dtype) throw mismatch(op, 'b', b, dtype);
  const { c, bias } = options;
  if (c !== undefined) {
    s.checkTensor(op, c, 'c');
    if (c.dtype !== dtype) throw mismatch(op, 'c', c, dtype);
  }
  const resolved = resolveOptions(op, options, options.transB, options.activation);
  const plan = planMatmul(op, a.shape, b.shape, resolved.transA, resolved.transB, c?.shape);
  if (bias !== undefined) checkBias(s, op, bias, plan.n, dtype);
  s.assertSupports(op, 'matmul');
  return run(s, op, plan, a, b, c, bias, resolved) as Tensor<D>;
}

/**
 * A dense layer, x·weightᵀ + bias followed by `activation`, as ONE fused product:
 * x `[..., in]` (a vector `[in]` too), weight `[out, in]` (PyTorch's layout), bias `[out]`.
 */
export function linear<D extends DType>(
  s: Session,
  x: Tensor<D>,
  weight: Tensor<D>,
  bias?: Tensor<D> | null,
  activation?: MatmulActivation | 'none',
  opts?: unknown,
): Tensor<D> {
  const op = 'linear';
  const options = checkOptions<LinearOptions>(op, opts, LINEAR_OPTIONS);
  s.checkTensor(op, x, 'x');
  s.checkTensor(op, weight, 'weight');
  const dtype = checkDType(op, x, 'x');
  if (weight.dtype !== dtype) throw mismatch(op, 'weight', weight, dtype);
  if (weight.rank !== 2) throw new InvalidArgumentError(`${op}: weight must be [out, in], got ${weight.toString()}`);
  const outFeatures = weight.shape[0]!;
  const inFeatures = weight.shape[1]!;
  const rank = x.rank;
  if (rank < 1 || x.shape[rank - 1] !== inFeatures) {
    throw new InvalidArgumentError(`${op}: x ${formatShape(x.shape)} must end in the ${inFeatures} input features of weight ${formatShape(weight.shape)}`);
  }
  if (bias !== undefined && bias !== null) checkBias(s, op, bias, outFeatures, dtype);
  const resolved = resolveOptions(op, options, true, activation);
  // Every leading dim of x is a row of one product with the shared weight: a 2-D x is that
  // product as it is (its frozen shape lets the planner skip planning it again).
  const plan = planMatmul(op, rank === 2 ? x.shape : [leadingRows(x.shape), inFeatures], weight.shape, false, true);
  s.assertSupports(op, 'matmul');
  const out = run(s, op, plan, x, weight, undefined, bias ?? undefined, resolved) as Tensor<D>;
  if (rank === 2) return out;
  const outShape = x.shape.slice();
  outShape[rank - 1] = outFeatures;
  try {
    return out.reshape(outShape);
  } finally {
    out.dispose();
  }
}

/** The product of the dims before the last: the product of them, not size / last dim, which is 0/0 when that is 0. */
function leadingRows(shape: readonly number[]): number {
  let rows = 1;
  for (let i = 0; i < shape.length - 1; i++) rows *= shape[i]!;
  return rows;
}

function run(
  s: Session,
  op: string,
  plan: MatmulPlan,
  a: Tensor,
  b: Tensor,
  c: Tensor | undefined,
  bias: Tensor | undefined,
  o: ResolvedOptions,
): Tensor {
  const out = s.empty(op, plan.outShape, a.dtype);
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
        a: sub(av, call.aOffset, call.batch, call.aBatchStride, o.transA ? k : rowsPerEntry, o.transA ? rowsPerEntry : k),
        b: sub(bv, call.bOffset, call.batch, call.bBatchStride, o.transB ? n : k, o.transB ? k : n),
        out: sub(ov, call.outOffset, call.batch, rowsPerEntry * n, rowsPerEntry, n),
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
      if (cv) params.c = sub(cv, call.cOffset, call.batch, call.cBatchStride, rowsPerEntry, n);
      if (biasView) params.bias = biasView;
      if (o.activation) params.activation = o.activation;
      s.backend.matmul!(params);
    }
    return out;
  } catch (err) {
    out.dispose();
    throw err;
  }
}

/**
 * The part of `view` one call reads or writes: from `offset`, `batch` matrices of `rows` × `cols`
 * `stride` elements apart, or a single matrix when the operand repeats (stride 0). A plain
 * product's operand is its whole view, passed as it is.
 */
function sub(view: TensorView, offset: number, batch: number, stride: number, rows: number, cols: number): TensorView {
  const entries = stride === 0 ? 1 : batch;
  const shape = view.shape;
  if (entries === 1 && offset === 0 && shape.length === 2 && shape[0] === rows && shape[1] === cols) return view;
  const size = (entries - 1) * stride + rows * cols;
  return { buffer: view.buffer, dtype: view.dtype, shape: entries === 1 ? [rows, cols] : [entries, rows, cols], offset: view.offset + offset, size };
}

function resolveOptions(op: string, options: Partial<MatmulOptions>, transBOption: unknown, activation: unknown): ResolvedOptions {
  const transA = checkFlag(op, 'transA', options.transA, false);
  const transB = checkFlag(op, 'transB', transBOption, false);
  const alpha = validateFinite(op, 'alpha', options.alpha ?? 1);
  const hasC = options.c !== undefined;
  const beta = validateFinite(op, 'beta', options.beta ?? (hasC ? 1 : 0));
  if (!hasC && beta !== 0) throw new InvalidArgumentError(`${op}: beta is ${beta} but no c was given (beta scales c)`);
  const act = checkChoice(op, 'activation', activation, ACTIVATION_CHOICES, 'none', 'unknown');
  const precision = checkChoice(op, 'precision', options.precision, PRECISIONS, 'highest');
  const engine = checkChoice(op, 'engine', options.engine, ENGINES, 'auto');
  const autotune = checkFlag(op, 'autotune', options.autotune, true);
  return { transA, transB, alpha, beta, activation: act === 'none' ? undefined : act, precision, engine, autotune };
}

function checkDType(op: string, t: Tensor, name: string): DType {
  if (!MATMUL_DTYPES.includes(t.dtype)) {
    throw new InvalidArgumentError(`${op}: ${name} must be f32, f16 or bf16, got ${t.toString()}; cast it first, e.g. gpu.cast(${name}, 'f32')`);
  }
  return t.dtype;
}

function checkBias(s: Session, op: string, bias: Tensor, n: number, dtype: DType): void {
  s.checkTensor(op, bias, 'bias');
  if (bias.dtype !== dtype) throw mismatch(op, 'bias', bias, dtype);
  if (bias.rank !== 1 || bias.shape[0] !== n) {
    throw new InvalidArgumentError(`${op}: bias must be a vector [${n}] (one value per output column), got ${bias.toString()}`);
  }
}

function mismatch(op: string, name: string, t: Tensor, dtype: DType): InvalidArgumentError {
  return new InvalidArgumentError(
    `${op}: dtype mismatch: ${name} is ${t.dtype} but the product is ${dtype}; there is no implicit promotion, cast with gpu.cast(${name}, '${dtype}')`,
  );
}
