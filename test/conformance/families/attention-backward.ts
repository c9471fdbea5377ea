/**
 * attentionBackward (after a forward with returnLogSumExp, on the same backend) against the
 * direct float64 backward of the stored inputs and against the CPU backend: causal and not,
 * grouped- and multi-query heads, seqQ ≠ seqK both ways, key lengths as a number array and as an
 * i32 tensor (clamped on the device; 0 among them: rows that see no key get dq = 0), a custom
 * negative scale, odd head dims.
 *
 * Bounds (`GPU_BACKWARD_TOLERANCE`): against the true float64 gradients the output's rounding to
 * 16 bits enters D = rowsum(dOut ∘ out) and may cancel in P·(dP − D) (`BACKWARD_TOLERANCE`: f16
 * 3e-3, bf16 2.4e-2), and a backend adds its own f32 arithmetic and, on GPUs, the rounding of P
 * and dS to 16 bits in tensor-core products: twice the CPU's bound in 16 bits, 2e-5 in f32; dq
 * and dk, plus what D's error can reach where their rows cancel (`gradientBound`: a head dim of
 * 1 makes them covariances over a few keys, which may vanish by chance).
 * 16-bit cases keep head dims ≥ 16, where those bounds hold (see BACKWARD_TOLERANCE).
 */
import { it } from 'vitest';
import { attentionBackward } from '../../../src/compute/ops/attention-backward.js';
import type { AttentionOptions } from '../../../src/compute/ops/attention.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { GPU_BACKWARD_TOLERANCE, gradientBound } from '../../unit/attention/backward-cases.js';
import type { AttentionCase } from '../../unit/attention/cases.js';
import { referenceAttentionBackward } from '../../unit/attention/reference.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { Case } from '../seeds.js';

type Lengths = { from: 'none' } | { from: 'array' } | { from: 'tensor'; raw: number[] };

const CASES: (AttentionCase & { lengths: Lengths })[] = [
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 5, seqK: 7, headDim: 16, causal: false, lengths: { from: 'none' } },
  { batch: 1, heads: 4, kvHeads: 2, seqQ: 9, seqK: 5, headDim: 17, causal: true, lengths: { from: 'none' } },
  { batch: 1, heads: 3, kvHeads: 1, seqQ: 6, seqK: 11, headDim: 24, causal: true, scale: -0.6, lengths: { from: 'none' } },
  { batch: 2, heads: 2, kvHeads: 1, seqQ: 7, seqK: 9, headDim: 33, causal: false, keyLengths: [0, 9], lengths: { from: 'array' } },
  { batch: 3, heads: 2, kvHeads: 2, seqQ: 4, seqK: 6, headDim: 16, causal: true, keyLengths: [6, 0, 3], lengths: { from: 'array' } },
  { batch: 3, heads: 2, kvHeads: 1, seqQ: 5, seqK: 6, headDim: 40, causal: false, keyLengths: [0, 6, 3], lengths: { from: 'tensor', raw: [-3, 100, 3] } },
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 40, seqK: 70, headDim: 64, causal: true, keyLengths: [61], lengths: { from: 'tensor', raw: [61] } },
];

/** f32 cases also at head dims below 16. */
const F32_CASES: (AttentionCase & { lengths: Lengths })[] = [
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 3, seqK: 4, headDim: 1, causal: false, scale: 2, lengths: { from: 'none' } },
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 8, seqK: 3, headDim: 7, causal: true, keyLengths: [3, 2], lengths: { from: 'tensor', raw: [3, 2] } },
];

function describeCase(a: AttentionCase): string {
  return `B${a.batch} H${a.heads}/${a.kvHeads} Sq${a.seqQ} Sk${a.seqK} D${a.headDim}${a.causal ? ' causal' : ''}${a.keyLengths ? ` lengths [${a.keyLengths}]` : ''}`;
}

