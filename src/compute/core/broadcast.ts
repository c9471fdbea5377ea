/**
 * NumPy broadcasting for binary ops: the output shape, and a
 * {@link BroadcastPlan} with per-input strides (0 where an input repeats) and
 * adjacent dims collapsed so backends walk as few dims as possible.
 */
import { InvalidArgumentError } from '../../errors.js';
import { PlanCache } from './plan-cache.js';
import { formatShape, rowMajorStrides, sameShape, shapeSize } from './shape.js';

/**
 * Broadcast plan computed once by the front-end: output shape and per-input
 * element strides (0 on broadcast dims), with adjacent dims already collapsed
 * (rank ≤ 6), plus a hint for fast paths.
 * `rowB`: b is `[cols]` over a `[rows, cols]` a (and `rowA` the mirror).
 */
export interface BroadcastPlan {
  /** The output's shape, as broadcasting gives it (before any collapsing). */
  shape: readonly number[];
  /** The output's dims after collapsing. */
  outShape: number[];
  aStrides: number[];
  bStrides: number[];
  kind: 'same' | 'scalarB' | 'scalarA' | 'rowB' | 'rowA' | 'general';
}

/** Most dims a plan may keep after collapsing (what the GPU kernels index). */
export const MAX_BROADCAST_RANK = 6;

/** The broadcast of two shapes under NumPy rules (align right; a dim of 1 stretches). */
export function broadcastShapes(op: string, a: readonly number[], b: readonly number[]): number[] {
  const rank = Math.max(a.length, b.length);
  const out = new Array<number>(rank);
  for (let i = 0; i < rank; i++) {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new InvalidArgumentError(
        `${op}: shapes ${formatShape(a)} and ${formatShape(b)} do not broadcast (dim ${i - rank} is ${da} vs ${db})`,
      );
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/** Element strides of `shape` seen inside `outShape`: 0 on dims it repeats along. */
function stridesWithin(shape: readonly number[], outShape: readonly number[]): number[] {
  const rank = outShape.length;
  const own = rowMajorStrides(shape);
  const strides = new Array<number>(rank).fill(0);
  for (let i = 0; i < shape.length; i++) {
    const o = rank - shape.length + i;
    strides[o] = shape[i] === 1 ? 0 : own[i]!;
  }
  return strides;
}

/**
 * Plans `op(a, b)`. Throws {@link InvalidArgumentError} when the shapes do not
 * broadcast or when the broadcast cannot be collapsed to six dims.
 */
export function planBroadcast(op: string, aShape: readonly number[], bShape: readonly number[]): BroadcastPlan {
  // The same pair of shape arrays as last time (an op repeated on the same tensors, or on tensors
  // an op passed its shapes on to): its plan, without a lookup. Only frozen arrays (tensor shapes)
  // are remembered, so a pair seen before still holds the same dims.
  if (aShape === last.a && bShape === last.b) return last.plan;
  let plan: BroadcastPlan;
  if (sameShape(aShape, bShape)) {
    // The common case, planned without the general walk: one dense dim.
    plan = { shape: aShape, outShape: [shapeSize(aShape)], aStrides: [1], bStrides: [1], kind: 'same' };
  } else {
    plan = plans.get([aShape, bShape], 0, () => Object.freeze(planShapes(op, aShape, bShape)));
  }
  if (Object.isFrozen(aShape) && Object.isFrozen(bShape)) last = { a: aShape, b: bShape, plan: Object.isFrozen(plan) ? plan : Object.freeze(plan) };
  return plan;
}

/** The last pair of frozen shape arrays planned, and its plan. */
let last: { a: readonly number[] | undefined; b: readonly number[] | undefined; plan: BroadcastPlan } = {
  a: undefined,
  b: undefined,
  plan: { shape: [], outShape: [], aStrides: [], bStrides: [], kind: 'same' },
};

/** Plans of recent shape pairs. */
const plans = new PlanCache<BroadcastPlan>();

function planShapes(op: string, aShape: readonly number[], bShape: readonly number[]): BroadcastPlan {
  const fullShape = broadcastShapes(op, aShape, bShape);
  const fullA = stridesWithin(aShape, fullShape);
  const fullB = stridesWithin(bShape, fullShape);

  // Drop dims of extent 1 (they never move an index), then merge each dim into
  // its right neighbour when both inputs step through the pair contiguously.
  const outShape: number[] = [];
  const aStrides: number[] = [];
  const bStrides: number[] = [];
  for (let i = 0; i < fullShape.length; i++) {
    if (fullShape[i] === 1) continue;
    const last = outShape.length - 1;
    if (
      last >= 0 &&
      aStrides[last] === fullA[i]! * fullShape[i]! &&
      bStrides[last] === fullB[i]! * fullShape[i]!
    ) {
      outShape[last]! *= fullShape[i]!;
      aStrides[last] = fullA[i]!;
      bStrides[last] = fullB[i]!;
    } else {
      outShape.push(fullShape[i]!);
      aStrides.push(fullA[i]!);
      bStrides.push(fullB[i]!);
    }
  }
  if (outShape.length === 0) {
    outShape.push(1);
    aStrides.push(0);
    bStrides.push(0);
  }
  if (outShape.length > MAX_BROADCAST_RANK) {
    throw new InvalidArgumentError(
      `${op}: broadcasting ${formatShape(aShape)} with ${formatShape(bShape)} needs ${outShape.length} dims ` +
        `after merging contiguous ones; at most ${MAX_BROADCAST_RANK} are supported`,
    );
  }
  // The shape frozen too: every output of this plan then shares it, as a tensor's shape must be frozen.
  return { shape: Object.freeze(fullShape), outShape, aStrides, bStrides, kind: planKind(outShape, aStrides, bStrides) };
}

function allZero(strides: number[]): boolean {
  for (const v of strides) if (v !== 0) return false;
  return true;
}

function dense(strides: number[]): boolean {
  return strides.length === 1 && strides[0] === 1;
}

function planKind(outShape: number[], aStrides: number[], bStrides: number[]): BroadcastPlan['kind'] {
  if (outShape.length === 1 && outShape[0] === 1) return 'same';
  if (dense(aStrides) && dense(bStrides)) return 'same';
  if (allZero(bStrides)) return 'scalarB';
  if (allZero(aStrides)) return 'scalarA';
  if (outShape.length === 2) {
    const cols = outShape[1]!;
    if (aStrides[0] === cols && aStrides[1] === 1 && bStrides[0] === 0 && bStrides[1] === 1) return 'rowB';
    if (bStrides[0] === cols && bStrides[1] === 1 && aStrides[0] === 0 && aStrides[1] === 1) return 'rowA';
  }
  return 'general';
}
