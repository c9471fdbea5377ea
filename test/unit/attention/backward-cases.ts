/**
 * Attention backward problems shared by the CPU tests, the conformance family and the GPU tests:
 * odd shapes off every tile size (the CPU's 32 × 64 blocks, the kernels' tiles), causal and not,
 * grouped- and multi-query heads, padded keys (a batch entry with none), seqQ ≠ seqK both ways,
 * head dims from 1 to 256; the inputs (q, k, v, the output gradient) and the float64 gradients
 * of a case.
 */
import { attentionGradients } from '../../../src/compute/cpu/attention-backward.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { freshSeed, randomValues } from '../compute/helpers.js';
import type { AttentionCase, FloatDType } from './cases.js';
import { referenceAttentionBackward } from './reference.js';

/** Small enough for the direct float64 references of every test. */
export function backwardCases(): AttentionCase[] {
  return [
    { batch: 1, heads: 1, kvHeads: 1, seqQ: 1, seqK: 1, headDim: 16, causal: false },
    { batch: 2, heads: 2, kvHeads: 2, seqQ: 5, seqK: 7, headDim: 16, causal: false },
    { batch: 1, heads: 4, kvHeads: 2, seqQ: 9, seqK: 5, headDim: 17, causal: true },
    { batch: 1, heads: 3, kvHeads: 1, seqQ: 6, seqK: 11, headDim: 24, causal: true, scale: -0.6 },
    { batch: 2, heads: 2, kvHeads: 1, seqQ: 7, seqK: 9, headDim: 33, causal: false, keyLengths: [0, 6] },
    { batch: 3, heads: 2, kvHeads: 2, seqQ: 6, seqK: 8, headDim: 64, causal: true, keyLengths: [8, 3, 1] },
    { batch: 1, heads: 2, kvHeads: 2, seqQ: 5, seqK: 6, headDim: 128, causal: false },
    { batch: 1, heads: 2, kvHeads: 1, seqQ: 4, seqK: 6, headDim: 256, causal: true },
    { batch: 1, heads: 2, kvHeads: 1, seqQ: 70, seqK: 150, headDim: 16, causal: true, keyLengths: [131] },
    { batch: 1, heads: 1, kvHeads: 1, seqQ: 97, seqK: 40, headDim: 80, causal: false },
    { batch: 1, heads: 1, kvHeads: 1, seqQ: 3, seqK: 4, headDim: 1, causal: false, scale: 2 },
  ];
}

/** Fresh random q, k, v and output gradient of case `c` on `gpu`, in `dtype`. */
export function backwardInputs(gpu: GpuCompute, c: AttentionCase, dtype: FloatDType): { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor } {
  const make = (heads: number, seq: number) =>
    gpu.tensor(Float32Array.from(randomValues(c.batch * heads * seq * c.headDim, freshSeed())), [c.batch, heads, seq, c.headDim], dtype);
  return { q: make(c.heads, c.seqQ), k: make(c.kvHeads, c.seqK), v: make(c.kvHeads, c.seqK), dOut: make(c.heads, c.seqQ) };
}

/** The float64 gradients of case `c` on the values the tensors hold. */
export function referenceGradientsFor(c: AttentionCase, t: { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor }) {
  const read = (x: Tensor) => x.toArraySync() as Float32Array;
  return referenceAttentionBackward({
    ...c,
    q: read(t.q),
    k: read(t.k),
    v: read(t.v),
    dOut: read(t.dOut),
    scale: c.scale ?? 1 / Math.sqrt(c.headDim),
  });
}

/**
 * dq, dk and dv in float64 from exactly what the tensors hold, the forward's rounded output and
 * f32 log-sum-exp included (the CPU backend's computation, checked against finite differences in
 * float64): what a backend's result differs from only by its own arithmetic and final rounding.
 */
export function storedGradientsFor(c: AttentionCase, t: { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor }, out: Tensor, lse: Tensor) {
  const read = (x: Tensor) => x.toArraySync() as Float32Array;
  return attentionGradients({
    ...c,
    q: read(t.q),
    k: read(t.k),
    v: read(t.v),
    out: read(out),
    lse: read(lse),
    dOut: read(t.dOut),
    scale: c.scale ?? 1 / Math.sqrt(c.headDim),
  });
}

/**
 * Norm-wise bounds of dq, dk, dv against the true float64 gradients (`referenceGradientsFor`)
 * when the backward itself is exact but reads the forward's output rounded to the dtype: D =
 * rowsum(dOut ∘ out) then carries that rounding, and dS = P·(dP − D) turns it into an absolute
 * error of dq and dk that is large next to them where the rows' terms cancel (observed up to
 * 1.8u in f16 and 2.2u in bf16 at head dims 16–256, u the unit roundoff). About six units; in f32
 * far more, and `gradientBound` adds what f32 roundings can reach where the rows cancel. At head
 * dim 1 the cancellation is complete enough that only the comparison with `storedGradientsFor`
 * is meaningful in 16 bits.
 */
export const BACKWARD_TOLERANCE: Record<FloatDType, number> = { f32: 1e-5, f16: 3e-3, bf16: 2.4e-2 };

/**
 * The same bounds for every backend (conformance, GPU tests): twice the CPU's in 16 bits, for
 * their own f32 arithmetic and, in tensor-core kernels, P and dS rounded to 16 bits before their
 * products; 2e-5 in f32 (approximate exponentials, f32 atomics).
 */
export const GPU_BACKWARD_TOLERANCE: Record<FloatDType, number> = { f32: 2e-5, f16: 2 * BACKWARD_TOLERANCE.f16, bf16: 2 * BACKWARD_TOLERANCE.bf16 };

function norm(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]! ** 2;
  return Math.sqrt(sum);
}

/**
 * A norm-wise bound for dq or dk against float64: `tolerance`, plus `backends` times what relative
 * errors of (1 + headDim)·2^-24 in dS's terms can reach (`sensitivity` is the reference's dqD or
 * dkD): the f32 arithmetic of every backward, and an f32 output's rounding in D; a 16-bit
 * output's rounding is what the tolerance's units cover. Relative to the gradient's norm, the
 * second term is tiny where the rows' terms do not cancel; it keeps a head dim of 1, whose dq and
 * dk are weighted covariances over a few keys and may vanish by chance, from failing on the
 * problem's conditioning (about 1 draw in 110 at 3 queries and 4 keys, f32, 1e-5, without it).
 */
export function gradientBound(tolerance: number, reference: ArrayLike<number>, sensitivity: ArrayLike<number>, headDim: number, backends = 1): number {
  const reach = backends * (1 + headDim) * 2 ** -24 * norm(sensitivity);
  const size = norm(reference);
  return tolerance + (size === 0 ? reach : reach / size);
}
