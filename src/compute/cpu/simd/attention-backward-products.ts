/**
 * Attention backward as products on a BLAS (f32), the semantics of
 * `core/attention-backward-params.ts`. Per block of query rows of one (batch, head), over the keys
 * the block sees:
 *
 *   S = scale·Q·Kᵀ and dP = dOut·Vᵀ            (two products)
 *   P = exp(S − lse), dS = P ∘ (dP − D)        (`attention_grad_scores`, in place)
 *   dV += Pᵀ·dOut, dK += scale·dSᵀ·Q           (accumulated over the group's heads and blocks)
 *   dQ = scale·dS·K                            (the block's rows, whole)
 *
 * The gradients are computed in f32 (the GPU kernels' precision) where the host reference
 * (`cpu/attention-backward.ts`) uses float64: a hundred times faster (B2 H8 S256 D64).
 */
import type { Blas } from '../../../blas/blas.js';
import type { SgemmArgs } from '../../../blas/sgemm.js';
import type { SimdAttention } from './attention.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** One f32 attention backward; addresses are byte offsets. */
export interface SimdAttentionBackward extends Omit<SimdAttention, 'lse' | 'dtype'> {
  /** f32 [B, Hq, Sq]: the forward's log-sum-exp. */
  lse: number;
  /** [B, Hq, Sq, D]. */
  dOut: number;
  dq: number;
  /** [B, Hkv, Sk, D] each. */
  dk: number;
  dv: number;
}

/** Most query rows per block (two rows × keys buffers of scores). */
const BLOCK_ROWS = 256;

/** Runs one attention backward. */
export function attentionBackwardByProducts(rt: SimdRuntime, blas: Blas, p: SimdAttentionBackward): void {
  const { batch: B, heads: H, kvHeads, seqQ: Sq, seqK: Sk, headDim: D } = p;
  const group = H / kvHeads;
  // Key lengths and every operand may come from queued jobs; dk and dv start at zero.
  rt.settle();
  const lengths = p.keyLengths === undefined ? undefined : Array.from({ length: B }, (_, b) => Math.min(Sk, Math.max(0, rt.i32[p.keyLengths! / 4 + b]!)));
  rt.f32.fill(0, p.dk / 4, p.dk / 4 + B * kvHeads * Sk * D);
  rt.f32.fill(0, p.dv / 4, p.dv / 4 + B * kvHeads * Sk * D);
  if (B * H * Sq === 0) return;
  const rowsCap = Math.min(Sq, BLOCK_ROWS);
  const scores = rt.temp(2 * rowsCap * Math.max(Sk, 1) * 4);
  try {
    const probs = Number(scores.address);
    const dScores = probs + rowsCap * Math.max(Sk, 1) * 4;
    const product = (g: Omit<SgemmArgs, 'a' | 'b' | 'c'>) => {
      rt.settle();
      const memory = rt.f32;
      blas.sgemm({ ...g, a: memory, b: memory, c: memory });
    };
    for (let b = 0; b < B; b++) {
      const valid = lengths?.[b] ?? Sk;
      for (let h = 0; h < H; h++) {
        const bh = b * H + h;
        const kv = (b * kvHeads + Math.floor(h / group)) * Sk * D;
        for (let q0 = 0; q0 < Sq; q0 += rowsCap) {
          const rows = Math.min(rowsCap, Sq - q0);
          const keys = p.causal ? Math.min(valid, q0 + rows) : valid;
          const q = p.q / 4 + (bh * Sq + q0) * D;
          const dOut = p.dOut / 4 + (bh * Sq + q0) * D;
          const dq = p.dq / 4 + (bh * Sq + q0) * D;
          if (keys === 0) {
            rt.f32.fill(0, dq, dq + rows * D);
            continue;
          }
          product({ m: rows, n: keys, k: D, alpha: p.scale, aOffset: q, transB: true, bOffset: p.k / 4 + kv, cOffset: probs / 4 });
          product({ m: rows, n: keys, k: D, aOffset: dOut, transB: true, bOffset: p.v / 4 + kv, cOffset: dScores / 4 });
          gradScores(rt, p, probs, dScores, rows, keys, q0, valid, p.lse + (bh * Sq + q0) * 4, dOut * 4, p.out + (bh * Sq + q0) * D * 4);
          product({ transA: true, m: keys, n: D, k: rows, aOffset: probs / 4, bOffset: dOut, beta: 1, cOffset: p.dv / 4 + kv });
          product({ m: rows, n: D, k: keys, alpha: p.scale, aOffset: dScores / 4, bOffset: p.k / 4 + kv, cOffset: dq });
          product({ transA: true, m: keys, n: D, k: rows, alpha: p.scale, aOffset: dScores / 4, bOffset: q, beta: 1, cOffset: p.dk / 4 + kv });
        }
      }
    }
    rt.settle();
  } finally {
    rt.freeTemp(scores);
  }
}

/** Queues `attention_grad_scores` over a block's rows, split across threads. */
function gradScores(rt: SimdRuntime, p: SimdAttentionBackward, probs: number, dScores: number, rows: number, keys: number, q0: number, valid: number, lse: number, dOut: number, out: number): void {
  const at = rt.structArea();
  const i32 = rt.i32;
  const fields = [probs, dScores, lse, dOut, out, keys, keys, q0, p.causal ? 1 : 0, valid, p.headDim];
  for (let i = 0; i < fields.length; i++) i32[at / 4 + i] = fields[i]!;
  const parts = splitRange(rows, rt.threads, Math.ceil(rt.threshold('rowsBytes') / (8 * keys)));
  rt.run('attention_grad_scores', parts.map(([r0, r1]) => [at, r0, r1]), false, rt.cost('rowsBytes', rows * keys * 8));
}
