/**
 * attention, differentiable in q, k and v: the forward keeps its log-sum-exp (and its output) for
 * the FlashAttention-2-style backward (`ops/attention-backward.ts`), which recomputes the
 * probabilities tile by tile. The log-sum-exp a caller asks for is returned as a constant: no
 * gradient flows through it. keyLengths (a number array, or an i32 tensor, saved) are not differentiated.
 */
import { attentionBackward } from '../../ops/attention-backward.js';
import { attention as rawAttention, type AttentionOptions, type AttentionResult } from '../../ops/attention.js';
import type { Session } from '../../tensor/session.js';
import { Tensor } from '../../tensor/tensor.js';
import { record, recording } from '../record.js';

/** softmax(scale·q·kᵀ + mask)·v (see `ops/attention.ts`), recorded when q, k or v requires grad. */
export function attention(s: Session, q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): Tensor | AttentionResult {
  if (!recording(s, 'attention', q, k, v)) return rawAttention(s, q, k, v, options);
  const { out, lse } = rawAttention(s, q, k, v, { ...options, returnLogSumExp: true }) as AttentionResult;
  const lengths = options.keyLengths;
  const lengthsTensor = lengths instanceof Tensor ? lengths : undefined;
  const { causal, scale } = options;
  let recorded: Tensor;
  try {
    recorded = record('attention', [q, k, v], out, [q, k, v, out, lse, lengthsTensor], ([g], [sq, sk, sv, sout, slse, slengths], needs) => {
      const keyLengths = slengths ?? (lengths instanceof Tensor ? undefined : lengths);
      const { dq, dk, dv } = attentionBackward(s, sq!, sk!, sv!, sout!, slse!, g!, { causal, scale, keyLengths });
      return [dq, dk, dv].map((d, i) => {
        if (needs[i]) return d;
        d.dispose();
        return undefined;
      });
    });
  } catch (err) {
    lse.dispose();
    throw err;
  }
  if (options.returnLogSumExp) return { out: recorded, lse };
  lse.dispose();
  return recorded;
}
