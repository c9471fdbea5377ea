/**
 * The Hopper (sm_90a) attention kernels on shapes that stress their pipelines: key sequences many
 * tiles long (the K/V rings wrap several times), several query blocks with a ragged last one,
 * grouped- and multi-query heads, padded keys (none, some, all), causal masks with seqQ ≠ seqK
 * both ways, a negative and a zero scale, more query blocks than SMs (persistent blocks take
 * several), every compiled head dim and head dims padded up to one. Every Hopper configuration runs on poisoned outputs and is
 * checked against float64 (tolerances as in attention.test.ts). Skipped off sm_90.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { attentionConfigName, wgmmaCandidates } from '../../../src/compute/cuda/attention/attention-kernels.js';
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

const CASES: AttentionCase[] = [
  { batch: 2, heads: 4, kvHeads: 2, seqQ: 333, seqK: 700, headDim: 128, causal: false, keyLengths: [700, 517] },
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 129, seqK: 1000, headDim: 128, causal: true, scale: -0.05 },
  { batch: 1, heads: 4, kvHeads: 1, seqQ: 700, seqK: 300, headDim: 128, causal: true },
  { batch: 1, heads: 3, kvHeads: 1, seqQ: 450, seqK: 450, headDim: 64, causal: true },
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 200, seqK: 640, headDim: 64, causal: true, keyLengths: [0, 300] },
  { batch: 1, heads: 2, kvHeads: 2, seqQ: 1, seqK: 1, headDim: 64, causal: false },
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 300, seqK: 260, headDim: 128, causal: true, keyLengths: [200], scale: 0 },
  { batch: 3, heads: 2, kvHeads: 1, seqQ: 64, seqK: 129, headDim: 64, causal: false, keyLengths: [129, 1, 128] },
  // More query blocks than SMs: persistent blocks walk several items (Q buffer and rings reused
  // across them, items without keys in between, causal items of unequal length).
  { batch: 3, heads: 24, kvHeads: 6, seqQ: 130, seqK: 200, headDim: 128, causal: true, keyLengths: [200, 0, 137] },
  { batch: 2, heads: 40, kvHeads: 8, seqQ: 200, seqK: 150, headDim: 64, causal: false, keyLengths: [150, 5] },
  { batch: 2, heads: 40, kvHeads: 8, seqQ: 130, seqK: 100, headDim: 256, causal: false },
  // 64-key tiles above head dim 128, and head dims padded up to the compiled one (columns past
  // the head dim read as zeros and are not stored).
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 300, seqK: 450, headDim: 256, causal: true, keyLengths: [400] },
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 129, seqK: 200, headDim: 192, causal: false, keyLengths: [200, 77] },
  { batch: 1, heads: 2, kvHeads: 2, seqQ: 65, seqK: 300, headDim: 200, causal: true, scale: -0.05 },
  { batch: 1, heads: 4, kvHeads: 2, seqQ: 200, seqK: 333, headDim: 96, causal: true },
  { batch: 1, heads: 3, kvHeads: 1, seqQ: 100, seqK: 70, headDim: 72, causal: false },
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 150, seqK: 150, headDim: 32, causal: false },
];

let gpu: GpuCompute | undefined;
let hopper = false;
beforeAll(async () => {
  if (!gpuAvailable) return;
  gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
  const { major, minor } = (gpu.backend as unknown as CudaBackend).device.computeCapability;
  hopper = major === 9 && minor === 0;
});
afterAll(() => gpu?.dispose());

describe.skipIf(!gpuAvailable)('Hopper attention kernels', () => {
  for (const c of CASES) {
    for (const dtype of ['f16', 'bf16'] as const) {
      it(`every Hopper configuration: ${describeAttentionCase(c)} ${dtype}`, (ctx) => {
        if (!hopper) ctx.skip();
        const g = gpu!;
        const { q, k, v } = attentionInputs(g, c, dtype);
        const ref = referenceFor(c, q, k, v);
        for (const config of wgmmaCandidates(c.headDim, dtype)) {
          const { out, lse } = runConfig(g, c, q, k, v, config);
          expectAttentionMatches(`${describeAttentionCase(c)} ${dtype} ${attentionConfigName(config)}`, out, lse, ref, dtype, GPU_TOLERANCE[dtype]);
          out.dispose();
          lse.dispose();
        }
        for (const t of [q, k, v]) t.dispose();
      });
    }
  }
});
