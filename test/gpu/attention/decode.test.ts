/**
 * The split-key ("flash-decoding") attention kernels against the float64 reference: few query rows
 * (seqQ 1, 2, 7, 33, 64) against long and short key sequences, q heads per k/v head 1, 2, 4 and
 * 8, head dims 32 to 256 and odd ones, causal masks (top-left: row i sees keys 0..i), key lengths
 * 0, 1, short and past seqK (a device tensor, clamped), negative and zero scales. Each case runs
 * in f32, f16 and bf16 through both engines (the tensor-core one for 16-bit types from sm_80),
 * with the launcher's own key split and with three chunks forced (so the merge runs on short key
 * sequences too, with chunks that do not divide them), into poisoned outputs, the log-sum-exp
 * checked as well. Last, decode shapes must take the split-key kernel by default: the
 * configuration `defaultAttentionConfig` picks, and `gpu.attention`'s result bit for bit.
 * Tolerances as in attention.test.ts (the tensor-core engine rounds P to the input type).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttentionParams } from '../../../src/compute/core/attention-params.js';
import { defaultAttentionConfig } from '../../../src/compute/cuda/attention/attention.js';
import { decodeConfig, decodeGroupRows, type DecodeEngine } from '../../../src/compute/cuda/attention/attention-decode-kernels.js';
import { attentionConfigName, paddedHeadDim } from '../../../src/compute/cuda/attention/attention-kernels.js';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import {
  attentionInputs,
  describeAttentionCase,
  expectAttentionMatches,
  GPU_ATTENTION_TOLERANCE as GPU_TOLERANCE,
  referenceFor,
  type AttentionCase,
} from '../../unit/attention/cases.js';
import { gpuAvailable } from '../gpu-available.js';
import { runConfig } from './config-runs.js';

const DTYPES = ['f32', 'f16', 'bf16'] as const;

const CASES: AttentionCase[] = [
  // seqQ 1, 8 q heads per k/v head, padded keys: none, all, all but one.
  { batch: 3, heads: 8, kvHeads: 1, seqQ: 1, seqK: 1500, headDim: 128, causal: false, keyLengths: [1500, 0, 1] },
  { batch: 2, heads: 4, kvHeads: 2, seqQ: 2, seqK: 777, headDim: 64, causal: false, keyLengths: [5000, 300] },
  { batch: 1, heads: 4, kvHeads: 1, seqQ: 7, seqK: 1111, headDim: 80, causal: false },
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 33, seqK: 900, headDim: 256, causal: false, keyLengths: [900, 417] },
  // 256 packed rows: four tensor-core row tiles, sixteen CUDA-core ones.
  { batch: 1, heads: 8, kvHeads: 2, seqQ: 64, seqK: 600, headDim: 32, causal: false },
  { batch: 2, heads: 8, kvHeads: 8, seqQ: 1, seqK: 2049, headDim: 33, causal: false },
  { batch: 1, heads: 8, kvHeads: 1, seqQ: 1, seqK: 1000, headDim: 96, causal: false, scale: -0.3 },
  { batch: 1, heads: 16, kvHeads: 2, seqQ: 1, seqK: 4100, headDim: 128, causal: false },
  // Causal: packed row r is position r % seqQ of its head; a key length below seqQ too.
  { batch: 2, heads: 4, kvHeads: 2, seqQ: 7, seqK: 300, headDim: 64, causal: true, keyLengths: [300, 4] },
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 33, seqK: 40, headDim: 128, causal: true },
  // Short key sequences, reached only by forcing the kernel.
  { batch: 2, heads: 2, kvHeads: 1, seqQ: 3, seqK: 1, headDim: 64, causal: false },
  { batch: 1, heads: 4, kvHeads: 4, seqQ: 2, seqK: 17, headDim: 96, causal: false, scale: 0 },
];

let gpu: GpuCompute | undefined;
let tensorCores = false;
beforeAll(async () => {
  if (!gpuAvailable) return;
  gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
  tensorCores = backendOf(gpu).device.computeCapability.major >= 8;
});
afterAll(() => gpu?.dispose());

function backendOf(g: GpuCompute): CudaBackend {
  return g.backend as unknown as CudaBackend;
}

describe.skipIf(!gpuAvailable)('split-key attention on CUDA', () => {
  for (const c of CASES) {
    for (const dtype of DTYPES) {
      it(`${describeAttentionCase(c)} ${dtype}`, () => {
        const g = gpu!;
        const engines: DecodeEngine[] = dtype !== 'f32' && tensorCores ? ['mma', 'simt'] : ['simt'];
        const { q, k, v } = attentionInputs(g, c, dtype);
        const ref = referenceFor(c, q, k, v);
        for (const engine of engines) {
          for (const splits of [undefined, 3]) {
            const config = decodeConfig(engine, decodeGroupRows(c), paddedHeadDim(c.headDim), splits);
            const { out, lse } = runConfig(g, c, q, k, v, config);
            expectAttentionMatches(`${describeAttentionCase(c)} ${dtype} ${attentionConfigName(config)}`, out, lse, ref, dtype, GPU_TOLERANCE[dtype]);
            out.dispose();
            lse.dispose();
          }
        }
        for (const t of [q, k, v]) t.dispose();
      });
    }
  }

  it('runs decode shapes through the split-key kernel by default', () => {
    const g = gpu!;
    const c: AttentionCase = { batch: 2, heads: 8, kvHeads: 2, seqQ: 1, seqK: 2048, headDim: 64, causal: false };
    for (const dtype of DTYPES) {
      const { q, k, v } = attentionInputs(g, c, dtype);
      const { out, lse } = g.attention(q, k, v, { returnLogSumExp: true });
      const { batch, heads, kvHeads, seqQ, seqK, headDim, causal } = c;
      const views = { q: q.view, k: k.view, v: v.view, out: out.view, lse: lse.view };
      const params: AttentionParams = { ...views, batch, heads, kvHeads, seqQ, seqK, headDim, scale: 1 / Math.sqrt(headDim), causal };
      const config = defaultAttentionConfig(backendOf(g), params);
      expect(config).toEqual(decodeConfig(dtype !== 'f32' && tensorCores ? 'mma' : 'simt', decodeGroupRows(c), paddedHeadDim(c.headDim)));
      expectAttentionMatches(`default ${dtype}`, out, lse, referenceFor(c, q, k, v), dtype, GPU_TOLERANCE[dtype]);
      // The forced configuration gives the same bits: the default path ran it.
      const forced = runConfig(g, c, q, k, v, config);
      expect(forced.out.toArraySync(), `${dtype} out`).toEqual(out.toArraySync());
      expect(forced.lse.toArraySync(), `${dtype} lse`).toEqual(lse.toArraySync());
      for (const t of [q, k, v, out, lse, forced.out, forced.lse]) t.dispose();
    }
  });
});
