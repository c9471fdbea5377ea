/**
 * Attention forward as products, for a machine with a BLAS (f32): per block of query rows of one
 * (batch, head), S = scale·Q·Kᵀ over the keys the block sees, then `attention_probs`
 * (`kernels/wasm/attention.c`) turns each row of S into masked, normalised probabilities in place
 * and writes its log-sum-exp, then O = P·V straight into the output. The semantics are the tiled
 * kernel's (`core/attention-params.ts`). The BLAS's products are faster than that kernel's 4×8
 * tiles: B2 H8 S256 D64 in 5.0-7.0 ms against 14-17 ms, 2 threads of a Xeon with OpenBLAS 0.3.21.
 */
import type { SimdAttention } from './attention.js';
import { dense, queryBlocks, type QueryBlock } from './attention-blocks.js';
import type { SimdGemm } from './matmul.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** Most bytes of scores held at once: blocks of query rows times the keys each sees. */
const SCORE_BYTES = 8 * 1024 * 1024;
/**
 * Most query rows of a causal block: its keys end at the block's last row, so the scores above
 * the diagonal computed and then masked are at most this many rows' worth.
 */
const CAUSAL_ROWS = 128;

/**
 * Runs one f32 attention forward with `product` for the two products of each block.
 * @throws RangeError for a dtype other than f32.
 */
export function attentionByProducts(rt: SimdRuntime, p: SimdAttention, product: (g: SimdGemm) => void): void {
  if (p.dtype !== 'f32') throw new RangeError(`attentionByProducts: f32 only, got ${p.dtype}`);
  const { batch: B, heads: H, seqQ: Sq, seqK: Sk, headDim: D } = p;
  if (B * H * Sq === 0) return;
  const rowsCap = Math.max(1, Math.min(Sq, Math.floor(SCORE_BYTES / (4 * Math.max(Sk, 1))), p.causal ? CAUSAL_ROWS : Infinity));
  // One block always fits, even when a single row of scores is beyond SCORE_BYTES.
  const capacity = Math.max(SCORE_BYTES, rowsCap * Sk * 4);
  const scores = rt.temp(capacity);
  try {
    const base = Number(scores.address);
    // Blocks are taken in chunks that fill the scores: every S of a chunk, then every P, then
    // every O, so the BLAS and the threads running attention_probs hand over twice a chunk.
    let chunk: { block: QueryBlock; s: number }[] = [];
    let used = 0;
    const flush = () => {
      for (const { block: c, s } of chunk) if (c.keys > 0) product(dense({ a: p.q + c.rowsAt, b: p.k + c.kvAt, out: s, m: c.rows, n: c.keys, k: D, transB: true, alpha: p.scale }));
      for (const { block, s } of chunk) probabilities(rt, p, block, s);
      // keys = 0 gives zeros: a product of no depth with beta 0 writes 0.
      for (const { block: c, s } of chunk) product(dense({ a: s, b: p.v + c.kvAt, out: p.out + c.rowsAt, m: c.rows, n: D, k: c.keys, alpha: 1 }));
      chunk = [];
      used = 0;
    };
    for (const block of queryBlocks(rt, p, rowsCap)) {
      if (used + block.rows * block.keys * 4 > capacity) flush();
      chunk.push({ block, s: base + used });
      used += block.rows * block.keys * 4;
    }
    flush();
  } finally {
    rt.freeTemp(scores);
  }
}

/** Queues `attention_probs` over a block's rows (scores at `s`), split across threads. */
function probabilities(rt: SimdRuntime, p: SimdAttention, c: QueryBlock, s: number): void {
  const at = rt.structArea();
  const i32 = rt.i32;
  const fields = [s, p.lse === undefined ? 0 : p.lse + c.lseAt, c.keys, c.keys, c.q0, p.causal ? 1 : 0, c.valid];
  for (let i = 0; i < fields.length; i++) i32[at / 4 + i] = fields[i]!;
  const parts = splitRange(c.rows, rt.threads, Math.ceil(rt.threshold('rowsBytes') / Math.max(4 * c.keys, 1)));
  rt.run('attention_probs', parts.map(([r0, r1]) => [at, r0, r1]), false, rt.cost('rowsBytes', c.rows * c.keys * 4));
}
