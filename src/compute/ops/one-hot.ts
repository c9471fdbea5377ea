/** One-hot encoding of i32 class indices. */
import { InvalidArgumentError } from '../../errors.js';
import { isFloatDType, type DType } from '../core/dtype.js';
import { checkInteger, validateDType } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/** The most classes a one-hot encoding takes (class indices are i32). */
const MAX_CLASSES = 2 ** 31 - 1;

/**
 * `indices` (i32, any shape) as a one-hot tensor of shape `[...indices.shape, classes]` in `dtype`
 * (a float dtype, default f32): 1 at each index, 0 elsewhere; an index outside [0, classes) gives
 * a row of zeros.
 */
export function oneHot<D extends DType = 'f32'>(s: Session, indices: unknown, classes: unknown, dtype: unknown = 'f32'): Tensor<D> {
  const op = 'oneHot';
  s.checkTensor(op, indices, 'indices');
  if (indices.dtype !== 'i32') throw new InvalidArgumentError(`${op}: indices must be an i32 tensor of class indices, got ${indices.toString()}`);
  const n = checkInteger(op, 'classes', classes, 1, MAX_CLASSES);
  const d = validateDType(op, dtype);
  if (!isFloatDType(d)) throw new InvalidArgumentError(`${op}: dtype must be f32, f16 or bf16, got ${d}`);
  s.assertSupports(op, 'oneHot');
  return oneHotAlong<D>(s, op, indices as Tensor<'i32'>, n, indices.size, 1, [...indices.shape, n], d);
}

/**
 * The one-hot encoding along an axis: `indices` seen as `[outer, inner]` gives `[outer, classes,
 * inner]`, returned in `shape` (checked by the caller, like everything else). `op` names it.
 */
export function oneHotAlong<D extends DType>(
  s: Session,
  op: string,
  indices: Tensor<'i32'>,
  classes: number,
  outer: number,
  inner: number,
  shape: readonly number[],
  dtype: DType,
): Tensor<D> {
  return s.produce<D>(op, shape, dtype, (out) => s.backend.oneHot!(indices.view, out.view, outer, classes, inner));
}
