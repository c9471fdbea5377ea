/** Row-wise ops over the last axis: softmax, logSoftmax, layerNorm. */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import { formatShape } from '../core/shape.js';
import { validateFinite } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { dtypeMismatch } from './elementwise.js';

/** layerNorm's eps when none is given. */
export const DEFAULT_LAYER_NORM_EPS = 1e-5;

/** (log)softmax over the last axis, stable (the row maximum is subtracted first). */
export function softmax<D extends DType>(s: Session, x: Tensor<D>, log: boolean): Tensor<D> {
  const op = log ? 'logSoftmax' : 'softmax';
  s.checkFloat(op, x, 'x');
  const cols = lastDim(x);
  return s.produce<D>(op, x.shape, x.dtype, (out) => s.backend.softmax(x.view, out.view, x.size / cols, cols, log));
}

/**
 * (x − mean)/√(var + eps)·gamma + beta over the last axis, with the biased variance; gamma and
 * beta, when given, have shape [lastDim].
 */
export function layerNorm<D extends DType>(s: Session, x: Tensor<D>, gamma: Tensor<D> | null | undefined, beta: Tensor<D> | null | undefined, eps: unknown = DEFAULT_LAYER_NORM_EPS): Tensor<D> {
  const op = 'layerNorm';
  s.checkFloat(op, x, 'x');
  const epsilon = validateFinite(op, 'eps', eps);
  if (epsilon < 0) throw new InvalidArgumentError(`${op}: eps must be ≥ 0, got ${epsilon}`);
  const cols = lastDim(x);
  for (const [name, param] of [['gamma', gamma], ['beta', beta]] as const) {
    if (param === undefined || param === null) continue;
    s.checkTensor(op, param, name);
    if (param.dtype !== x.dtype) throw dtypeMismatch(op, x.dtype, param.dtype);
    if (param.rank !== 1 || param.shape[0] !== cols) {
      throw new InvalidArgumentError(`${op}: ${name} must have shape [${cols}] (the last dim of x ${formatShape(x.shape)}), got ${formatShape(param.shape)}`);
    }
  }
  return s.produce<D>(op, x.shape, x.dtype, (out) => s.backend.layerNorm(x.view, gamma?.view, beta?.view, out.view, x.size / cols, cols, epsilon));
}

function lastDim(x: Tensor): number {
  return x.rank === 0 ? 1 : x.shape[x.rank - 1]!;
}
