/**
 * One (batched) matrix product as a backend runs it, and how a product of given shapes is
 * planned: NumPy-style batch broadcasting, and the split of a batched product into the fewest
 * backend calls whose operands each advance by one stride per batch entry (0 for a broadcast
 * operand). Pure functions of shapes, so every backend gets the same calls.
 */
import { InvalidArgumentError } from '../../errors.js';
import { PlanCache } from './plan-cache.js';
import { formatShape } from './shape.js';
import type { TensorView } from './view.js';

/** Activations a matmul can fuse into its epilogue. */
export type MatmulActivation = 'relu' | 'gelu' | 'geluTanh' | 'silu' | 'sigmoid' | 'tanh';

/** Activations `matmul` and `linear` can fuse into the product's epilogue. */
export const MATMUL_ACTIVATIONS: readonly MatmulActivation[] = ['relu', 'gelu', 'geluTanh', 'silu', 'sigmoid', 'tanh'];

/** One (batched) matrix product as a backend runs it: out = act(alpha·op(A)·op(B) + beta·C + bias). */
export interface MatmulParams {
  a: TensorView;
  b: TensorView;
  out: TensorView;
  c?: TensorView;
  bias?: TensorView;
  m: number;
  n: number;
  k: number;
  batch: number;
  /** Element strides between batch entries; 0 broadcasts one matrix over the batch. */
  aBatchStride: number;
  bBatchStride: number;
  cBatchStride: number;
  transA: boolean;
  transB: boolean;
  alpha: number;
  beta: number;
  activation?: MatmulActivation;
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

/**
 * Shapes, batch broadcasting and call split of `op(a) · op(b)` (+ `c` of shape `cShape`).
 * @throws InvalidArgumentError naming `op` when the shapes do not multiply or broadcast.
 */
export function planMatmul(
  op: string,
  aShape: readonly number[],
  bShape: readonly number[],
  transA: boolean,
  transB: boolean,
  cShape?: readonly number[],
): MatmulPlan {
  const flags = (transA ? 1 : 0) | (transB ? 2 : 0);
  // The same shape arrays as last time (a product repeated on the same tensors): its plan, without
  // a lookup. Only frozen arrays (tensor shapes) are remembered, so arrays seen before still hold
  // the same dims.
  if (aShape === last.a && bShape === last.b && cShape === last.c && flags === last.flags) return last.plan;
  // Otherwise the plan cached for these shapes: planning [130,21,157] times [130,61,157]ᵀ took
  // 2.0 µs a call on the development VM, and even a plain product's plan costs more than the
  // lookup while the code is not yet optimised (a pass of different products misses `last`).
  const planned = plans.get([aShape, bShape, cShape], flags, () => frozen(plan(op, aShape, bShape, transA, transB, cShape)));
  if (Object.isFrozen(aShape) && Object.isFrozen(bShape) && (cShape === undefined || Object.isFrozen(cShape))) {
    last = { a: aShape, b: bShape, c: cShape, flags, plan: planned };
  }
  return planned;
}

const plans = new PlanCache<MatmulPlan>();

/** The last frozen shape arrays planned, and their plan (frozen: it is shared from then on). */
let last: { a: readonly number[] | undefined; b: readonly number[] | undefined; c: readonly number[] | undefined; flags: number; plan: MatmulPlan } = {
  a: undefined,
  b: undefined,
  c: undefined,
  flags: -1,
  plan: { outShape: [], m: 0, n: 0, k: 0, calls: [] },
};

/** A plan and everything in it made read-only, as a cached plan is shared by every call. */
function frozen(p: MatmulPlan): MatmulPlan {
  for (const call of p.calls) Object.freeze(call);
  Object.freeze(p.calls);
  Object.freeze(p.outShape);
  return Object.freeze(p);
}

function plan(
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
  if (rank === 0) {
    // A plain product: one call, no batch (the common small-op case, planned without the walk below).
    const one = { aOffset: 0, bOffset: 0, cOffset: 0, outOffset: 0, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0, m };
    return [foldBatch(one, m, k, n, transA, hasC)];
  }
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

function lastTwo(shape: readonly number[]): [number, number] {
  return [shape[shape.length - 2]!, shape[shape.length - 1]!];
}

/** Dim `i` of a batch shape right-aligned inside `rank` dims (1 where it has none). */
function dimFromRight(dims: readonly number[], rank: number, i: number): number {
  return dims[dims.length - rank + i] ?? 1;
}
