/**
 * The elementwise front-ends: unary ops and activations, activation gradients, broadcasting
 * binary ops (a JS number stands for a tensor of the other operand's dtype), and cast.
 */
import { InvalidArgumentError } from '../../errors.js';
import { planBroadcast } from '../core/broadcast.js';
import { isFloatDType, roundToDType, type DType } from '../core/dtype.js';
import {
  ACTIVATION_GRAD,
  binaryTakesInt,
  unaryTakesInt,
  type ActivationName,
  type BinaryOp,
  type UnaryOp,
} from '../core/elementwise-ops.js';
import { formatShape, sameShape } from '../core/shape.js';
import { checkChoice, checkOptions, optionKeys, validateDType, validateFinite } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { checkScalar, copy } from './creation.js';

/** GELU form: exact (erf) or the tanh approximation. */
export interface GeluOptions {
  approximate?: 'none' | 'tanh';
}

/** Options of `gpu.activationGrad`: `slope` applies to leakyRelu, `approximate` to gelu. */
export interface ActivationGradOptions extends GeluOptions {
  slope?: number;
}

/** The keys {@link GeluOptions} takes. */
export const GELU_OPTIONS = optionKeys<GeluOptions>({ approximate: true });
/** The keys {@link ActivationGradOptions} takes. */
export const ACTIVATION_GRAD_OPTIONS = optionKeys<ActivationGradOptions>({ approximate: true, slope: true });

/** leakyRelu's slope when none is given. */
export const DEFAULT_LEAKY_SLOPE = 0.01;

/**
 * leakyRelu's slope as every backend uses it: in f32, the precision the op computes in, so a
 * slope that rounds to 0 means 0 everywhere (and slope·−∞ is NaN everywhere).
 */
export function leakySlope(op: string, slope: unknown): number {
  const rounded = Math.fround(validateFinite(op, 'slope', slope));
  if (!Number.isFinite(rounded)) throw new InvalidArgumentError(`${op}: slope ${String(slope)} is beyond the f32 range`);
  return rounded;
}

/** out = op(x); `alpha` is leakyRelu's slope. `name` is the public op's name in messages (default `op`). */
export function unary<D extends DType>(s: Session, op: UnaryOp, x: Tensor<D>, alpha?: number, name: string = op): Tensor<D> {
  if (unaryTakesInt(op)) s.checkTensor(name, x, 'x');
  else s.checkFloat(name, x, 'x');
  return s.produce<D>(name, x.shape, x.dtype, (out) => s.backend.unary(op, x.view, out.view, alpha));
}

/** The unary op gelu's `approximate` selects (`options` already checked). */
export function geluOp(op: string, options: GeluOptions): 'gelu' | 'geluTanh' {
  return checkChoice(op, 'approximate', options.approximate, ['none', 'tanh'], 'none') === 'tanh' ? 'geluTanh' : 'gelu';
}

/** gelu(x, options): the options checked, then the op they select. */
export function gelu<D extends DType>(s: Session, x: Tensor<D>, options: unknown): Tensor<D> {
  return unary(s, geluOp('gelu', checkOptions<GeluOptions>('gelu', options, GELU_OPTIONS)), x, undefined, 'gelu');
}

