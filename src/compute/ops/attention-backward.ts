/**
 * The backward of `gpu.attention`: the gradients of q, k and v from what the forward saved (its
 * output and, with `returnLogSumExp`, the log-sum-exp of each row) and the gradient of the output.
 * FlashAttention-2 style: P is recomputed tile by tile from the saved log-sum-exp, so no
 * seqQ × seqK matrix is formed (see `core/attention-backward-params.ts` for the equations).
 *
 * The options are the forward's (`causal`, `scale`, `keyLengths`) and must be the ones the
 * forward ran with: the saved log-sum-exp only means something for the masks that produced it.
 * With grouped-query heads, dk and dv sum over the query heads that share a k/v head. dq, dk and
 * dv come in the dtype of q (f32, f16, bf16; arithmetic in f32 at least). Bad input is refused
 * here, before any backend runs, with the same messages as the forward's where they overlap.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { AttentionBackwardParams } from '../core/attention-backward-params.js';
import { formatShape, sameShape } from '../core/shape.js';
import { checkFlag, checkOptions, optionKeys, validateFinite } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { ATTENTION_DTYPES, checkShapes, keyLengthsTensor, type AttentionOptions } from './attention.js';

/** Options of {@link attentionBackward}: the forward's masks and scale. */
export type AttentionBackwardOptions = Pick<AttentionOptions, 'causal' | 'scale' | 'keyLengths'>;

/** The keys {@link AttentionBackwardOptions} takes. */
export const ATTENTION_BACKWARD_OPTIONS = optionKeys<AttentionBackwardOptions>({ causal: true, scale: true, keyLengths: true });

/** Gradients of q, k and v, each in the shape and dtype of its input. */
export interface AttentionGradients {
  dq: Tensor;
  dk: Tensor;
  dv: Tensor;
}

/**
 * dq, dk and dv of softmax(scale·q·kᵀ + mask)·v given the forward's `out` `[B, Hq, Sq, D]`, its
 * log-sum-exp `lse` `[B, Hq, Sq]` f32 and the output gradient `dOut` (shaped like out).
 */
export function attentionBackward(s: Session, q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, dOut: Tensor, opts?: unknown): AttentionGradients {
  const op = 'attentionBackward';
  const named = [['q', q], ['k', k], ['v', v], ['out', out], ['lse', lse], ['dOut', dOut]] as const;
  for (const [name, t] of named) s.checkTensor(op, t, name);
  const options = checkOptions<AttentionBackwardOptions>(op, opts, ATTENTION_BACKWARD_OPTIONS);
  const dtype = q.dtype;
  if (!ATTENTION_DTYPES.includes(dtype)) {
    throw new InvalidArgumentError(`${op}: q must be f32, f16 or bf16, got ${q.toString()}; cast it first, e.g. gpu.cast(q, 'f32')`);
  }
  for (const [name, t] of [['k', k], ['v', v], ['out', out], ['dOut', dOut]] as const) {
    if (t.dtype !== dtype) {
      throw new InvalidArgumentError(`${op}: dtype mismatch: ${name} is ${t.dtype} but q is ${dtype}; cast with gpu.cast(${name}, '${dtype}')`);
    }
  }
  const shape = checkShapes(op, q, k, v);
  for (const [name, t] of [['out', out], ['dOut', dOut]] as const) {
    if (!sameShape(t.shape, q.shape)) throw new InvalidArgumentError(`${op}: ${name} ${formatShape(t.shape)} must have the shape of q ${formatShape(q.shape)}`);
  }
  const rows = q.shape.slice(0, 3);
  if (lse.dtype !== 'f32' || !sameShape(lse.shape, rows)) {
    throw new InvalidArgumentError(
      `${op}: lse must be the forward's f32 log-sum-exp ${formatShape(rows)} (gpu.attention(..., { returnLogSumExp: true })), got ${lse.toString()}`,
    );
  }
  const causal = checkFlag(op, 'causal', options.causal, false);
  const scale = validateFinite(op, 'scale', options.scale ?? 1 / Math.sqrt(shape.headDim));
  s.assertSupports(op, 'attentionBackward');
  const lengths = keyLengthsTensor(s, op, options.keyLengths, shape.batch, shape.seqK);
  const made: Tensor[] = [];
  try {
    const dq = s.empty(op, q.shape, dtype);
    made.push(dq);
    const dk = s.empty(op, k.shape, dtype);
    made.push(dk);
    const dv = s.empty(op, v.shape, dtype);
    made.push(dv);
    if (shape.seqK === 0) {
      // No key: every row saw nothing and its gradient is 0 (dk and dv are empty).
      if (dq.size > 0) s.backend.fill(dq.view, 0);
    } else if (shape.seqQ === 0) {
      // No query: nothing reads the keys.
      if (dk.size > 0) {
        s.backend.fill(dk.view, 0);
        s.backend.fill(dv.view, 0);
      }
    } else if (dq.size > 0) {
      const params: AttentionBackwardParams = {
        q: q.view,
        k: k.view,
        v: v.view,
        out: out.view,
        lse: lse.view,
        dOut: dOut.view,
        dq: dq.view,
        dk: dk.view,
        dv: dv.view,
        ...shape,
        scale,
        causal,
      };
      if (lengths) params.keyLengths = lengths.tensor.view;
      s.backend.attentionBackward!(params);
    }
    return { dq, dk, dv };
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  } finally {
    // A temporary lengths tensor may go at once: the pool reuses its memory in stream order.
    if (lengths?.owned) lengths.tensor.dispose();
  }
}
