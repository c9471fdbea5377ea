/**
 * CUDA attention against the float64 reference and the CPU backend: the default kernel for
 * every case of `cases.ts` in f32, f16 and bf16; every kernel configuration (tensor-core
 * tiles, CUDA-core tiles) on poisoned outputs; key lengths from a device tensor (clamped);
 * and a 32K-long sequence whose pool peak shows no seq × seq allocation.
 *
 * Tolerances: f32 is the CUDA-core kernel in f32 with ex2.approx (relative error ~2^-22), so
 * 1e-5 as for elementwise ops. For f16/bf16 the tensor-core kernel rounds P = exp(S - max)
 * to the input type before P·V (as FlashAttention does) and rounds the output once: two
 * roundings of relative size u each, so ≤ 2e-3 for f16 (u = 4.9e-4) and ≤ 1.2e-2 for bf16
 * (u = 3.9e-3), about three times the expected root-mean-square error of the two roundings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attentionConfigName } from '../../../src/compute/cuda/attention/attention-kernels.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { relError } from '../../unit/compute/helpers.js';
import {
  attentionCases,
  attentionInputs,
  attentionOptions,
  describeAttentionCase,
  expectAttentionMatches,
  GPU_ATTENTION_TOLERANCE as GPU_TOLERANCE,
  referenceFor,
} from '../../unit/attention/cases.js';
import { closePair, openPair, type Pair } from '../compute/setup.js';
import { gpuAvailable } from '../gpu-available.js';
import { deviceConfigs, runConfig } from './config-runs.js';

const DTYPES = ['f32', 'f16', 'bf16'] as const;

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

describe.skipIf(!gpuAvailable)('attention on CUDA', () => {
  for (const c of attentionCases()) {
    for (const dtype of DTYPES) {
      it(`default kernel: ${describeAttentionCase(c)} ${dtype}`, () => {
        const { q, k, v } = attentionInputs(pair.cuda, c, dtype);
        const { out, lse } = pair.cuda.attention(q, k, v, { ...attentionOptions(c), returnLogSumExp: true });
        const label = describeAttentionCase(c);
        expectAttentionMatches(label, out, lse, referenceFor(c, q, k, v), dtype, GPU_TOLERANCE[dtype]);
        // The CPU backend on the same values agrees too.
        const [qc, kc, vc] = [q, k, v].map((t) => pair.cpu.tensor(t.toArraySync() as Float32Array, t.shape, dtype));
        const cpu = pair.cpu.attention(qc!, kc!, vc!, { ...attentionOptions(c), returnLogSumExp: true });
        expect(relError(out.toArraySync() as Float32Array, cpu.out.toArraySync() as Float32Array, dtype), `${label}: vs CPU`).toBeLessThanOrEqual(GPU_TOLERANCE[dtype]);
        for (const t of [q, k, v, out, lse, qc!, kc!, vc!, cpu.out, cpu.lse]) t.dispose();
      });
    }
  }

  it('clamps key lengths read from a device tensor', () => {
    const c = { batch: 3, heads: 2, kvHeads: 1, seqQ: 70, seqK: 90, headDim: 64, causal: true };
    for (const dtype of DTYPES) {
      const { q, k, v } = attentionInputs(pair.cuda, c, dtype);
      const lengths = pair.cuda.tensor(Int32Array.from([-4, 500, 33]), [3]);
      const { out, lse } = pair.cuda.attention(q, k, v, { causal: true, keyLengths: lengths, returnLogSumExp: true });
      expectAttentionMatches(`device lengths ${dtype}`, out, lse, referenceFor({ ...c, keyLengths: [0, 90, 33] }, q, k, v), dtype, GPU_TOLERANCE[dtype]);
      for (const t of [q, k, v, out, lse, lengths]) t.dispose();
    }
  });

  it('runs a 32K sequence (B1 H1 D64) with no seq x seq allocation', async () => {
    const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    try {
      const seq = 32768;
      const shape = [1, 1, seq, 64];
      for (const causal of [false, true]) {
        const q = gpu.randn(shape, { dtype: 'f16' });
        const k = gpu.randn(shape, { dtype: 'f16' });
        const v = gpu.randn(shape, { dtype: 'f16' });
        const { out, lse } = gpu.attention(q, k, v, { causal, returnLogSumExp: true });
        const stats = gpu.memoryStats();
        const tensors = 4 * seq * 64 * 2 + seq * 4;
        // Everything live is the five tensors; the peak allows the pool's rounding and nothing near seq² · 4 = 4 GiB.
        expect(stats.peakBytes).toBeLessThan(2 * tensors);
        expect(stats.peakBytes).toBeLessThan((seq * seq * 4) / 100);
        // Sampled rows against float64 (a row is one 32K-long softmax).
        const [qv, kv, vv, ov, lv] = [q, k, v, out, lse].map((t) => t.toArraySync() as Float32Array);
        const rows = [0, 1, 4095, 16384, seq - 1];
        const got: number[] = [];
        const want: number[] = [];
        for (const i of rows) {
          const ref = referenceRow(qv!, kv!, vv!, i, causal ? i + 1 : seq, 64);
          for (let x = 0; x < 64; x++) {
            got.push(ov![i * 64 + x]!);
            want.push(ref.out[x]!);
          }
          expect(Math.abs(lv![i]! - ref.lse)).toBeLessThan(1e-4 * Math.max(1, Math.abs(ref.lse)));
        }
        expect(relError(got, want, 'f16'), `32K causal=${causal}`).toBeLessThanOrEqual(GPU_TOLERANCE.f16);
        for (const t of [q, k, v, out, lse]) t.dispose();
      }
    } finally {
      gpu.dispose();
    }
  });

  // Last: every configuration, the newest kernels included, after the default path's checks.
  for (const dtype of DTYPES) {
    it(`every kernel configuration writes every element correctly (${dtype})`, () => {
      for (const c of attentionCases()) {
        const { q, k, v } = attentionInputs(pair.cuda, c, dtype);
        const ref = referenceFor(c, q, k, v);
        for (const config of deviceConfigs(pair.cuda, c.headDim, dtype)) {
          const { out, lse } = runConfig(pair.cuda, c, q, k, v, config);
          expectAttentionMatches(`${describeAttentionCase(c)} ${attentionConfigName(config)}`, out, lse, ref, dtype, GPU_TOLERANCE[dtype]);
          out.dispose();
          lse.dispose();
        }
        for (const t of [q, k, v]) t.dispose();
      }
    });
  }
});

/** One row of attention in float64 over keys [0, keys). */
function referenceRow(q: Float32Array, k: Float32Array, v: Float32Array, i: number, keys: number, d: number): { out: Float64Array; lse: number } {
  const s = new Float64Array(keys);
  let max = -Infinity;
  for (let j = 0; j < keys; j++) {
    let dot = 0;
    for (let x = 0; x < d; x++) dot += q[i * d + x]! * k[j * d + x]!;
    s[j] = dot / Math.sqrt(d);
    max = Math.max(max, s[j]!);
  }
  let sum = 0;
  const out = new Float64Array(d);
  for (let j = 0; j < keys; j++) {
    const w = Math.exp(s[j]! - max);
    sum += w;
    for (let x = 0; x < d; x++) out[x]! += w * v[j * d + x]!;
  }
  for (let x = 0; x < d; x++) out[x]! /= sum;
  return { out, lse: max + Math.log(sum) };
}
