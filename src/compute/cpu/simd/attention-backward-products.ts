/**
 * Attention backward as products (f32), the semantics of `core/attention-backward-params.ts`. Per
 * block of query rows of one (batch, head), over the keys the block sees:
 *
 *   S = scale·Q·Kᵀ and dP = dOut·Vᵀ            (two products)
 *   P = exp(S − lse), dS = P ∘ (dP − D)        (`attention_grad_scores`, in place)
 *   dV += Pᵀ·dOut, dK += scale·dSᵀ·Q           (accumulated over the group's heads and blocks)
 *   dQ = scale·dS·K                            (the block's rows, whole)
 *
 * The products run on whatever `product` is (the BLAS, or the SIMD sgemm), each into a fresh
 * output; dK and dV gather theirs by an elementwise add. The gradients are computed in f32 (the
 * GPU kernels' precision) where the host's (`cpu/attention-backward.ts`) are float64: B2 H8 S256
 * D64 forward and backward in 19.8 ms on the BLAS against 806-1056 ms.
 */
import { planBroadcast } from '../../core/broadcast.js';
import type { SimdAttention } from './attention.js';
import { dense, queryBlocks, type QueryBlock } from './attention-blocks.js';
import { binary, fill as fillKernel } from './elementwise.js';
import type { SimdGemm } from './matmul.js';
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

/** Runs one attention backward with `product` for its products. */
export function attentionBackwardByProducts(rt: SimdRuntime, p: SimdAttentionBackward, product: (g: SimdGemm) => void): void {
  const { batch: B, heads: H, kvHeads, seqQ: Sq, seqK: Sk, headDim: D } = p;
  // dk and dv start at zero.
  const kvBytes = B * kvHeads * Sk * D * 4;
  fill(rt, p.dk, kvBytes);
  fill(rt, p.dv, kvBytes);
  if (B * H * Sq === 0) return;
  const rowsCap = Math.min(Sq, BLOCK_ROWS);
  const scoreBytes = rowsCap * Math.max(Sk, 1) * 4;
  const temp = rt.temp(2 * scoreBytes + Math.max(Sk, 1) * D * 4);
  try {
    const probs = Number(temp.address);
    const dScores = probs + scoreBytes;
    const contribution = dScores + scoreBytes;
    /** target += the product `g` ([keys, D], into `contribution`). */
    const accumulate = (target: number, g: SimdGemm, keys: number) => {
      product(g);
      binary(rt, 'add', 'f32', target, contribution, target, planBroadcast('attentionBackward', [keys * D], [keys * D]));
    };
    for (const c of queryBlocks(rt, p, rowsCap)) {
      const { rows, keys, rowsAt: at, kvAt: kv } = c;
      if (keys === 0) {
        fill(rt, p.dq + at, rows * D * 4);
        continue;
      }
      product(dense({ a: p.q + at, b: p.k + kv, out: probs, m: rows, n: keys, k: D, transB: true, alpha: p.scale }));
      product(dense({ a: p.dOut + at, b: p.v + kv, out: dScores, m: rows, n: keys, k: D, transB: true, alpha: 1 }));
      gradScores(rt, p, c, probs, dScores);
      accumulate(p.dv + kv, dense({ a: probs, b: p.dOut + at, out: contribution, m: keys, n: D, k: rows, transA: true, alpha: 1 }), keys);
      product(dense({ a: dScores, b: p.k + kv, out: p.dq + at, m: rows, n: D, k: keys, alpha: p.scale }));
      accumulate(p.dk + kv, dense({ a: dScores, b: p.q + at, out: contribution, m: keys, n: D, k: rows, transA: true, alpha: p.scale }), keys);
    }
  } finally {
    rt.freeTemp(temp);
  }
}

/** Zeros `bytes` bytes at `at` (f32 zeros), queued. */
function fill(rt: SimdRuntime, at: number, bytes: number): void {
  fillKernel(rt, 'f32', at, bytes / 4, 0);
}

/** Queues `attention_grad_scores` over a block's rows (P and dS at `probs` and `dScores`), split across threads. */
function gradScores(rt: SimdRuntime, p: SimdAttentionBackward, c: QueryBlock, probs: number, dScores: number): void {
  const at = rt.structArea();
  const i32 = rt.i32;
  const fields = [probs, dScores, p.lse + c.lseAt, p.dOut + c.rowsAt, p.out + c.rowsAt, c.keys, c.keys, c.q0, p.causal ? 1 : 0, c.valid, p.headDim];
  for (let i = 0; i < fields.length; i++) i32[at / 4 + i] = fields[i]!;
  const parts = splitRange(c.rows, rt.threads, Math.ceil(rt.threshold('rowsBytes') / (8 * c.keys)));
  rt.run('attention_grad_scores', parts.map(([r0, r1]) => [at, r0, r1]), false, rt.cost('rowsBytes', c.rows * c.keys * 8));
}
