/**
 * Scaled dot-product attention forward, softmax(scale·q·kᵀ + mask)·v on `[batch, heads, seq, headDim]`
 * tensors, as a backend runs it.
 *
 * Semantics shared by every backend:
 * - q is `[B, Hq, Sq, D]`, k and v are `[B, Hkv, Sk, D]` with Hq a multiple of Hkv (grouped-query
 *   and multi-query attention: q head h reads k/v head ⌊h / (Hq / Hkv)⌋). Sq may differ from Sk.
 * - `causal` is PyTorch SDPA's `is_causal`: the mask is the lower triangle of an Sq × Sk matrix of
 *   ones aligned top-left, so query i sees keys 0..i (all of them when i ≥ Sk - 1).
 * - `keyLengths[b]` keeps keys 0..len-1 of batch entry b and masks the rest (padding). A tensor's
 *   values are clamped to [0, Sk] on the device (they cannot be checked without a sync); a number
 *   array is checked here.
 * - A query row that sees no key (keyLengths 0, or Sk = 0) gets an output of 0 and a
 *   log-sum-exp of -Infinity, where a plain softmax would give NaN.
 * - f16/bf16 inputs are multiplied with f32 accumulation; softmax statistics are f32.
 */
import type { TensorView } from './view.js';

/** Largest head dim the kernels hold on chip (the CPU enforces the same limit, for one meaning everywhere). */
export const MAX_ATTENTION_HEAD_DIM = 256;

/** One attention forward as a backend executes it. Views are dense and row-major. */
export interface AttentionParams {
  /** `[B, Hq, Sq, D]`. */
  q: TensorView;
  /** `[B, Hkv, Sk, D]`. */
  k: TensorView;
  v: TensorView;
  /** `[B, Hq, Sq, D]`, the dtype of q. */
  out: TensorView;
  /** `[B, Hq, Sq]` f32, when asked for. */
  lse?: TensorView;
  /** i32 `[B]`: keys at or after `clamp(len, 0, Sk)` are masked. */
  keyLengths?: TensorView;
  batch: number;
  heads: number;
  kvHeads: number;
  seqQ: number;
  seqK: number;
  headDim: number;
  scale: number;
  causal: boolean;
}
