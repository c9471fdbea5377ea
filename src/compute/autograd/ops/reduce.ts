/**
 * The reductions with their gradients: sum spreads the gradient over the reduced elements, mean
 * spreads it divided by their count, max and min send it to the element the forward's argmax picks
 * (the first maximum, or the first NaN; for min the first minimum), the others getting zero.
 * argmax has none (its result is i32).
 */
import type { DType } from '../../core/dtype.js';
import { planReduction, type ReduceOp } from '../../core/reduce-plan.js';
import { normalizeAxis } from '../../core/validation.js';
import { full } from '../../ops/creation.js';
import { binary, unary } from '../../ops/elementwise.js';
import { oneHotAlong } from '../../ops/one-hot.js';
import { reduce as rawReduce, reduceOptions } from '../../ops/reduce.js';
import type { Session } from '../../tensor/session.js';
import type { Tensor } from '../../tensor/tensor.js';
import { record, recording } from '../record.js';

/** `op` of x over an axis or everything (see `ops/reduce.ts`), differentiable for sum, mean, max and min. */
export function reduce<D extends DType>(s: Session, op: ReduceOp, x: Tensor<D>, axisOrOptions: unknown): Tensor<D> {
  if (op === 'argmax' || !recording(s, op, x)) return rawReduce(s, op, x, axisOrOptions);
  const out = rawReduce(s, op, x, axisOrOptions);
  const { axis: given } = reduceOptions(op, axisOrOptions);
  const axis = given === undefined ? undefined : normalizeAxis(op, given, x.rank);
  const { plan } = planReduction(x.shape, axis, true);
  const shape = x.shape;
  const dtype = x.dtype;
  // The gradient of the result, seen with the reduced dims kept (extent 1), broadcasts over x.
  const kept = shape.map((d, i) => (axis === undefined || i === axis ? 1 : d));
  return record(op, [x], out, [op === 'max' || op === 'min' ? x : undefined], ([g], [sx]) => {
    using gk = g!.reshape(kept);
    if (op === 'max' || op === 'min') {
      // The argmax of x (of −x for min) as a one-hot mask over the reduced axis.
      using flat = sx!.reshape([plan.outer, plan.axisLen, plan.inner]);
      using negated = op === 'min' ? unary(s, 'neg', flat) : undefined;
      using index = rawReduce(s, 'argmax', negated ?? flat, 1) as Tensor<'i32'>;
      using mask = oneHotAlong(s, op, index, plan.axisLen, plan.outer, plan.inner, shape, dtype);
      return [binary(s, 'mul', mask, gk, op)];
    }
    using zeros = full(s, op, shape, 0, dtype);
    if (op === 'sum') return [binary(s, 'add', zeros, gk, op)];
    using share = binary(s, 'div', gk, plan.axisLen, op);
    return [binary(s, 'add', zeros, share, op)];
  });
}
