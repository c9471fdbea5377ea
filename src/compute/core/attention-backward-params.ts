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
import type { TensorView } from './view.js';

/** One attention backward as a backend executes it. Views are dense and row-major; seqK ≥ 1. */
export interface AttentionBackwardParams {
  /** `[B, Hq, Sq, D]`. */
  q: TensorView;
  /** `[B, Hkv, Sk, D]`. */
  k: TensorView;
  v: TensorView;
  /** The forward's output, `[B, Hq, Sq, D]`, the dtype of q. */
  out: TensorView;
  /** The forward's natural-log log-sum-exp of each row's scaled scores, `[B, Hq, Sq]` f32. */
  lse: TensorView;
  /** Gradient of the output, `[B, Hq, Sq, D]`, the dtype of q. */
  dOut: TensorView;
  /** i32 `[B]`: keys at or after `clamp(len, 0, Sk)` are masked, as in the forward. */
  keyLengths?: TensorView;
  /** Gradients, in the dtype and shape of q, k and v. */
  dq: TensorView;
  dk: TensorView;
  dv: TensorView;
  batch: number;
  heads: number;
  kvHeads: number;
  seqQ: number;
  seqK: number;
  headDim: number;
  scale: number;
  causal: boolean;
}
