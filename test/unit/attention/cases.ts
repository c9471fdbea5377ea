/**
 * Attention problems shared by the CPU tests and the GPU tests: random shapes that cover
 * sequence lengths off the tile sizes, seqQ ≠ seqK both ways, causal and not, grouped- and
 * multi-query heads, padded keys and every head dim; plus the checks of a result against the
 * float64 reference.
 */
import { expect } from 'vitest';
import type { AttentionOptions } from '../../../src/compute/ops/attention.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { freshSeed, randomValues, relError } from '../compute/helpers.js';
import { referenceAttention } from './reference.js';

export type FloatDType = Exclude<DType, 'i32'>;

export interface AttentionCase {
  batch: number;
  heads: number;
  kvHeads: number;
  seqQ: number;
  seqK: number;
  headDim: number;
  causal: boolean;
  keyLengths?: number[];
  scale?: number;
}

/** Norm-wise bounds: one rounding of the output on top of f32 softmax arithmetic (see the GPU tests for the kernels' share). */
export const ATTENTION_TOLERANCE: Record<FloatDType, number> = { f32: 1e-5, f16: 1e-3, bf16: 8e-3 };

/** The bounds on GPU backends, whose tensor-core kernels round P to the input dtype before P·V. */
export const GPU_ATTENTION_TOLERANCE: Record<FloatDType, number> = { f32: 1e-5, f16: 2e-3, bf16: 1.2e-2 };

/** A few shapes per property, small enough for the direct float64 reference. */
export function attentionCases(): AttentionCase[] {
  return [
    { batch: 1, heads: 1, kvHeads: 1, seqQ: 1, seqK: 1, headDim: 32, causal: false },
    { batch: 2, heads: 2, kvHeads: 2, seqQ: 37, seqK: 53, headDim: 64, causal: false },
    { batch: 1, heads: 2, kvHeads: 2, seqQ: 130, seqK: 130, headDim: 64, causal: true },
    { batch: 1, heads: 4, kvHeads: 2, seqQ: 70, seqK: 150, headDim: 128, causal: true },
    { batch: 1, heads: 4, kvHeads: 1, seqQ: 150, seqK: 70, headDim: 128, causal: true },
    { batch: 2, heads: 3, kvHeads: 1, seqQ: 65, seqK: 97, headDim: 80, causal: false, keyLengths: [97, 40] },
    { batch: 3, heads: 2, kvHeads: 2, seqQ: 66, seqK: 129, headDim: 96, causal: true, keyLengths: [1, 129, 64] },
    { batch: 2, heads: 2, kvHeads: 1, seqQ: 33, seqK: 47, headDim: 256, causal: false, keyLengths: [0, 20] },
    { batch: 1, heads: 2, kvHeads: 2, seqQ: 40, seqK: 72, headDim: 17, causal: true, scale: 0.3 },
    { batch: 1, heads: 1, kvHeads: 1, seqQ: 19, seqK: 31, headDim: 1, causal: false, scale: -2 },
  ];
}

export function describeAttentionCase(c: AttentionCase): string {
  const lens = c.keyLengths ? ` lens[${c.keyLengths.join(',')}]` : '';
  return `B${c.batch} H${c.heads}/${c.kvHeads} Sq${c.seqQ} Sk${c.seqK} D${c.headDim}${c.causal ? ' causal' : ''}${lens}`;
}

/** Fresh random q, k, v on `gpu`, and the values they hold (rounded to the dtype). */
export function attentionInputs(gpu: GpuCompute, c: AttentionCase, dtype: FloatDType) {
  const make = (heads: number, seq: number) => {
    const shape = [c.batch, heads, seq, c.headDim];
    const t = gpu.tensor(Float32Array.from(randomValues(c.batch * heads * seq * c.headDim, freshSeed())), shape, dtype);
    return t;
  };
  const q = make(c.heads, c.seqQ);
  const k = make(c.kvHeads, c.seqK);
  const v = make(c.kvHeads, c.seqK);
  return { q, k, v };
}

export function attentionOptions(c: AttentionCase): AttentionOptions {
  return { causal: c.causal, returnLogSumExp: true, ...(c.keyLengths ? { keyLengths: c.keyLengths } : {}), ...(c.scale !== undefined ? { scale: c.scale } : {}) };
}

/** The float64 result of case `c` on the values q, k, v hold. */
export function referenceFor(c: AttentionCase, q: Tensor, k: Tensor, v: Tensor) {
  return referenceAttention({
    ...c,
    q: q.toArraySync() as Float32Array,
    k: k.toArraySync() as Float32Array,
    v: v.toArraySync() as Float32Array,
    scale: c.scale ?? 1 / Math.sqrt(c.headDim),
  });
}

/** Checks an output and log-sum-exp against the reference: norm-wise, and -Infinity exactly where the reference has it. */
export function expectAttentionMatches(label: string, out: Tensor, lse: Tensor, ref: { out: Float64Array; lse: Float64Array }, dtype: FloatDType, tolerance = ATTENTION_TOLERANCE[dtype]): void {
  const got = out.toArraySync() as Float32Array;
  expect(got.every(Number.isFinite), `${label}: every output finite`).toBe(true);
  expect(relError(got, ref.out, dtype), `${label}: output error vs float64`).toBeLessThanOrEqual(tolerance);
  const gotLse = lse.toArraySync() as Float32Array;
  const finite: number[] = [];
  const refFinite: number[] = [];
  for (let i = 0; i < ref.lse.length; i++) {
    if (ref.lse[i] === -Infinity) {
      expect(gotLse[i], `${label}: lse[${i}] of a row with no key`).toBe(-Infinity);
    } else {
      finite.push(gotLse[i]!);
      refFinite.push(ref.lse[i]!);
    }
  }
  // lse is f32 whatever the inputs: its error is the f32 softmax arithmetic's, not the storage's. It is
  // a sum of terms of order one (max and log-sum), so its error is bounded relative to a norm of at
  // least one per row: a row whose terms cancel to near 0 (one key, q·k ≈ 0) has no small relative error.
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < finite.length; i++) {
    diff += (finite[i]! - refFinite[i]!) ** 2;
    norm += Math.max(1, refFinite[i]! ** 2);
  }
  expect(Math.sqrt(diff / Math.max(norm, 1)), `${label}: lse error vs float64`).toBeLessThanOrEqual(1e-5);
}
