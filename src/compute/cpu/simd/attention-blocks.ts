/**
 * What attention's routes by products (`attention-products.ts`, `attention-backward-products.ts`)
 * share: the walk over blocks of query rows with the keys each block sees, and their products.
 */
import type { SimdAttention } from './attention.js';
import type { SimdGemm } from './matmul.js';
import type { SimdRuntime } from './runtime.js';

/** One block of query rows of one (batch, head), in f32 byte offsets of its first row. */
export interface QueryBlock {
  /** Offset of the block's rows in q, out, dOut and dq ([B, Hq, Sq, D]). */
  rowsAt: number;
  /** Offset of its k/v head in k, v, dk and dv ([B, Hkv, Sk, D]). */
  kvAt: number;
  /** Offset of its rows in the log-sum-exp ([B, Hq, Sq]). */
  lseAt: number;
  /** The query index of its first row, and how many rows it has. */
  q0: number;
  rows: number;
  /** Keys 0..keys-1 are all any of its rows sees (causal: up to its last row). */
  keys: number;
  /** Keys not masked by the key lengths. */
  valid: number;
}

/**
 * The blocks of at most `rowsCap` query rows, batch by batch and head by head. Key lengths are
 * read from memory once the queued jobs that may write them have run.
 */
export function* queryBlocks(rt: SimdRuntime, p: Omit<SimdAttention, 'dtype'>, rowsCap: number): Generator<QueryBlock> {
  const { batch: B, heads: H, kvHeads, seqQ: Sq, seqK: Sk, headDim: D } = p;
  let lengths: number[] | undefined;
  if (p.keyLengths !== undefined) {
    rt.settle();
    const i32 = rt.i32;
    lengths = Array.from({ length: B }, (_, b) => Math.min(Sk, Math.max(0, i32[p.keyLengths! / 4 + b]!)));
  }
  const group = H / kvHeads;
  for (let b = 0; b < B; b++) {
    const valid = lengths?.[b] ?? Sk;
    for (let h = 0; h < H; h++) {
      const bh = b * H + h;
      const kvAt = (b * kvHeads + Math.floor(h / group)) * Sk * D * 4;
      for (let q0 = 0; q0 < Sq; q0 += rowsCap) {
        const rows = Math.min(rowsCap, Sq - q0);
        const keys = p.causal ? Math.min(valid, q0 + rows) : valid;
        yield { rowsAt: (bh * Sq + q0) * D * 4, kvAt, lseAt: (bh * Sq + q0) * 4, q0, rows, keys, valid };
      }
    }
  }
}

/** A single dense f32 product out = alpha·op(A)·op(B). */
export function dense(g: { a: number; b: number; out: number; m: number; n: number; k: number; alpha: number; transA?: boolean; transB?: boolean }): SimdGemm {
  return { aType: 'f32', bType: 'f32', outType: 'f32', batch: 1, transA: false, transB: false, beta: 0, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0, ...g };
}
