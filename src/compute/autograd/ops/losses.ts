/**
 * The losses with their gradients. mseLoss: d(pred) = (2/n)·(pred − target)·g for 'mean' (2·… for
 * 'sum' and 'none'), d(target) its negation. crossEntropy: with p = softmax(logits) and w the
 * targets' class weights, d(logits) = (p·Σw − w)·g per row (g divided by the count for 'mean'),
 * and d(probabilities) = −logSoftmax(logits)·g; class indices get none.
 */
import type { DType } from '../../core/dtype.js';
import { binary, unary } from '../../ops/elementwise.js';
import {
  checkCrossEntropy,
  checkMse,
  crossEntropy as rawCrossEntropy,
  crossEntropyLoss,
  crossEntropyTerms,
  lossReduction,
  mseLoss as rawMseLoss,
  squaredError,
} from '../../ops/losses.js';
import { reduce } from '../../ops/reduce.js';
import type { Session } from '../../tensor/session.js';
import type { Tensor } from '../../tensor/tensor.js';
import { inF32 } from '../f32.js';
import { record, recording } from '../record.js';

/** Mean squared error (see `ops/losses.ts`), differentiable in pred and target. */
export function mseLoss<D extends DType>(s: Session, pred: Tensor<D>, target: Tensor<D>, options: unknown): Tensor<D> {
  const op = 'mseLoss';
  if (!recording(s, op, pred, target)) return rawMseLoss(s, pred, target, options);
  checkMse(s, pred, target);
  const reduction = lossReduction(op, options);
  const norm = reduction === 'mean' ? 2 / pred.size : 2;
  using d = binary(s, 'sub', pred, target, op);
  const out = squaredError(s, op, d, reduction);
  return record(op, [pred, target], out, [d], ([g], [sd], needs) => {
    using scaled = binary(s, 'mul', sd!, norm, op);
    const gp = binary(s, 'mul', scaled, g!, op);
    if (!needs[1]) return [gp, undefined];
    const gt = unary(s, 'neg', gp);
    if (needs[0]) return [gp, gt];
    gp.dispose();
    return [undefined, gt];
  });
}

/** Cross-entropy from logits (see `ops/losses.ts`), differentiable in the logits and in probability targets. */
export function crossEntropy<D extends DType>(s: Session, logits: Tensor<D>, targets: Tensor, options: unknown): Tensor<D> {
  const op = 'crossEntropy';
  if (!recording(s, op, logits, targets)) return rawCrossEntropy(s, logits, targets, options);
  const shape = checkCrossEntropy(s, logits, targets);
  const reduction = lossReduction(op, options);
  // The terms view the inputs in 2-D: with recording off, those views are not recorded.
  using terms = s.gradMode.run(false, () => crossEntropyTerms(s, op, logits, targets, shape));
  const out = crossEntropyLoss<D>(s, op, terms, reduction, shape, logits.dtype);
  const rows = logits.size / shape.classes;
  const [logitsShape, logitsDType] = [logits.shape, logits.dtype];
  const [targetsShape, targetsDType] = [targets.shape, targets.dtype];
  return record(op, [logits, targets], out, [terms.logProbs, terms.weights, terms.count], ([g], [logProbs, weights, count], needs) =>
    inF32(s, [g], (gf) => {
      // Each row's factor: its own gradient ('none'), the one gradient ('sum'), divided by the count ('mean').
      using perRow = reduction === 'none' ? gf!.reshape([rows, 1]) : undefined;
      using counted = count ? count.reshape([]) : undefined;
      using mean = reduction === 'mean' ? binary(s, 'div', gf!, counted ?? rows, op) : undefined;
      const factor = perRow ?? mean ?? gf!;
      let gl: Tensor | undefined;
      if (needs[0]) {
        using p = unary(s, 'exp', logProbs!);
        using mass = reduce(s, 'sum', weights!, { axis: 1, keepDims: true });
        using spread = binary(s, 'mul', p, mass, op);
        using diff = binary(s, 'sub', spread, weights!, op);
        using rowsGrad = binary(s, 'mul', diff, factor, op);
        gl = rowsGrad.reshape(logitsShape);
      }
      let gt: Tensor | undefined;
      if (needs[1]) {
        using scaled = binary(s, 'mul', logProbs!, factor, op);
        using negated = unary(s, 'neg', scaled);
        gt = negated.reshape(targetsShape);
      }
      return [
        [gl, logitsDType],
        [gt, targetsDType],
      ];
    }),
  );
}
