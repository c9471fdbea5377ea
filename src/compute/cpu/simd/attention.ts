/**
 * Attention forward on the SIMD kernels (`kernels/wasm/attention.c`, tiled online softmax) with
 * the semantics of `core/attention-params.ts`. Units of 16 query rows of one (batch, head) are
 * split across threads; each row's result does not depend on the split.
 */
import { MAX_ATTENTION_HEAD_DIM } from '../../core/attention-params.js';
import type { DType } from '../../core/dtype.js';
import { DTYPE_CODE } from './codes.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** Query rows per unit (BQ in attention.c). */
const BLOCK_Q = 16;

/** One attention forward; addresses are byte offsets. */
export interface SimdAttention {
  /** q, k, v and out: f32, f16 or bf16. */
  dtype: DType;
  /** [B, Hq, Sq, D]. */
  q: number;
  /** [B, Hkv, Sk, D] each. */
  k: number;
  v: number;
  /** [B, Hq, Sq, D]. */
  out: number;
  /** f32 [B, Hq, Sq], when wanted. */
  lse?: number;
  /** i32 [B]: keys at or after clamp(len, 0, Sk) are masked. */
  keyLengths?: number;
  batch: number;
  heads: number;
  kvHeads: number;
  seqQ: number;
  seqK: number;
  /** At most 256. */
  headDim: number;
  scale: number;
  causal: boolean;
}

/**
 * Runs one attention forward.
 * @throws RangeError when the head dim exceeds 256 (the kernel's blocks in scratch hold that much).
 */
export function attention(rt: SimdRuntime, p: SimdAttention): void {
  if (p.headDim > MAX_ATTENTION_HEAD_DIM) throw new RangeError(`attention: head dim ${p.headDim} exceeds ${MAX_ATTENTION_HEAD_DIM}`);
  const at = rt.structArea();
  const i32 = rt.i32;
  const fields = [
    p.q,
    p.k,
    p.v,
    p.out,
    p.lse ?? 0,
    p.keyLengths ?? 0,
    DTYPE_CODE[p.dtype],
    p.batch,
    p.heads,
    p.kvHeads,
    p.seqQ,
    p.seqK,
    p.headDim,
    p.causal ? 1 : 0,
  ];
  for (let i = 0; i < fields.length; i++) i32[at / 4 + i] = fields[i]!;
  rt.f32[at / 4 + fields.length] = p.scale;
  const blocks = Math.ceil(p.seqQ / BLOCK_Q);
  const units = p.batch * p.heads * blocks;
  const unitMacs = 2 * BLOCK_Q * p.seqK * p.headDim;
  const parts = splitRange(units, rt.threads, Math.ceil(rt.threshold('attentionMacs') / Math.max(unitMacs, 1)));
  rt.run('attention', parts.map(([u0, u1]) => [at, u0, u1]), true, rt.cost('attentionMacs', units * unitMacs));
}
