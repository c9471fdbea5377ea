/**
 * The elementwise ops with their gradients: the broadcasting binary ops (each operand's gradient
 * summed back to its shape; a JS number operand gets none), the unary ops and activations, the
 * activations' derivative (in dy), cast and copy. Each runs the op of `ops/elementwise.ts`, and
 * records it when an input requires grad (see `../record.ts`).
 *
 * maximum and minimum send the gradient to the operand that won, and half to each where they tie
 * (PyTorch's rule); the comparison is made on a − b through reluGrad, so a NaN operand, or two
 * equal infinities, give a NaN gradient.
 */
import { InvalidArgumentError } from '../../../errors.js';
import type { DType } from '../../core/dtype.js';
import { UNARY_OPS, type ActivationName, type BinaryOp, type UnaryOp, type UnaryOpDefinition } from '../../core/elementwise-ops.js';
import { copy as rawCopy } from '../../ops/creation.js';
import {
  activationGrad as rawActivationGrad,
  binary as rawBinary,
  cast as rawCast,
  gelu as rawGelu,
  geluOp,
  unary as rawUnary,
  vectorAdd as rawVectorAdd,
  type ActivationGradOptions,
  type GeluOptions,
} from '../../ops/elementwise.js';
import type { Session } from '../../tensor/session.js';
import { Tensor } from '../../tensor/tensor.js';
import { record, recording } from '../record.js';
import { sumToShape } from '../sum-to-shape.js';

type Operand = Tensor | number;

/** a `op` b with broadcasting (see `ops/elementwise.ts`), differentiable in each tensor operand. */
export function binary<D extends DType>(s: Session, op: BinaryOp, a: Tensor<D> | number, b: Tensor<D> | number, name: string): Tensor<D> {
  if (!recording(s, name, a, b)) return rawBinary(s, op, a, b, name);
  return recordBinary(s, op, a, b, rawBinary(s, op, a, b, name), name);
}

/** a + b of one shape, differentiable in both. */
export function vectorAdd<D extends DType>(s: Session, a: Tensor<D>, b: Tensor<D>): Tensor<D> {
  if (!recording(s, 'vectorAdd', a, b)) return rawVectorAdd(s, a, b);
  return recordBinary(s, 'add', a, b, rawVectorAdd(s, a, b), 'vectorAdd');
}

function recordBinary<D extends DType>(s: Session, op: BinaryOp, a: Operand, b: Operand, out: Tensor<D>, name: string): Tensor<D> {
  const aShape = typeof a === 'number' ? undefined : a.shape;
  const bShape = typeof b === 'number' ? undefined : b.shape;
  const tensorA = typeof a === 'number' ? undefined : a;
  const tensorB = typeof b === 'number' ? undefined : b;
  // Each backward reads the operands it needs from `saved` (a number stays in the closure).
  const save: (Tensor | undefined)[] =
    op === 'mul' || op === 'max' || op === 'min' ? [tensorA, tensorB] : op === 'div' ? [undefined, tensorB, out] : [];
  return record(name, [a, b], out, save, ([g], [sa, sb, so], needs) => {
    const A: Operand = sa ?? (a as number);
    const B: Operand = sb ?? (b as number);
    const [ga, gb] = binaryGrads(s, op, g!, A, B, so, needs);
    return [ga && sumToShape(s, ga, aShape!), gb && sumToShape(s, gb, bShape!)];
  });
}

/** The gradients of a `op` b at the output's shape (before summing over broadcast dims). */
function binaryGrads(s: Session, op: BinaryOp, g: Tensor, a: Operand, b: Operand, out: Tensor | undefined, needs: readonly boolean[]): [Tensor | undefined, Tensor | undefined] {
  switch (op) {
    case 'add':
      return [needs[0] ? g : undefined, needs[1] ? g : undefined];
    case 'sub':
      return [needs[0] ? g : undefined, needs[1] ? rawUnary(s, 'neg', g) : undefined];
    case 'mul':
      return [needs[0] ? rawBinary(s, 'mul', g, b, 'mul') : undefined, needs[1] ? rawBinary(s, 'mul', g, a, 'mul') : undefined];
    case 'div': {
      // d(a/b)/da = 1/b; d(a/b)/db = −a/b² = −(1/b)·out.
      const t = rawBinary(s, 'div', g, b, 'div');
      if (!needs[1]) return [t, undefined];
      using product = rawBinary(s, 'mul', t, out!, 'mul');
      const gb = rawUnary(s, 'neg', product);
      if (needs[0]) return [t, gb];
      t.dispose();
      return [undefined, gb];
    }
    case 'max':
    case 'min': {
      // Where a − b > 0 the gradient goes to a (max) or b (min), where it is < 0 the other way,
      // and where it is 0 half to each.
      using d = rawBinary(s, 'sub', a, b, 'sub');
      using negated = rawUnary(s, 'neg', d);
      const above = rawActivationGrad(s, 'relu', d, g, {});
      const below = rawActivationGrad(s, 'relu', negated, g, {});
      using rest = rawBinary(s, 'sub', g, above, 'sub');
      using ties = rawBinary(s, 'sub', rest, below, 'sub');
      using half = rawBinary(s, 'mul', ties, 0.5, 'mul');
      const [toA, toB] = op === 'max' ? [above, below] : [below, above];
      try {
        return [needs[0] ? rawBinary(s, 'add', toA, half, 'add') : undefined, needs[1] ? rawBinary(s, 'add', toB, half, 'add') : undefined];
      } finally {
        above.dispose();
        below.dispose();
      }
    }
  }
}

