/** transpose and reshape with their gradients: the gradient transposed back, or seen in the input's shape. */
import type { DType } from '../../core/dtype.js';
import { transpose as rawTranspose } from '../../ops/layout.js';
import type { Session } from '../../tensor/session.js';
import type { Tensor } from '../../tensor/tensor.js';
import { record, recording } from '../record.js';

/** Swaps the last two dims, differentiable. */
export function transpose<D extends DType>(s: Session, x: Tensor<D>): Tensor<D> {
  if (!recording(s, 'transpose', x)) return rawTranspose(s, x);
  return record('transpose', [x], rawTranspose(s, x), [], ([g]) => [rawTranspose(s, g!)]);
}

/** `view` (x's storage in another shape, made by Tensor's own reshape) recorded as a reshape of x; disposed on a refusal. */
export function reshape<D extends DType>(s: Session, x: Tensor<D>, view: Tensor<D>): Tensor<D> {
  try {
    if (!recording(s, 'reshape', x)) return view;
  } catch (err) {
    view.dispose();
    throw err;
  }
  const shape = x.shape;
  return record('reshape', [x], view, [], ([g]) => [g!.reshape(shape)]);
}
