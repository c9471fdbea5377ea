/**
 * Attention backward on CUDA: the default kernel for every case of `backward-cases.ts` in f32,
 * f16 and bf16 against float64 (on exactly the stored values, the kernel's own forward output and
 * log-sum-exp included; and against the true gradients) and against the CPU backend; every kernel
 * configuration (the Hopper kernel on sm_90, tensor-core tiles, CUDA-core tiles) on poisoned
 * outputs, and the Hopper kernel on shapes of several tiles; key lengths from a
 * device tensor (clamped); against torch autograd (scaled_dot_product_attention's backward) on
 * larger problems, causal, grouped-query and padded; and a 16K-long sequence whose pool peak
 * shows no seq × seq allocation.
 *
 * Tolerances: against float64 on the stored values a kernel's only errors are its own. The CUDA-core
 * kernel computes in f32 (ex2.approx, relative error ~2^-22; dq summed by f32 atomics) and rounds
 * once, so f32 within 1e-5 and 16-bit types within their one rounding; the tensor-core kernel also
 * rounds P and dS to 16 bits before its products (as FlashAttention does), two roundings of
 * relative size u: the forward's GPU bounds (`GPU_ATTENTION_TOLERANCE`: f16 2e-3, bf16 1.2e-2).
 * Against the true gradients and the CPU backend, the output's rounding to 16 bits also enters
 * through D = rowsum(dOut ∘ out) (`GPU_BACKWARD_TOLERANCE`). Against torch, which carries errors of
 * the same kinds, twice that bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backwardConfigName } from '../../../src/compute/cuda/attention/attention-backward-kernels.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { attentionBackward } from '../../../src/compute/ops/attention-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { relError } from '../../unit/compute/helpers.js';
import {
  backwardCases,
  backwardInputs,
  GPU_BACKWARD_TOLERANCE,
  gradientBound,
  referenceGradientsFor,
  storedGradientsFor,
} from '../../unit/attention/backward-cases.js';
import { describeAttentionCase, GPU_ATTENTION_TOLERANCE, type AttentionCase, type FloatDType } from '../../unit/attention/cases.js';
import { closePair, openPair, type Pair } from '../compute/setup.js';
import { gpuAvailable } from '../gpu-available.js';
import { backwardDeviceConfigs, runBackwardConfig } from './backward-config-runs.js';
import { torchAvailable, torchGradients, type TorchCase } from './torch-sequence.js';

const DTYPES = ['f32', 'f16', 'bf16'] as const;
type Inputs = { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor };
type Grads = { dq: Tensor; dk: Tensor; dv: Tensor };

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

function optionsOf(c: AttentionCase) {
  return { causal: c.causal, ...(c.scale === undefined ? {} : { scale: c.scale }), ...(c.keyLengths ? { keyLengths: c.keyLengths } : {}) };
}

function expectClose(label: string, got: Grads, want: { dq: ArrayLike<number>; dk: ArrayLike<number>; dv: ArrayLike<number> }, dtype: FloatDType, tolerance: number | Record<keyof Grads, number>): void {
  for (const name of ['dq', 'dk', 'dv'] as const) {
    const values = got[name].toArraySync() as Float32Array;
    expect(values.every(Number.isFinite), `${label}: ${name} finite`).toBe(true);
    expect(relError(values, want[name], dtype), `${label}: ${name}`).toBeLessThanOrEqual(typeof tolerance === 'number' ? tolerance : tolerance[name]);
  }
}

/** Against the true float64 gradients: the dtype's bound, and for dq and dk the allowance for f32 roundings where their rows cancel. */
function expectTrueGradients(label: string, c: AttentionCase, t: Inputs, got: Grads, dtype: FloatDType): void {
  const ref = referenceGradientsFor(c, t);
  const tolerance = GPU_BACKWARD_TOLERANCE[dtype];
  const bounds = { dq: gradientBound(tolerance, ref.dq, ref.dqD, c.headDim), dk: gradientBound(tolerance, ref.dk, ref.dkD, c.headDim), dv: tolerance };
  expectClose(`${label} vs float64`, got, ref, dtype, bounds);
}