export function describeAttentionBackward(ctx: ConformanceContext): void {
  ctx.describeOps('attentionBackward', ['attentionBackward'], () => {
    for (const dtype of ctx.floatDtypes()) {
      it(`every mask, head grouping and length form in ${dtype}`, () => {
        for (const a of dtype === 'f32' ? [...CASES, ...F32_CASES] : CASES) {
          const c = new Case(`attentionBackward ${dtype} ${describeCase(a)} ${a.lengths.from}`);
          const qShape = [a.batch, a.heads, a.seqQ, a.headDim];
          const kvShape = [a.batch, a.kvHeads, a.seqK, a.headDim];
          const n = (shape: number[]) => shape.reduce((p, d) => p * d, 1);
          const q = host(c.normal(n(qShape)), qShape, dtype);
          const k = host(c.normal(n(kvShape)), kvShape, dtype);
          const v = host(c.normal(n(kvShape)), kvShape, dtype);
          const dOut = host(c.normal(n(qShape)), qShape, dtype);
          const lengths = a.lengths.from === 'tensor' ? [host(a.lengths.raw, [a.batch], 'i32')] : [];
          const ref = referenceAttentionBackward({ ...a, q: q.values, k: k.values, v: v.values, dOut: dOut.values, scale: a.scale ?? 1 / Math.sqrt(a.headDim) });
          const runs = ctx.run([q, k, v, dOut, ...lengths], (g, [tq, tk, tv, tdo, tl]) => {
            const keyLengths = a.lengths.from === 'array' ? a.keyLengths! : (tl as Tensor<'i32'> | undefined);
            const options: AttentionOptions = { causal: a.causal, ...(a.scale === undefined ? {} : { scale: a.scale }), ...(keyLengths ? { keyLengths } : {}) };
            const { out, lse } = g.attention(tq!, tk!, tv!, { ...options, returnLogSumExp: true });
            try {
              const { dq, dk, dv } = attentionBackward(g.session, tq!, tk!, tv!, out, lse, tdo!, options);
              return [dq, dk, dv];
            } finally {
              out.dispose();
              lse.dispose();
            }
          });
          const want = [
            { shape: qShape, dtype, values: Array.from(ref.dq) },
            { shape: kvShape, dtype, values: Array.from(ref.dk) },
            { shape: kvShape, dtype, values: Array.from(ref.dv) },
          ];
          // dq and dk also get the allowance for D's error where their rows cancel, once for each backend compared.
          const tolerance = GPU_BACKWARD_TOLERANCE[dtype];
          const bound = (grad: Float64Array, sensitivity: Float64Array) => gradientBound(tolerance, grad, sensitivity, a.headDim, 2);
          expectRun(c, runs, want, [bound(ref.dq, ref.dqD), bound(ref.dk, ref.dkD), tolerance]);
        }
      });
    }

    it('empty query and key sequences', () => {
      const c = new Case('attentionBackward empty');
      const q = host(c.normal(2 * 3 * 4), [1, 2, 3, 4], 'f32');
      const none = host([], [1, 1, 0, 4], 'f32');
      const keys = host(c.normal(5 * 4), [1, 1, 5, 4], 'f32');
      const noQuery = host([], [1, 2, 0, 4], 'f32');
      const runs = ctx.run([q, none, keys, noQuery], (g, [tq, t0, tk, tq0]) => {
        const a = g.attention(tq!, t0!, t0!, { returnLogSumExp: true });
        const b = g.attention(tq0!, tk!, tk!, { returnLogSumExp: true });
        try {
          const noKeys = attentionBackward(g.session, tq!, t0!, t0!, a.out, a.lse, tq!);
          const noQueries = attentionBackward(g.session, tq0!, tk!, tk!, b.out, b.lse, tq0!);
          return [noKeys.dq, noKeys.dk, noKeys.dv, noQueries.dq, noQueries.dk, noQueries.dv];
        } finally {
          for (const t of [a.out, a.lse, b.out, b.lse]) t.dispose();
        }
      });
      const zeros = (shape: number[]) => ({ shape, dtype: 'f32' as const, values: new Array<number>(shape.reduce((p, d) => p * d, 1)).fill(0) });
      expectRun(c, runs, [zeros([1, 2, 3, 4]), none, none, noQuery, zeros([1, 1, 5, 4]), zeros([1, 1, 5, 4])], 0);
    });
  });
}
