/**
 * Attention forward in float64, written the direct way (the whole row of scores, then a
 * two-pass softmax) so it shares no structure with the tiled online-softmax code it checks.
 */

export interface ReferenceProblem {
  batch: number;
  heads: number;
  kvHeads: number;
  seqQ: number;
  seqK: number;
  headDim: number;
  /** Row-major `[B, Hq, Sq, D]` and `[B, Hkv, Sk, D]` values (as the tensors hold them). */
  q: ArrayLike<number>;
  k: ArrayLike<number>;
  v: ArrayLike<number>;
  scale: number;
  causal: boolean;
  keyLengths?: readonly number[];
}

/** Output `[B, Hq, Sq, D]` and natural-log log-sum-exp `[B, Hq, Sq]` (-Infinity for rows with no key). */
export function referenceAttention(p: ReferenceProblem): { out: Float64Array; lse: Float64Array } {
  const { batch, heads, kvHeads, seqQ, seqK, headDim: d } = p;
  const out = new Float64Array(batch * heads * seqQ * d);
  const lse = new Float64Array(batch * heads * seqQ);
  const scores = new Float64Array(seqK);
  for (let b = 0; b < batch; b++) {
    const valid = Math.min(Math.max(p.keyLengths?.[b] ?? seqK, 0), seqK);
    for (let h = 0; h < heads; h++) {
      const kvh = Math.floor((h * kvHeads) / heads);
      for (let i = 0; i < seqQ; i++) {
        const row = (b * heads + h) * seqQ + i;
        let max = -Infinity;
        for (let j = 0; j < seqK; j++) {
          const visible = j < valid && (!p.causal || j <= i);
          let dot = 0;
          for (let x = 0; x < d; x++) dot += p.q[row * d + x]! * p.k[((b * kvHeads + kvh) * seqK + j) * d + x]!;
          scores[j] = visible ? dot * p.scale : -Infinity;
          max = Math.max(max, scores[j]!);
        }
        if (max === -Infinity) {
          lse[row] = -Infinity;
          continue;
        }
        let sum = 0;
        for (let j = 0; j < seqK; j++) sum += Math.exp(scores[j]! - max);
        lse[row] = max + Math.log(sum);
        for (let j = 0; j < seqK; j++) {
          const w = Math.exp(scores[j]! - max) / sum;
          if (w === 0) continue;
          for (let x = 0; x < d; x++) out[row * d + x]! += w * p.v[((b * kvHeads + kvh) * seqK + j) * d + x]!;
        }
      }
    }
  }
  return { out, lse };
}

/**
 * Gradients of Σ dOut ∘ attention(q, k, v) in float64, the direct way (each row's probabilities
 * from its whole row of scores, then the softmax Jacobian row by row); `out` and `lse` are
 * recomputed here, not taken from the code under test.
 *
 * Also how far relative errors of one unit in the terms of dS = P·(dP − D) can move dq and dk:
 * `dqD` and `dkD`, |scale|·Σ_j w_ij·|k_j| and |scale|·Σ_i w_ij·|q_i| with
 * w_ij = P_ij·(A_i + (|dP_ij| + |D_i|)·(1 − ln P_ij)) and A_i = Σ|dOut_i ∘ out_i|: D summed from
 * the output as stored (rounded to the dtype), P from an exponent whose own error grows with it,
 * dP from a dot product. dq_i = Σ_j dS_ij·k_j cancels where dP − D changes sign over the row, so
 * such errors may be large next to dq and dk (a head dim of 1, a peaked row) however exactly a
 * backend works: they measure the problem's conditioning, not the backend.
 */
export function referenceAttentionBackward(p: ReferenceProblem & { dOut: ArrayLike<number> }): { dq: Float64Array; dk: Float64Array; dv: Float64Array; dqD: Float64Array; dkD: Float64Array } {
  const { batch, heads, kvHeads, seqQ, seqK, headDim: d } = p;
  const dq = new Float64Array(batch * heads * seqQ * d);
  const dk = new Float64Array(batch * kvHeads * seqK * d);
  const dv = new Float64Array(batch * kvHeads * seqK * d);
  const dqD = new Float64Array(dq.length);
  const dkD = new Float64Array(dk.length);
  const probs = new Float64Array(seqK);
  const dProbs = new Float64Array(seqK);
  for (let b = 0; b < batch; b++) {
    const valid = Math.min(Math.max(p.keyLengths?.[b] ?? seqK, 0), seqK);
    for (let h = 0; h < heads; h++) {
      const kvh = Math.floor((h * kvHeads) / heads);
      const kv = (j: number) => ((b * kvHeads + kvh) * seqK + j) * d;
      for (let i = 0; i < seqQ; i++) {
        const row = ((b * heads + h) * seqQ + i) * d;
        let max = -Infinity;
        for (let j = 0; j < seqK; j++) {
          let dot = 0;
          for (let x = 0; x < d; x++) dot += p.q[row + x]! * p.k[kv(j) + x]!;
          probs[j] = j < valid && (!p.causal || j <= i) ? dot * p.scale : -Infinity;
          max = Math.max(max, probs[j]!);
        }
        if (max === -Infinity) continue;
        let sum = 0;
        for (let j = 0; j < seqK; j++) sum += (probs[j] = Math.exp(probs[j]! - max));
        // dP_j = dOut·v_j; dS_j = P_j·(dP_j − Σ_l P_l·dP_l).
        let weighted = 0;
        for (let j = 0; j < seqK; j++) {
          probs[j]! /= sum;
          let dot = 0;
          for (let x = 0; x < d; x++) dot += p.dOut[row + x]! * p.v[kv(j) + x]!;
          dProbs[j] = dot;
          weighted += probs[j]! * dot;
        }
        let terms = 0;  // A_i = Σ_x |dOut_x·out_x|
        for (let x = 0; x < d; x++) {
          let o = 0;
          for (let j = 0; j < seqK; j++) o += probs[j]! * p.v[kv(j) + x]!;
          terms += Math.abs(p.dOut[row + x]! * o);
        }
        for (let j = 0; j < seqK; j++) {
          if (probs[j] === 0) continue;
          const ds = probs[j]! * (dProbs[j]! - weighted) * p.scale;
          const reach = probs[j]! * (terms + (Math.abs(dProbs[j]!) + Math.abs(weighted)) * (1 - Math.log(probs[j]!))) * Math.abs(p.scale);
          for (let x = 0; x < d; x++) {
            dq[row + x]! += ds * p.k[kv(j) + x]!;
            dk[kv(j) + x]! += ds * p.q[row + x]!;
            dv[kv(j) + x]! += probs[j]! * p.dOut[row + x]!;
            dqD[row + x]! += reach * Math.abs(p.k[kv(j) + x]!);
            dkD[kv(j) + x]! += reach * Math.abs(p.q[row + x]!);
          }
        }
      }
    }
  }
  return { dq, dk, dv, dqD, dkD };
}