const dispose = (...ts: (Tensor | Grads | Inputs)[]) => {
  for (const t of ts) for (const x of 'dispose' in t ? [t as Tensor] : Object.values(t)) x.dispose();
};

describe.skipIf(!gpuAvailable)('attention backward on CUDA', () => {
  for (const c of backwardCases()) {
    for (const dtype of DTYPES) {
      it(`default kernel: ${describeAttentionCase(c)} ${dtype}`, () => {
        const label = `${describeAttentionCase(c)} ${dtype}`;
        const t = backwardInputs(pair.cuda, c, dtype);
        const { out, lse } = pair.cuda.attention(t.q, t.k, t.v, { ...optionsOf(c), returnLogSumExp: true });
        const grads = attentionBackward(pair.cuda.session, t.q, t.k, t.v, out, lse, t.dOut, optionsOf(c));
        expectClose(`${label} vs float64 on the stored values`, grads, storedGradientsFor(c, t, out, lse), dtype, GPU_ATTENTION_TOLERANCE[dtype]);
        if (dtype === 'f32' || c.headDim >= 16) expectTrueGradients(label, c, t, grads, dtype);
        // The CPU backend's backward on the same values (this forward's output and log-sum-exp
        // too: with 16-bit outputs, another forward's rounding would enter through D = rowsum(dOut ∘ out),
        // which at head dims below 16 cancels past the tolerance) agrees too.
        const cpuInputs = Object.fromEntries(Object.entries(t).map(([k, x]) => [k, pair.cpu.tensor(x.toArraySync() as Float32Array, x.shape, dtype)])) as Inputs;
        const cpuForward = { out: pair.cpu.tensor(out.toArraySync() as Float32Array, out.shape, dtype), lse: pair.cpu.tensor(lse.toArraySync() as Float32Array, lse.shape, 'f32') };
        const cpu = attentionBackward(pair.cpu.session, cpuInputs.q, cpuInputs.k, cpuInputs.v, cpuForward.out, cpuForward.lse, cpuInputs.dOut, optionsOf(c));
        const cpuValues = { dq: cpu.dq.toArraySync() as Float32Array, dk: cpu.dk.toArraySync() as Float32Array, dv: cpu.dv.toArraySync() as Float32Array };
        if (c.seqK === 1) {
          // One key: every row's P is 1 and dS = P∘(dP − D) vanishes, so dq and dk are zero up to the
          // rounding of dP − D, which two backends round differently; they are bounded against dv instead.
          const size = (x: ArrayLike<number>) => Math.hypot(...Array.from(x));
          for (const name of ['dq', 'dk'] as const) {
            expect(size(grads[name].toArraySync() as Float32Array) / size(cpuValues.dv), `${label}: ${name} vanishes`).toBeLessThanOrEqual(GPU_BACKWARD_TOLERANCE[dtype]);
          }
          expect(relError(grads.dv.toArraySync() as Float32Array, cpuValues.dv, dtype), `${label} vs CPU: dv`).toBeLessThanOrEqual(GPU_BACKWARD_TOLERANCE[dtype]);
        } else {
          expectClose(`${label} vs CPU`, grads, cpuValues, dtype, GPU_BACKWARD_TOLERANCE[dtype]);
        }
        dispose(t, grads, out, lse, cpuInputs, cpu, cpuForward.out, cpuForward.lse);
      });
    }
  }

  it('clamps key lengths read from a device tensor', () => {
    const c: AttentionCase = { batch: 3, heads: 4, kvHeads: 2, seqQ: 70, seqK: 90, headDim: 64, causal: true };
    for (const dtype of DTYPES) {
      const t = backwardInputs(pair.cuda, c, dtype);
      const lengths = pair.cuda.tensor(Int32Array.from([-4, 500, 33]), [3]);
      const { out, lse } = pair.cuda.attention(t.q, t.k, t.v, { causal: true, keyLengths: lengths, returnLogSumExp: true });
      const grads = attentionBackward(pair.cuda.session, t.q, t.k, t.v, out, lse, t.dOut, { causal: true, keyLengths: lengths });
      const clamped = { ...c, keyLengths: [0, 90, 33] };
      expectClose(`device lengths ${dtype}`, grads, storedGradientsFor(clamped, t, out, lse), dtype, GPU_ATTENTION_TOLERANCE[dtype]);
      const dq = grads.dq.toArraySync() as Float32Array;
      expect(dq.subarray(0, 4 * 70 * 64).every((x) => x === 0), `${dtype}: batch entry 0 sees no key`).toBe(true);
      dispose(t, grads, out, lse, lengths);
    }
  });

  it.skipIf(!torchAvailable)('matches torch autograd (scaled_dot_product_attention) on larger problems', () => {
    const cases: (AttentionCase & { dtype: FloatDType })[] = [
      { batch: 2, heads: 8, kvHeads: 2, seqQ: 300, seqK: 300, headDim: 128, causal: true, dtype: 'bf16' },
      { batch: 2, heads: 4, kvHeads: 4, seqQ: 257, seqK: 513, headDim: 64, causal: false, keyLengths: [513, 200], dtype: 'f16' },
      { batch: 1, heads: 4, kvHeads: 1, seqQ: 200, seqK: 150, headDim: 96, causal: true, keyLengths: [120], dtype: 'bf16' },
      { batch: 1, heads: 2, kvHeads: 2, seqQ: 130, seqK: 190, headDim: 80, causal: true, dtype: 'f32' },
      { batch: 1, heads: 2, kvHeads: 1, seqQ: 64, seqK: 64, headDim: 256, causal: false, dtype: 'bf16' },
    ];
    const runs = cases.map((c, i) => {
      const t = backwardInputs(pair.cuda, c, c.dtype);
      const { out, lse } = pair.cuda.attention(t.q, t.k, t.v, { ...optionsOf(c), returnLogSumExp: true });
      const grads = attentionBackward(pair.cuda.session, t.q, t.k, t.v, out, lse, t.dOut, optionsOf(c));
      const values = (x: Tensor) => x.toArraySync() as Float32Array;
      const torchCase: TorchCase = {
        spec: {
          kind: 'attention',
          name: `case${i}`,
          dtype: c.dtype,
          batch: c.batch,
          heads: c.heads,
          kv_heads: c.kvHeads,
          seq_q: c.seqQ,
          seq_k: c.seqK,
          dim: c.headDim,
          causal: c.causal,
          scale: c.scale ?? 1 / Math.sqrt(c.headDim),
          key_lengths: c.keyLengths ?? null,
        },
        inputs: { q: values(t.q), k: values(t.k), v: values(t.v), dout: values(t.dOut) },
        grads: ['q', 'k', 'v'],
      };
      const got = { dq: values(grads.dq), dk: values(grads.dk), dv: values(grads.dv) };
      dispose(t, grads, out, lse);
      return { c, torchCase, got };
    });
    const torch = torchGradients(runs.map((r) => r.torchCase));
    for (const { c, torchCase, got } of runs) {
      const want = torch.get(torchCase.spec.name)!;
      for (const [name, part] of [['dq', 'q'], ['dk', 'k'], ['dv', 'v']] as const) {
        expect(relError(got[name], want.get(part)!, c.dtype), `${describeAttentionCase(c)} ${c.dtype}: ${name} vs torch`).toBeLessThanOrEqual(2 * GPU_BACKWARD_TOLERANCE[c.dtype]);
      }
    }
  });

  it('runs a 16K sequence (B1 H2 D64 f16) with no seq x seq allocation', async () => {
    const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    try {
      const seq = 16384;
      const shape = [1, 2, seq, 64];
      for (const causal of [false, true]) {
        const [q, k, v, dOut] = [1, 2, 3, 4].map((seed) => gpu.randn(shape, { dtype: 'f16', seed }));
        const { out, lse } = gpu.attention(q!, k!, v!, { causal, returnLogSumExp: true });
        const grads = attentionBackward(gpu.session, q!, k!, v!, out, lse, dOut!, { causal });
        await grads.dq.toArray();
        const stats = gpu.memoryStats();
        // Live: q, k, v, dOut, out, dq, dk, dv (f16), lse, and the backward's f32 scratch (D and the dq accumulator).
        const tensors = 8 * 2 * seq * 64 * 2 + 2 * seq * 4;
        const scratch = 2 * seq * 4 + 2 * seq * 64 * 4;
        expect(stats.peakBytes).toBeLessThan(1.5 * (tensors + scratch));
        // One head's f32 seq × seq matrix alone would be 1 GiB.
        expect(stats.peakBytes).toBeLessThan((seq * seq * 4) / 10);
        expect((grads.dk.toArraySync() as Float32Array).every(Number.isFinite)).toBe(true);
        dispose(q!, k!, v!, dOut!, out, lse, grads);
        gpu.trim();
      }
    } finally {
      gpu.dispose();
    }
  });

  // Several query tiles and key blocks per head, so the Hopper kernel's ring stages wrap, its dq
  // tiles alternate, GQA walks several heads and tails fall off every tile size.
  const hopperCases: AttentionCase[] = [
    { batch: 2, heads: 4, kvHeads: 2, seqQ: 333, seqK: 517, headDim: 64, causal: true, keyLengths: [517, 200] },
    { batch: 1, heads: 4, kvHeads: 1, seqQ: 300, seqK: 260, headDim: 128, causal: true, keyLengths: [250] },
    { batch: 1, heads: 3, kvHeads: 3, seqQ: 129, seqK: 300, headDim: 96, causal: false, scale: -0.3 },
    { batch: 2, heads: 2, kvHeads: 2, seqQ: 200, seqK: 130, headDim: 40, causal: true },
    { batch: 1, heads: 2, kvHeads: 2, seqQ: 128, seqK: 256, headDim: 128, causal: false },
    { batch: 2, heads: 2, kvHeads: 1, seqQ: 70, seqK: 140, headDim: 72, causal: false, keyLengths: [0, 129] },
  ];
  const hopper = () => {
    const { major, minor } = (pair.cuda.backend as unknown as { device: { computeCapability: { major: number; minor: number } } }).device.computeCapability;
    return major === 9 && minor === 0;
  };
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`the Hopper kernel on multi-tile shapes (${dtype}), and the default on sm_90`, (ctx) => {
      if (!hopper()) ctx.skip();
      for (const c of hopperCases) {
        const t = backwardInputs(pair.cuda, c, dtype);
        const { out, lse } = pair.cuda.attention(t.q, t.k, t.v, { ...optionsOf(c), returnLogSumExp: true });
        const want = storedGradientsFor(c, t, out, lse);
        expect(backwardDeviceConfigs(pair.cuda, c.headDim, dtype)[0]).toEqual({ family: 'wgmma' });
        const grads = runBackwardConfig(pair.cuda, c, t, out, lse, { family: 'wgmma' });
        expectClose(`${describeAttentionCase(c)} wgmma`, grads, want, dtype, GPU_ATTENTION_TOLERANCE[dtype]);
        const byDefault = attentionBackward(pair.cuda.session, t.q, t.k, t.v, out, lse, t.dOut, optionsOf(c));
        expectClose(`${describeAttentionCase(c)} default`, byDefault, want, dtype, GPU_ATTENTION_TOLERANCE[dtype]);
        dispose(t, grads, byDefault, out, lse);
      }
    });
  }

  // Last: every configuration, after the default path's checks.
  for (const dtype of DTYPES) {
    it(`every kernel configuration writes every element correctly (${dtype})`, () => {
      for (const c of backwardCases()) {
        const t = backwardInputs(pair.cuda, c, dtype);
        const { out, lse } = pair.cuda.attention(t.q, t.k, t.v, { ...optionsOf(c), returnLogSumExp: true });
        const want = storedGradientsFor(c, t, out, lse);
        for (const config of backwardDeviceConfigs(pair.cuda, c.headDim, dtype)) {
          const grads = runBackwardConfig(pair.cuda, c, t, out, lse, config);
          expectClose(`${describeAttentionCase(c)} ${backwardConfigName(config)}`, grads, want, dtype, GPU_ATTENTION_TOLERANCE[dtype]);
          dispose(grads);
        }
        dispose(t, out, lse);
      }
    });
  }
});
