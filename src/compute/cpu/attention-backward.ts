/**
 * Attention backward on the host, the reference the GPU kernels are checked by: FlashAttention-2's
 * recomputation, tiled so memory stays O(seq · headDim). A block of query rows meets the keys in
 * blocks; for each pair of blocks it recomputes P = exp(scale·q·kᵀ − lse) from the saved
 * log-sum-exp, then dP = dOut·vᵀ and dS = P ∘ (dP − D) with D = rowsum(dOut ∘ out), and adds
 * dS·k into dq, dSᵀ·q into dk and Pᵀ·dOut into dv. The largest scratch is one query block × one
 * key block of scores. A k/v head's gradients gather the query heads that share it (GQA).
 *
 * Arithmetic is in double precision on the stored values (f16/bf16 widened exactly), with one
 * rounding to the dtype on store; {@link attentionGradients} is the same computation on plain
 * arrays, so a test can check it in float64 against finite differences.
 */
import type { AttentionBackwardParams } from '../core/attention-backward-params.js';
import { loadFloat, loadInt, storeFloat } from './element-io.js';

/** Query rows per block. */
const BLOCK_Q = 32;
/** Keys per block. */
const BLOCK_K = 64;

/** An attention backward problem on plain arrays (row-major, as the views hold them). */
export interface AttentionGradientProblem {
  q: ArrayLike<number>;
  k: ArrayLike<number>;
  v: ArrayLike<number>;
  out: ArrayLike<number>;
  /** Natural-log log-sum-exp per query row; −Infinity for a row that saw no key. */
  lse: ArrayLike<number>;
  dOut: ArrayLike<number>;
  /** Valid keys per batch entry (clamped to [0, seqK]); absent: all of them. */
  keyLengths?: ArrayLike<number>;
  batch: number;
  heads: number;
  kvHeads: number;
  seqQ: number;
  seqK: number;
  headDim: number;
  scale: number;
  causal: boolean;
}

/** dq, dk and dv of `p` in float64, shaped like q, k and v. */
export function attentionGradients(p: AttentionGradientProblem): { dq: Float64Array; dk: Float64Array; dv: Float64Array } {
  const { batch, heads, kvHeads, seqQ, seqK, headDim: d, scale, causal, q, k, v, out, lse, dOut } = p;
  const dq = new Float64Array(batch * heads * seqQ * d);
  const dk = new Float64Array(batch * kvHeads * seqK * d);
  const dv = new Float64Array(batch * kvHeads * seqK * d);
  const group = heads / kvHeads;
  const probs = new Float64Array(BLOCK_Q * BLOCK_K);
  const dScores = new Float64Array(BLOCK_Q * BLOCK_K);
  const rowDot = new Float64Array(BLOCK_Q);

  for (let b = 0; b < batch; b++) {
    const valid = p.keyLengths ? Math.min(Math.max(p.keyLengths[b]!, 0), seqK) : seqK;
    for (let h = 0; h < heads; h++) {
      const qBase = (b * heads + h) * seqQ * d;
      const kvBase = (b * kvHeads + Math.floor(h / group)) * seqK * d;
      const rowBase = (b * heads + h) * seqQ;
      for (let q0 = 0; q0 < seqQ; q0 += BLOCK_Q) {
        const rows = Math.min(BLOCK_Q, seqQ - q0);
        for (let r = 0; r < rows; r++) {
          const at = qBase + (q0 + r) * d;
          let dot = 0;
          for (let x = 0; x < d; x++) dot += dOut[at + x]! * out[at + x]!;
          rowDot[r] = dot;
        }
        // Under the causal mask no row of the block sees a key past its last row.
        const keyEnd = causal ? Math.min(valid, q0 + rows) : valid;
        for (let k0 = 0; k0 < keyEnd; k0 += BLOCK_K) {
          const cols = Math.min(BLOCK_K, keyEnd - k0);
          for (let r = 0; r < rows; r++) {
            const i = q0 + r;
            const rowLse = lse[rowBase + i]!;
            // Keys this row sees in the block: [k0, k0 + visible); a row with no key has lse −∞ and P = 0.
            const visible = rowLse === -Infinity ? 0 : causal ? Math.min(cols, i + 1 - k0) : cols;
            const qRow = qBase + i * d;
            for (let c = 0; c < cols; c++) {
              if (c >= visible) {
                probs[r * BLOCK_K + c] = 0;
                dScores[r * BLOCK_K + c] = 0;
                continue;
              }
              const kRow = kvBase + (k0 + c) * d;
              let s = 0;
              let dp = 0;
              for (let x = 0; x < d; x++) {
                s += q[qRow + x]! * k[kRow + x]!;
                dp += dOut[qRow + x]! * v[kRow + x]!;
              }
              const prob = Math.exp(s * scale - rowLse);
              probs[r * BLOCK_K + c] = prob;
              dScores[r * BLOCK_K + c] = prob * (dp - rowDot[r]!);
            }
          }
          for (let r = 0; r < rows; r++) {
            const qRow = qBase + (q0 + r) * d;
            for (let c = 0; c < cols; c++) {
              const prob = probs[r * BLOCK_K + c]!;
              const ds = dScores[r * BLOCK_K + c]! * scale;
              if (prob === 0 && ds === 0) continue;
              const kRow = kvBase + (k0 + c) * d;
              for (let x = 0; x < d; x++) {
                dq[qRow + x]! += ds * k[kRow + x]!;
                dk[kRow + x]! += ds * q[qRow + x]!;
                dv[kRow + x]! += prob * dOut[qRow + x]!;
              }
            }
          }
        }
      }
    }
  }
  return { dq, dk, dv };
}

export function attentionBackward(p: AttentionBackwardParams): void {
  const { batch, heads, kvHeads, seqQ, seqK, headDim, scale, causal } = p;
  const { dq, dk, dv } = attentionGradients({
    batch,
    heads,
    kvHeads,
    seqQ,
    seqK,
    headDim,
    scale,
    causal,
    q: loadFloat(p.q),
    k: loadFloat(p.k),
    v: loadFloat(p.v),
    out: loadFloat(p.out),
    lse: loadFloat(p.lse),
    dOut: loadFloat(p.dOut),
    ...(p.keyLengths ? { keyLengths: loadInt(p.keyLengths) } : {}),
  });
  storeFloat(p.dq, Float32Array.from(dq));
  storeFloat(p.dk, Float32Array.from(dk));
  storeFloat(p.dv, Float32Array.from(dv));
}
