/** Reductions over one axis or over everything: sum, mean, max, min, argmax. */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import { planReduction, REDUCE_OPS, type ReduceOp } from '../core/reduce-plan.js';
import { checkFlag, checkOptions, describeValue, normalizeAxis, optionKeys } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/** Options of the reductions. Without `axis` they reduce over all elements. */
export interface ReduceOptions {
  /** Axis to reduce (negative counts from the end). */
  axis?: number;
  /** Keep the reduced axis (or, for all, every axis) with extent 1. */
  keepDims?: boolean;
}

/** The keys {@link ReduceOptions} takes. */
export const REDUCE_OPTIONS = optionKeys<ReduceOptions>({ axis: true, keepDims: true });

/** `op` of x over an axis (a number, or `{ axis, keepDims }`), or over everything. */
export function reduce<D extends DType>(s: Session, op: ReduceOp, x: Tensor<D>, axisOrOptions: unknown): Tensor<D> {
  if (REDUCE_OPS[op].int) s.checkTensor(op, x, 'x');
  else s.checkFloat(op, x, 'x');
  const { axis, keepDims } = reduceOptions(op, axisOrOptions);
  const { plan, outShape } = planReduction(x.shape, axis === undefined ? undefined : normalizeAxis(op, axis, x.rank), keepDims);
  if (plan.axisLen === 0 && plan.outer * plan.inner > 0 && (op === 'max' || op === 'min' || op === 'argmax')) {
    throw new InvalidArgumentError(`${op}: cannot reduce an empty axis of ${x.toString()} (${op} has no identity)`);
  }
  return s.produce<D>(op, outShape, op === 'argmax' ? 'i32' : x.dtype, (out) => {
    if (plan.axisLen === 0) s.backend.fill(out.view, op === 'sum' ? 0 : NaN);
    else s.backend.reduce(op, x.view, out.view, plan);
  });
}

/** The axis and keepDims of a reduction's second argument (an axis, or `{ axis, keepDims }`), checked. */
export function reduceOptions(op: string, axisOrOptions: unknown): { axis: number | undefined; keepDims: boolean } {
  if (typeof axisOrOptions === 'number') return { axis: axisOrOptions, keepDims: false };
  if (typeof axisOrOptions !== 'object' && axisOrOptions !== undefined) {
    throw new InvalidArgumentError(`${op}: the second argument must be an axis (an integer) or { axis, keepDims }, got ${describeValue(axisOrOptions)}`);
  }
  const { axis, keepDims } = checkOptions<ReduceOptions>(op, axisOrOptions, REDUCE_OPTIONS);
  return { axis, keepDims: checkFlag(op, 'keepDims', keepDims, false) };
}
