/**
 * attention against the direct float64 reference: causal and not, grouped- and multi-query
 * heads, seqQ ≠ seqK both ways (causal aligned top-left), key lengths as a number array and as
 * an i32 tensor (clamped to [0, seqK] on the device), 0 and seqK among them, rows that see no
 * key (zeros, log-sum-exp −∞), odd head dims, a custom scale, with and without returnLogSumExp,
 * and empty query or key sequences. The GPU bounds (`GPU_ATTENTION_TOLERANCE`) apply to every
 * backend; the log-sum-exp is f32 whatever the dtype.
 */
import { it } from 'vitest';
import type { AttentionOptions } from '../../../src/compute/ops/attention.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { GPU_ATTENTION_TOLERANCE, type AttentionCase } from '../../unit/attention/cases.js';
import { referenceAttention } from '../../unit/attention/reference.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { Case } from '../seeds.js';

/** Where a case's key lengths come from: none, a number array, or an i32 tensor holding `raw` (clamped on the device to `keyLengths`). */
type Lengths = { from: 'none' } | { from: 'array' } | { from: 'tensor'; raw: number[] };

const CASES: (AttentionCase & { lengths: Lengths })[] = [
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 1, seqK: 1, headDim: 1, causal: false, lengths: { from: 'none' } },
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 5, seqK: 7, headDim: 8, causal: false, lengths: { from: 'none' } },
  { batch: 1, heads: 4, kvHeads: 2, seqQ: 9, seqK: 5, headDim: 17, causal: true, lengths: { from: 'none' } },
  { batch: 1, heads: 3, kvHeads: 1, seqQ: 6, seqK: 11, headDim: 5, causal: true, scale: -0.6, lengths: { from: 'none' } },
  { batch: 2, heads: 2, kvHeads: 1, seqQ: 7, seqK: 9, headDim: 33, causal: false, keyLengths: [0, 9], lengths: { from: 'array' } },
  { batch: 3, heads: 2, kvHeads: 2, seqQ: 4, seqK: 6, headDim: 16, causal: true, keyLengths: [6, 0, 3], lengths: { from: 'array' } },
  { batch: 3, heads: 2, kvHeads: 1, seqQ: 5, seqK: 6, headDim: 12, causal: false, keyLengths: [0, 6, 3], lengths: { from: 'tensor', raw: [-3, 100, 3] } },
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 8, seqK: 3, headDim: 7, causal: true, keyLengths: [3, 2], lengths: { from: 'tensor', raw: [3, 2] } },
];

function describeCase(a: AttentionCase): string {
  return `B${a.batch} H${a.heads}/${a.kvHeads} Sq${a.seqQ} Sk${a.seqK} D${a.headDim}${a.causal ? ' causal' : ''}${a.keyLengths ? ` lengths [${a.keyLengths}]` : ''}`;
}

export function describeAttention(ctx: ConformanceContext): void {
  ctx.describeOps('attention', ['attention'], () => {
    for (const dtype of ctx.floatDtypes()) {
      it(`every mask, head grouping and length form in ${dtype}`, () => {
        for (const a of CASES) {
          const c = new Case(`attention ${dtype} ${describeCase(a)} ${a.lengths.from}`);
          const q = host(c.normal(a.batch * a.heads * a.seqQ * a.headDim), [a.batch, a.heads, a.seqQ, a.headDim], dtype);
          const kvShape = [a.batch, a.kvHeads, a.seqK, a.headDim];
          const k = host(c.normal(kvShape.reduce((p, d) => p * d, 1)), kvShape, dtype);
          const v = host(c.normal(kvShape.reduce((p, d) => p * d, 1)), kvShape, dtype);
          const lengths = a.lengths.from === 'tensor' ? [host(a.lengths.raw, [a.batch], 'i32')] : [];
          const ref = referenceAttention({ ...a, q: q.values, k: k.values, v: v.values, scale: a.scale ?? 1 / Math.sqrt(a.headDim) });
          for (const returnLogSumExp of [true, false]) {
            const runs = ctx.run([q, k, v, ...lengths], (g, [tq, tk, tv, tl]) => {
              const keyLengths = a.lengths.from === 'array' ? a.keyLengths! : (tl as Tensor<'i32'> | undefined);
              const options: AttentionOptions = { causal: a.causal, ...(a.scale === undefined ? {} : { scale: a.scale }), ...(keyLengths ? { keyLengths } : {}) };
              if (!returnLogSumExp) return g.attention(tq!, tk!, tv!, options) as Tensor;
              const { out, lse } = g.attention(tq!, tk!, tv!, { ...options, returnLogSumExp });
              return [out, lse];
            });
            const out = { shape: q.shape, dtype, values: Array.from(ref.out) };
            const lse = { shape: q.shape.slice(0, 3), dtype: 'f32' as const, values: Array.from(ref.lse) };
            const what = new Case(`${c.label} returnLogSumExp ${returnLogSumExp}`);
            if (returnLogSumExp) expectRun(what, runs, [out, lse], [GPU_ATTENTION_TOLERANCE[dtype], GPU_ATTENTION_TOLERANCE.f32]);
            else expectRun(what, runs, [out], GPU_ATTENTION_TOLERANCE[dtype]);
          }
        }
      });

      it(`empty query and key sequences in ${dtype}`, () => {
        const c = new Case(`attention ${dtype} empty`);
        const q = host(c.normal(2 * 3 * 4), [1, 2, 3, 4], dtype);
        const none = host([], [1, 1, 0, 4], dtype);
        const runs = ctx.run([q, none], (g, [tq, t0]) => {
          const { out, lse } = g.attention(tq!, t0!, t0!, { returnLogSumExp: true, causal: true });
          return [out, lse, g.attention(t0!, t0!, t0!)];
        });
        const want = [
          { shape: q.shape, dtype, values: q.values.map(() => 0) },
          { shape: [1, 2, 3], dtype: 'f32' as const, values: new Array<number>(6).fill(-Infinity) },
          none,
        ];
        expectRun(c, runs, want, 0);
      });
    }
  });
}
