/**
 * The losses: mean squared error, and cross-entropy from logits with class indices or class
 * probabilities as targets. Classes lie on the last axis of the logits (the axis the row ops work
 * over). Cross-entropy goes through logSoftmax, so it is stable for any logits, and computes in
 * f32 for 16-bit logits; the loss comes back in the logits' dtype.
 *
 * With class indices, an index outside [0, classes) marks a row to ignore (PyTorch's
 * `ignore_index`, whose default −100 is such an index): the row's loss and gradient are zero, and
 * 'mean' divides by the number of rows not ignored (NaN when all are).
 */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import { formatShape, sameShape } from '../core/shape.js';
import { checkChoice, checkOptions, optionKeys } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { binary, cast, dtypeMismatch, unary } from './elementwise.js';
import { oneHotAlong } from './one-hot.js';
import { reduce } from './reduce.js';
import { softmax } from './rows.js';

/** How a loss reduces its per-element (mseLoss) or per-row (crossEntropy) values. */
export type LossReduction = 'mean' | 'sum' | 'none';

/** Options of `gpu.mseLoss` and `gpu.crossEntropy`. */
export interface LossOptions {
  /** 'mean' (default), 'sum', or 'none' (the unreduced losses). */
  reduction?: LossReduction;
}

/** The keys {@link LossOptions} takes. */
export const LOSS_OPTIONS = optionKeys<LossOptions>({ reduction: true });

/** The reduction `options` ask for, checked. */
export function lossReduction(op: string, options: unknown): LossReduction {
  const o = checkOptions<LossOptions>(op, options, LOSS_OPTIONS);
  return checkChoice(op, 'reduction', o.reduction, ['mean', 'sum', 'none'], 'mean');
}

/** mseLoss takes float pred and target of one shape and dtype. */
export function checkMse(s: Session, pred: unknown, target: unknown): asserts pred is Tensor {
  const op = 'mseLoss';
  s.checkFloat(op, pred, 'pred');
  s.checkFloat(op, target, 'target');
  if (pred.dtype !== target.dtype) throw dtypeMismatch(op, pred.dtype, target.dtype);
  if (!sameShape(pred.shape, target.shape)) {
    throw new InvalidArgumentError(`${op}: pred ${formatShape(pred.shape)} and target ${formatShape(target.shape)} must have the same shape`);
  }
}

/** d² reduced as asked (`op` names the loss in messages). */
export function squaredError<D extends DType>(s: Session, op: string, d: Tensor<D>, reduction: LossReduction): Tensor<D> {
  const squares = binary(s, 'mul', d, d, op);
  if (reduction === 'none') return squares;
  try {
    return reduce(s, reduction, squares, undefined);
  } finally {
    squares.dispose();
  }
}

/** Mean squared error: the mean (or sum, or each) of (pred − target)². */
export function mseLoss<D extends DType>(s: Session, pred: Tensor<D>, target: Tensor<D>, options: unknown): Tensor<D> {
  const op = 'mseLoss';
  checkMse(s, pred, target);
  const reduction = lossReduction(op, options);
  using d = binary(s, 'sub', pred, target, op);
  return squaredError(s, op, d, reduction);
}

/** What crossEntropy found its arguments to be. */
export interface CrossEntropyShape {
  classes: number;
  /** The logits' shape without the class axis: one loss per row. */
  rowShape: readonly number[];
  /** The targets are class indices (else probabilities). */
  indices: boolean;
}

/** crossEntropy takes float logits [..., classes] and i32 indices [...] or probabilities [..., classes] of the logits' dtype. */
export function checkCrossEntropy(s: Session, logits: unknown, targets: unknown): CrossEntropyShape {
  const op = 'crossEntropy';
  s.checkFloat(op, logits, 'logits');
  s.checkTensor(op, targets, 'targets');
  if (logits.rank < 1 || logits.shape[logits.rank - 1] === 0) {
    throw new InvalidArgumentError(`${op}: logits must be [..., classes] with at least one class, got ${logits.toString()}`);
  }
  const rowShape = logits.shape.slice(0, -1);
  const indices = targets.dtype === 'i32';
  if (indices) {
    if (!sameShape(targets.shape, rowShape)) {
      throw new InvalidArgumentError(`${op}: class indices must have the shape of logits ${formatShape(logits.shape)} without its class axis, ${formatShape(rowShape)}; got ${targets.toString()}`);
    }
    s.assertSupports(op, 'oneHot');
  } else {
    if (targets.dtype !== logits.dtype) throw dtypeMismatch(op, logits.dtype, targets.dtype);
    if (!sameShape(targets.shape, logits.shape)) {
      throw new InvalidArgumentError(`${op}: class probabilities must have the shape of logits ${formatShape(logits.shape)}, got ${targets.toString()}`);
    }
  }
  return { classes: logits.shape[logits.rank - 1]!, rowShape, indices };
}

