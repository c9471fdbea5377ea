/**
 * Scaled dot-product attention backward, as a backend runs it: the gradients of q, k and v given
 * what the forward saved (its output and the log-sum-exp of each row) and the gradient of the
 * output, FlashAttention-2 style. P = exp(scale·q·kᵀ − lse) is recomputed tile by tile from the
 * saved log-sum-exp, so no seqQ × seqK matrix exists anywhere:
 *
 *   D = rowsum(dOut ∘ out)             dV = Pᵀ·dOut
 *   dP = dOut·vᵀ                       dS = P ∘ (dP − D)
 *   dQ = scale·dS·k                    dK = scale·dSᵀ·q
 *
 * with the forward's masks (`causal` top-left aligned, `keyLengths`) and head grouping: a k/v
 * head's gradients sum over the `heads / kvHeads` query heads that read it. Arithmetic is in f32
 * at least (the CPU uses f64) and dq, dk, dv are rounded once to the input dtype. A query row whose
 * log-sum-exp is −∞ (it saw no key) contributes nothing, and its dq row is 0.
 */
import type { AttentionParams } from './attention-params.js';
import type { TensorView } from './view.js';

/**
 * One attention backward as a backend executes it: the forward's problem (q, k, v, out, the masks,
 * scale and extents, as {@link AttentionParams}), what it saved and the gradients. Views are dense
 * and row-major; seqK ≥ 1.
 */
export interface AttentionBackwardParams extends Omit<AttentionParams, 'lse'> {
  /** The forward's natural-log log-sum-exp of each row's scaled scores, `[B, Hq, Sq]` f32. */
  lse: TensorView;
  /** Gradient of the output, `[B, Hq, Sq, D]`, the dtype of q. */
  dOut: TensorView;
  /** Gradients, in the dtype and shape of q, k and v. */
  dq: TensorView;
  dk: TensorView;
  dv: TensorView;
}
