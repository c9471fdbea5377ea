/**
 * Attention forward on the host, tiled like the GPU kernels so memory stays O(seq · headDim):
 * a block of query rows walks the keys in blocks, keeping for each row a running maximum,
 * a running sum of exponentials and an unnormalised output that are rescaled whenever the
 * maximum grows (online softmax). No seqQ × seqK matrix exists at any time; the largest
 * scratch is one query block × one key block of scores.
 *
 * Arithmetic is in double precision on f32 values (f16/bf16 widened exactly) and rounds once
 * to the output dtype, so this backend is also the reference the GPU kernels are checked by.
 */
import type { AttentionParams } from '../core/attention-params.js';
import { floatTarget, loadFloat, loadInt, storeFloat } from './element-io.js';

/** Query rows per block. */
const BLOCK_Q = 32;
/** Keys per block. */
const BLOCK_K = 64;

export function attention(p: AttentionParams): void {
  const { batch, heads, kvHeads, seqQ, seqK, headDim: d, scale, causal } = p;
  const q = loadFloat(p.q);
  const k = loadFloat(p.k);
  const v = loadFloat(p.v);
  const out = floatTarget(p.out);
  const lse = p.lse ? floatTarget(p.lse) : undefined;
  const lengths = p.keyLengths ? loadInt(p.keyLengths) : undefined;
  const group = heads / kvHeads;

  const scores = new Float64Array(BLOCK_Q * BLOCK_K);
  const acc = new Float64Array(BLOCK_Q * d);
  const rowMax = new Float64Array(BLOCK_Q);
  const rowSum = new Float64Array(BLOCK_Q);

  for (let b = 0; b < batch; b++) {
    const valid = lengths ? Math.min(Math.max(lengths[b]!, 0), seqK) : seqK;
    for (let h = 0; h < heads; h++) {
      const qBase = (b * heads + h) * seqQ * d;
      const kvBase = (b * kvHeads + Math.floor(h / group)) * seqK * d;
      const rowBase = (b * heads + h) * seqQ;
      for (let q0 = 0; q0 < seqQ; q0 += BLOCK_Q) {
        const rows = Math.min(BLOCK_Q, seqQ - q0);
        acc.fill(0, 0, rows * d);
        rowMax.fill(-Infinity, 0, rows);
        rowSum.fill(0, 0, rows);
        // Keys past the block's last row are masked for every row of it when causal.
        const keyEnd = causal ? Math.min(valid, q0 + rows) : valid;
        for (let k0 = 0; k0 < keyEnd; k0 += BLOCK_K) {
          const cols = Math.min(BLOCK_K, keyEnd - k0);
          for (let r = 0; r < rows; r++) {
            const i = q0 + r;
            // Keys this row sees in the block: [k0, k0 + visible).
            const visible = causal ? Math.min(cols, i + 1 - k0) : cols;
            if (visible <= 0) continue;
            const qRow = qBase + i * d;
            let blockMax = -Infinity;
            for (let c = 0; c < visible; c++) {
              const kRow = kvBase + (k0 + c) * d;
              let dot = 0;
              for (let x = 0; x < d; x++) dot += q[qRow + x]! * k[kRow + x]!;
              const s = dot * scale;
              scores[r * BLOCK_K + c] = s;
              if (s > blockMax) blockMax = s;
            }
            const oldMax = rowMax[r]!;
            const newMax = Math.max(oldMax, blockMax);
            const rescale = oldMax === -Infinity ? 0 : Math.exp(oldMax - newMax);
            let sum = rowSum[r]! * rescale;
            const accRow = r * d;
            if (rescale !== 1) for (let x = 0; x < d; x++) acc[accRow + x]! *= rescale;
            for (let c = 0; c < visible; c++) {
              const weight = Math.exp(scores[r * BLOCK_K + c]! - newMax);
              sum += weight;
              const vRow = kvBase + (k0 + c) * d;
              for (let x = 0; x < d; x++) acc[accRow + x]! += weight * v[vRow + x]!;
            }
            rowMax[r] = newMax;
            rowSum[r] = sum;
          }
        }
        for (let r = 0; r < rows; r++) {
          const sum = rowSum[r]!;
          // A row that saw no key (sum 0) gets zeros and a log-sum-exp of -Infinity.
          const inv = sum > 0 ? 1 / sum : 0;
          const outRow = qBase + (q0 + r) * d;
          for (let x = 0; x < d; x++) out[outRow + x] = acc[r * d + x]! * inv;
          if (lse) lse[rowBase + q0 + r] = sum > 0 ? rowMax[r]! + Math.log(sum) : -Infinity;
        }
      }
    }
  }
  storeFloat(p.out, out);
  if (lse && p.lse) storeFloat(p.lse, lse);
}