/** The f32 pieces of a cross-entropy, [rows, classes] each: what its value and its gradient are made of. */
export interface CrossEntropyTerms {
  /** logSoftmax of the logits. */
  readonly logProbs: Tensor<'f32'>;
  /** The targets' weight of each class: one-hot rows, or the probabilities. */
  readonly weights: Tensor<'f32'>;
  /** With class indices, the rows not ignored (one element): what 'mean' divides by. */
  readonly count: Tensor<'f32'> | undefined;
  [Symbol.dispose](): void;
}

/** The terms of crossEntropy(logits, targets) (checked by {@link checkCrossEntropy}). */
export function crossEntropyTerms(s: Session, op: string, logits: Tensor, targets: Tensor, shape: CrossEntropyShape): CrossEntropyTerms {
  const { classes } = shape;
  const rows = logits.size / classes;
  const made: Tensor[] = [];
  try {
    using x = logits.reshape([rows, classes]);
    using wide = x.dtype === 'f32' ? undefined : cast(s, x, 'f32');
    const logProbs = softmax(s, (wide ?? x) as Tensor<'f32'>, true);
    made.push(logProbs);
    let weights: Tensor<'f32'>;
    let count: Tensor<'f32'> | undefined;
    if (shape.indices) {
      using flat = targets.reshape([rows]) as Tensor<'i32'>;
      weights = oneHotAlong<'f32'>(s, op, flat, classes, rows, 1, [rows, classes], 'f32');
      made.push(weights);
      count = reduce(s, 'sum', weights, undefined);
      made.push(count);
    } else {
      using t = targets.reshape([rows, classes]);
      weights = (t.dtype === 'f32' ? t.detach() : cast(s, t, 'f32')) as Tensor<'f32'>;
      made.push(weights);
    }
    return new Terms(logProbs, weights, count);
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  }
}

/** {@link CrossEntropyTerms} as made: one class, not a dispose closure per call. */
class Terms implements CrossEntropyTerms {
  constructor(
    readonly logProbs: Tensor<'f32'>,
    readonly weights: Tensor<'f32'>,
    readonly count: Tensor<'f32'> | undefined,
  ) {}

  [Symbol.dispose](): void {
    this.logProbs.dispose();
    this.weights.dispose();
    this.count?.dispose();
  }
}

/** The largest finite f32: what a one-hot mask scales by to pick log-probabilities without 0·(−∞). */
const F32_MAX = 3.4028234663852886e38;

/** The loss from its terms: −Σ weights·logProbs per row, reduced as asked, in `dtype`. */
export function crossEntropyLoss<D extends DType>(s: Session, op: string, terms: CrossEntropyTerms, reduction: LossReduction, shape: CrossEntropyShape, dtype: DType): Tensor<D> {
  let per: Tensor<'f32'>;
  {
    // With class indices the target's log-probability is picked as max(logProbs, −w·F32_MAX),
    // which is 0 where w = 0 even beside a logit of −∞ (a masked class), where w·logProbs is NaN.
    using scaled = shape.indices ? binary(s, 'mul', terms.weights, -F32_MAX, op) : undefined;
    using picked = scaled ? binary(s, 'max', terms.logProbs, scaled, op) : binary(s, 'mul', terms.weights, terms.logProbs, op);
    using total = reduce(s, 'sum', picked, 1);
    per = unary(s, 'neg', total);
  }
  let loss: Tensor;
  try {
    if (reduction === 'none') loss = per.reshape(shape.rowShape);
    else if (reduction === 'sum' || !shape.indices) loss = reduce(s, reduction, per, undefined);
    else {
      using total = reduce(s, 'sum', per, undefined);
      using count = terms.count!.reshape([]);
      loss = binary(s, 'div', total, count, op);
    }
  } finally {
    per.dispose();
  }
  if (loss.dtype === dtype) return loss as Tensor<D>;
  try {
    return cast(s, loss, dtype) as Tensor<D>;
  } finally {
    loss.dispose();
  }
}

/** Cross-entropy of logits [..., classes] against class indices [...] (i32) or probabilities [..., classes]. */
export function crossEntropy<D extends DType>(s: Session, logits: Tensor<D>, targets: Tensor, options: unknown): Tensor<D> {
  const op = 'crossEntropy';
  const shape = checkCrossEntropy(s, logits, targets);
  const reduction = lossReduction(op, options);
  using terms = crossEntropyTerms(s, op, logits, targets, shape);
  return crossEntropyLoss<D>(s, op, terms, reduction, shape, logits.dtype);
}