/** dy · f'(x) for the activation `activation`, with x the activation's input. */
export function activationGrad<D extends DType>(s: Session, activation: ActivationName, x: Tensor<D>, dy: Tensor<D>, options: unknown): Tensor<D> {
  const op = 'activationGrad';
  const name = checkChoice(op, 'activation', activation, Object.keys(ACTIVATION_GRAD) as ActivationName[], undefined, 'unknown');
  const o = checkOptions<ActivationGradOptions>(op, options, ACTIVATION_GRAD_OPTIONS);
  // approximate is checked whatever the activation, so a bad value never passes unnoticed.
  const geluForm = geluOp(op, o);
  const gradOp = ACTIVATION_GRAD[name === 'gelu' ? geluForm : name];
  const slope = leakySlope(op, o.slope ?? DEFAULT_LEAKY_SLOPE);
  s.checkFloat(op, x, 'x');
  s.checkFloat(op, dy, 'dy');
  if (x.dtype !== dy.dtype) throw dtypeMismatch(op, x.dtype, dy.dtype);
  if (!sameShape(x.shape, dy.shape)) {
    throw new InvalidArgumentError(`${op}: x ${formatShape(x.shape)} and dy ${formatShape(dy.shape)} must have the same shape`);
  }
  s.assertSupports(op, 'activationGrad');
  return s.produce<D>(op, x.shape, x.dtype, (out) => s.backend.activationGrad!(gradOp, x.view, dy.view, out.view, slope));
}

/**
 * a `op` b with NumPy broadcasting; either side may be a JS number, which is rounded to the
 * other operand's dtype and passed to the kernel as an argument. `name` is the public op's name.
 */
export function binary<D extends DType>(s: Session, op: BinaryOp, a: Tensor<D> | number, b: Tensor<D> | number, name: string): Tensor<D> {
  if (typeof a === 'number' && typeof b === 'number') throw new InvalidArgumentError(`${name}: at least one operand must be a Tensor`);
  if (typeof a !== 'number') s.checkTensor(name, a, 'a');
  if (typeof b !== 'number') s.checkTensor(name, b, 'b');
  const dtype = (typeof a === 'number' ? (b as Tensor<D>) : a).dtype;
  if (typeof a !== 'number' && typeof b !== 'number' && a.dtype !== b.dtype) throw dtypeMismatch(name, a.dtype, b.dtype);
  if (!isFloatDType(dtype) && !binaryTakesInt(op)) {
    throw new InvalidArgumentError(`${name}: not defined for i32 tensors; cast to a float dtype first, e.g. gpu.cast(x, 'f32')`);
  }
  if (typeof a === 'number' || typeof b === 'number') {
    const scalarFirst = typeof a === 'number';
    const value = scalarFirst ? a : b;
    checkScalar(name, value, dtype);
    const x = (scalarFirst ? b : a) as Tensor<D>;
    const rounded = roundToDType(value, dtype);
    return s.produce<D>(name, x.shape, dtype, (out) => s.backend.binaryScalar(op, x.view, rounded, scalarFirst, out.view));
  }
  const plan = planBroadcast(name, a.shape, b.shape);
  return s.produce<D>(name, plan.shape, dtype, (out) => s.backend.binary(op, a.view, b.view, out.view, plan));
}

/** a + b for tensors of the same shape and dtype (no broadcasting). */
export function vectorAdd<D extends DType>(s: Session, a: Tensor<D>, b: Tensor<D>): Tensor<D> {
  const op = 'vectorAdd';
  s.checkTensor(op, a, 'a');
  s.checkTensor(op, b, 'b');
  if (!sameShape(a.shape, b.shape)) {
    throw new InvalidArgumentError(`${op}: shapes ${formatShape(a.shape)} and ${formatShape(b.shape)} differ (use add() to broadcast)`);
  }
  return binary(s, 'add', a, b, op);
}

/** Converts to another dtype (float → i32 truncates toward zero and saturates; NaN → 0). */
export function cast<T extends DType>(s: Session, x: Tensor, dtype: T): Tensor<T> {
  const op = 'cast';
  s.checkTensor(op, x, 'x');
  const target = validateDType(op, dtype) as T;
  if (target === x.dtype) return copy(s, x as Tensor<T>, op);
  return s.produce<T>(op, x.shape, target, (out) => s.backend.cast(x.view, out.view));
}

/** The error for operands of different dtypes. */
export function dtypeMismatch(op: string, a: DType, b: DType): InvalidArgumentError {
  return new InvalidArgumentError(
    `${op}: dtype mismatch (${a} vs ${b}); there is no implicit promotion, cast one operand with gpu.cast(x, dtype)`,
  );
}
