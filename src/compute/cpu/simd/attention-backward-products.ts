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
  const group = H / kvHeads;
  // Key lengths may come from queued jobs; dk and dv start at zero.
  let lengths: number[] | undefined;
  if (p.keyLengths !== undefined) {
    rt.settle();
    lengths = Array.from({ length: B }, (_, b) => Math.min(Sk, Math.max(0, rt.i32[p.keyLengths! / 4 + b]!)));
  }
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
    /** target += the product's result ([keys, D]). */
    const accumulate = (target: number, g: Omit<SimdGemm, 'out'>, keys: number) => {
      product({ ...g, out: contribution });
      binary(rt, 'add', 'f32', target, contribution, target, planBroadcast('attentionBackward', [keys * D], [keys * D]));
    };
    for (let b = 0; b < B; b++) {
      const valid = lengths?.[b] ?? Sk;
      for (let h = 0; h < H; h++) {
        const bh = b * H + h;
        const kv = (b * kvHeads + Math.floor(h / group)) * Sk * D * 4;
        for (let q0 = 0; q0 < Sq; q0 += rowsCap) {
          const rows = Math.min(rowsCap, Sq - q0);
          const keys = p.causal ? Math.min(valid, q0 + rows) : valid;
          const at = (bh * Sq + q0) * D * 4;
          if (keys === 0) {
            fill(rt, p.dq + at, rows * D * 4);
            continue;
          }
          product(dense({ a: p.q + at, b: p.k + kv, out: probs, m: rows, n: keys, k: D, transB: true, alpha: p.scale }));
          product(dense({ a: p.dOut + at, b: p.v + kv, out: dScores, m: rows, n: keys, k: D, transB: true, alpha: 1 }));
          gradScores(rt, p, { probs, dScores, rows, keys, q0, valid, lse: p.lse + (bh * Sq + q0) * 4, dOut: p.dOut + at, out: p.out + at });
          accumulate(p.dv + kv, dense({ a: probs, b: p.dOut + at, m: keys, n: D, k: rows, transA: true, alpha: 1 }), keys);
          product(dense({ a: dScores, b: p.k + kv, out: p.dq + at, m: rows, n: D, k: keys, alpha: p.scale }));
          accumulate(p.dk + kv, dense({ a: dScores, b: p.q + at, m: keys, n: D, k: rows, transA: true, alpha: p.scale }), keys);
        }
      }
    }
  } finally {
    rt.freeTemp(temp);
  }
}

/** A single dense f32 product out = alpha·op(A)·op(B). */
function dense<G extends { a: number; b: number; m: number; n: number; k: number; alpha: number; transA?: boolean; transB?: boolean }>(g: G) {
  return { aType: 'f32', bType: 'f32', outType: 'f32', batch: 1, transA: false, transB: false, beta: 0, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0, ...g } as const;
}

/** Zeros `bytes` bytes at `at` (f32 zeros), queued. */
function fill(rt: SimdRuntime, at: number, bytes: number): void {
  fillKernel(rt, 'f32', at, bytes / 4, 0);
}

/** One block's operands of `attention_grad_scores` (byte addresses). */
interface GradBlock {
  probs: number;
  dScores: number;
  rows: number;
  keys: number;
  q0: number;
  valid: number;
  lse: number;
  dOut: number;
  out: number;
}

/** Queues `attention_grad_scores` over a block's rows, split across threads. */
function gradScores(rt: SimdRuntime, p: SimdAttentionBackward, c: GradBlock): void {
  const at = rt.structArea();
  const i32 = rt.i32;
  const fields = [c.probs, c.dScores, c.lse, c.dOut, c.out, c.keys, c.keys, c.q0, p.causal ? 1 : 0, c.valid, p.headDim];
  for (let i = 0; i < fields.length; i++) i32[at / 4 + i] = fields[i]!;
  const parts = splitRange(c.rows, rt.threads, Math.ceil(rt.threshold('rowsBytes') / (8 * c.keys)));
  rt.run('attention_grad_scores', parts.map(([r0, r1]) => [at, r0, r1]), false, rt.cost('rowsBytes', c.rows * c.keys * 8));
}
