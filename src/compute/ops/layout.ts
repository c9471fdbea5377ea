/** Layout ops: transpose of the last two dims. */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/**
 * Swaps the last two dims (a 2-D transpose, batched over leading dims). Where one of them is 1
 * the elements keep their order, so the result is a view over x's storage, as `reshape` gives,
 * with no copy and no launch.
 */
export function transpose<D extends DType>(s: Session, x: Tensor<D>): Tensor<D> {
  const op = 'transpose';
  s.checkTensor(op, x, 'x');
  if (x.rank < 2) throw new InvalidArgumentError(`${op}: needs a tensor of rank ≥ 2, got ${x.toString()}`);
  const rows = x.shape[x.rank - 2]!;
  const cols = x.shape[x.rank - 1]!;
  const shape = [...x.shape.slice(0, -2), cols, rows];
  if (rows === 1 || cols === 1) return x.reshape(shape);
  return s.produce<D>(op, shape, x.dtype, (out) => s.backend.transpose(x.view, out.view, x.size / (rows * cols), rows, cols));
}
