/** Reductions over one axis or over everything: sum, mean, max, min, argmax. */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import { planReduction, REDUCE_OPS, type ReduceOp } from '../core/reduce-plan.js';
import { normalizeAxis } from '../core/validation.js';
import { describeValue, type Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/** Options of the reductions. Without `axis` they reduce over all elements. */
export interface ReduceOptions {
  /** Axis to reduce (negative counts from the end). */
  axis?: number;
  /** Keep the reduced axis (or, for all, every axis) with extent 1. */
  keepDims?: boolean;
}

/** `op` of x over an axis (a number, or `{ axis, keepDims }`), or over everything. */
export function reduce<D extends DType>(s: Session, op: ReduceOp, x: Tensor<D>, axisOrOptions: unknown): Tensor<D> {
  if (REDUCE_OPS[op].int) s.checkTensor(op, x, 'x');
  else s.checkFloat(op, x, 'x');
  const { axis, keepDims } = reduceOptions(op, axisOrOptions);
  const { plan, outShape } = planReduction(x.shape, axis === undefined ? undefined : normalizeAxis(op, axis, x.rank), keepDims ?? false);
  if (plan.axisLen === 0 && plan.outer * plan.inner > 0 && (op === 'max' || op === 'min' || op === 'argmax')) {
    throw new InvalidArgumentError(`${op}: cannot reduce an empty axis of ${x.toString()} (${op} has no identity)`);
  }
  const out = s.empty<D>(op, outShape, op === 'argmax' ? 'i32' : x.dtype);
  if (out.size === 0) return out;
  if (plan.axisLen === 0) s.backend.fill(out.view, op === 'sum' ? 0 : NaN);
  else s.backend.reduce(op, x.view, out.view, plan);
  return out;
}

function reduceOptions(op: string, axisOrOptions: unknown): ReduceOptions {
  if (axisOrOptions === undefined) return {};
  if (typeof axisOrOptions === 'number') return { axis: axisOrOptions };
  if (typeof axisOrOptions !== 'object' || axisOrOptions === null || Array.isArray(axisOrOptions)) {
    throw new InvalidArgumentError(`${op}: the second argument must be an axis (an integer) or { axis, keepDims }, got ${typeof axisOrOptions === 'string' ? `the string ${JSON.stringify(axisOrOptions)}` : describeValue(axisOrOptions)}`);
  }
  const { axis, keepDims } = axisOrOptions as ReduceOptions;
  if (keepDims !== undefined && typeof keepDims !== 'boolean') throw new InvalidArgumentError(`${op}: keepDims must be a boolean, got ${describeValue(keepDims)}`);
  return { ...(axis === undefined ? {} : { axis }), keepDims: keepDims ?? false };
}