/** op(x) (see `ops/elementwise.ts`), differentiable; `alpha` is leakyRelu's slope. */
export function unary<D extends DType>(s: Session, op: UnaryOp, x: Tensor<D>, alpha?: number, name: string = op): Tensor<D> {
  if (!recording(s, name, x)) return rawUnary(s, op, x, alpha, name);
  const out = rawUnary(s, op, x, alpha, name);
  const activation = (UNARY_OPS[op] as UnaryOpDefinition).grad !== undefined;
  // exp, sqrt and rsqrt differentiate through their result; the others through their input.
  const fromOutput = op === 'exp' || op === 'sqrt' || op === 'rsqrt';
  return record(name, [x], out, [fromOutput ? out : op === 'neg' ? undefined : x], ([g], [saved]) => {
    if (activation) return [rawActivationGrad(s, op as ActivationName, saved!, g!, alpha === undefined ? {} : { slope: alpha })];
    return [unaryGrad(s, op, g!, saved)];
  });
}

/** dy·f'(x) of the unary ops that are not activations; `saved` is x, or the result for exp, sqrt and rsqrt. */
function unaryGrad(s: Session, op: UnaryOp, g: Tensor, saved: Tensor | undefined): Tensor {
  switch (op) {
    case 'neg':
      return rawUnary(s, 'neg', g);
    case 'abs': {
      // sign(x)·g, 0 at 0 (as PyTorch).
      using above = rawActivationGrad(s, 'relu', saved!, g, {});
      using negated = rawUnary(s, 'neg', saved!);
      using below = rawActivationGrad(s, 'relu', negated, g, {});
      return rawBinary(s, 'sub', above, below, 'sub');
    }
    case 'exp':
      return rawBinary(s, 'mul', g, saved!, 'mul');
    case 'log':
      return rawBinary(s, 'div', g, saved!, 'div');
    case 'sqrt': {
      // g / (2·√x)
      using q = rawBinary(s, 'div', g, saved!, 'div');
      return rawBinary(s, 'mul', q, 0.5, 'mul');
    }
    case 'rsqrt': {
      // −g·y³/2 with y = 1/√x
      using square = rawBinary(s, 'mul', saved!, saved!, 'mul');
      using cube = rawBinary(s, 'mul', square, saved!, 'mul');
      using scaled = rawBinary(s, 'mul', g, cube, 'mul');
      return rawBinary(s, 'mul', scaled, -0.5, 'mul');
    }
    default:
      throw new Error(`unreachable: ${op} is an activation`);
  }
}

/** gelu(x, options), differentiable. */
export function gelu<D extends DType>(s: Session, x: Tensor<D>, options: unknown): Tensor<D> {
  if (!recording(s, 'gelu', x)) return rawGelu(s, x, options);
  const out = rawGelu(s, x, options);
  const op = geluOp('gelu', (options ?? {}) as GeluOptions);
  return record('gelu', [x], out, [x], ([g], [sx]) => [rawActivationGrad(s, op, sx!, g!, {})]);
}

/**
 * dy·f'(x) (see `ops/elementwise.ts`), differentiable in dy (it is linear in dy). A gradient with
 * respect to x would need f'', which the op table does not have: x must not require grad.
 */
export function activationGrad<D extends DType>(s: Session, name: ActivationName, x: Tensor<D>, dy: Tensor<D>, options: unknown): Tensor<D> {
  if (!recording(s, 'activationGrad', x, dy)) return rawActivationGrad(s, name, x, dy, options);
  if (x instanceof Tensor && x.requiresGrad) {
    throw new InvalidArgumentError(
      `activationGrad: x ${x.toString()} requires grad, and activationGrad has no gradient with respect to x (a second derivative); pass x.detach()`,
    );
  }
  const out = rawActivationGrad(s, name, x, dy, options);
  const o = (options ?? {}) as ActivationGradOptions;
  return record('activationGrad', [undefined, dy], out, [x], ([g], [sx]) => [undefined, rawActivationGrad(s, name, sx!, g!, o)]);
}

/** x converted to `dtype`, differentiable between float dtypes (the gradient is converted back). */
export function cast<T extends DType>(s: Session, x: Tensor, dtype: T): Tensor<T> {
  if (!recording(s, 'cast', x)) return rawCast(s, x, dtype);
  const out = rawCast(s, x, dtype);
  const from = x.dtype;
  return record('cast', [x], out, [], ([g]) => [rawCast(s, g!, from)]);
}

/** A copy with its own storage, differentiable (the gradient passes through). */
export function copy<D extends DType>(s: Session, x: Tensor<D>, op = 'copy'): Tensor<D> {
  if (!recording(s, op, x)) return rawCopy(s, x, op);
  return record(op, [x], rawCopy(s, x, op), [], ([g]) => [g]);
}
