/**
 * The reductions, defined once, and how a reduction over one axis (or everything) is planned:
 * the input seen as `[outer, axisLen, inner]`, and the output's shape.
 */
import { PlanCache } from './plan-cache.js';
import { shapeSize } from './shape.js';

/** How one reduction is offered. */
export interface ReduceOpDefinition {
  /** What it computes, one line. */
  readonly doc: string;
  /** i32 tensors take it too. */
  readonly int: boolean;
}

/** The reductions. */
export const REDUCE_OPS = {
  sum: { doc: 'sum (f32 accumulates in at least f32)', int: true },
  mean: { doc: 'mean (NaN over an empty axis)', int: false },
  max: { doc: 'maximum (NaN propagates)', int: true },
  min: { doc: 'minimum (NaN propagates)', int: true },
  argmax: { doc: 'i32 index of the first maximum (of the first NaN, if any)', int: true },
} as const satisfies Record<string, ReduceOpDefinition>;

/** A reduction's name. */
export type ReduceOp = keyof typeof REDUCE_OPS;

/** Every reduction, in table order. */
export const REDUCE_OP_NAMES = Object.keys(REDUCE_OPS) as ReduceOp[];

/** Reduce along one axis of a tensor seen as `[outer, axisLen, inner]`; all elements is outer = inner = 1. */
export interface ReducePlan {
  outer: number;
  axisLen: number;
  inner: number;
}

/**
 * The plan and output shape of reducing `shape` over `axis` (already normalised; undefined
 * reduces everything), keeping the reduced dims with extent 1 when `keepDims`. Both are frozen
 * and cached per recent (shape, axis, keepDims): apps reduce the same shapes over and over.
 */
export function planReduction(shape: readonly number[], axis: number | undefined, keepDims: boolean): Reduction {
  const flags = ((axis ?? -1) + 1) * 2 + (keepDims ? 1 : 0);
  // The same tensor (or one whose shape array an op passed on) reduced again: no lookup at all.
  // Only frozen arrays (tensor shapes) are remembered, so one seen before still holds the same dims.
  if (shape === last.shape && flags === last.flags) return last.reduction;
  const reduction = plans.get([shape], flags, () => {
    const planned = plan(shape, axis, keepDims);
    Object.freeze(planned.plan);
    Object.freeze(planned.outShape);
    return Object.freeze(planned);
  });
  if (Object.isFrozen(shape)) last = { shape, flags, reduction };
  return reduction;
}

/** A planned reduction: the plan and the output's shape. */
type Reduction = { plan: ReducePlan; outShape: readonly number[] };

const plans = new PlanCache<Reduction>();
let last: { shape: readonly number[] | undefined; flags: number; reduction: Reduction } = {
  shape: undefined,
  flags: 0,
  reduction: { plan: { outer: 0, axisLen: 0, inner: 0 }, outShape: [] },
};

function plan(shape: readonly number[], axis: number | undefined, keepDims: boolean): { plan: ReducePlan; outShape: number[] } {
  if (axis === undefined) {
    return { plan: { outer: 1, axisLen: shapeSize(shape), inner: 1 }, outShape: keepDims ? shape.map(() => 1) : [] };
  }
  return {
    plan: { outer: shapeSize(shape.slice(0, axis)), axisLen: shape[axis]!, inner: shapeSize(shape.slice(axis + 1)) },
    outShape: keepDims ? shape.map((d, i) => (i === axis ? 1 : d)) : shape.filter((_, i) => i !== axis),
  };
}
