/**
 * Runs every attention kernel configuration on small problems (tails off the tile sizes,
 * causal, grouped-query, padded keys, odd head dims) for compute-sanitizer:
 *
 *   compute-sanitizer --tool memcheck  node --import tsx test/gpu/attention/sanitize.ts [--defaults]
 *   compute-sanitizer --tool racecheck node --import tsx test/gpu/attention/sanitize.ts [--defaults]
 *
 * `--defaults` runs only the tile the launcher picks per head dim, the CUDA-core fallback and one
 * split-key configuration (racecheck is slow); `--hopper` only the Hopper (sm_90a) configurations,
 * on the cases they take; `--mma` only the mma.sync ones (whose ping-pong kernels hand ring stages
 * between warp groups through named barriers, with no block barrier: the long sequences let the
 * rings wrap); `--decode` only the split-key ones (three key chunks each).
 * Every result is also checked against float64 on poisoned outputs, so a clean run means
 * in-bounds, race-free and correct. Exits non-zero on a wrong result.
 */
import { attentionConfigName } from '../../../src/compute/cuda/attention/attention-kernels.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { relError } from '../../unit/compute/helpers.js';
import { attentionInputs, describeAttentionCase, referenceFor, type AttentionCase } from '../../unit/attention/cases.js';
import { deviceConfigs, runConfig } from './config-runs.js';

const TOLERANCE = { f32: 1e-5, f16: 2e-3, bf16: 1.2e-2 } as const;
const cases: AttentionCase[] = [
  { batch: 2, heads: 4, kvHeads: 2, seqQ: 77, seqK: 140, headDim: 64, causal: true, keyLengths: [140, 61] },
  { batch: 2, heads: 2, kvHeads: 1, seqQ: 150, seqK: 90, headDim: 128, causal: false, keyLengths: [0, 71] },
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 40, seqK: 45, headDim: 80, causal: true },
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 33, seqK: 70, headDim: 256, causal: false },
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 20, seqK: 21, headDim: 36, causal: true },
  // Key rings that wrap (5 tiles of 128, 11 of 64) under a causal mask with seqQ < seqK.
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 200, seqK: 600, headDim: 128, causal: true, keyLengths: [550] },
  { batch: 1, heads: 2, kvHeads: 1, seqQ: 300, seqK: 700, headDim: 128, causal: true },
  { batch: 2, heads: 1, kvHeads: 1, seqQ: 270, seqK: 520, headDim: 64, causal: false, keyLengths: [520, 333] },
  // More query blocks (160) than an H200's 132 SMs: persistent Hopper blocks take two, some without keys.
  { batch: 2, heads: 80, kvHeads: 16, seqQ: 70, seqK: 200, headDim: 128, causal: false, keyLengths: [200, 0] },
  // A negative scale (Q negated once in shared memory by the mma kernels).
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 77, seqK: 140, headDim: 128, causal: false, scale: -0.2 },
];

const defaultsOnly = process.argv.includes('--defaults');
const FAMILY_FLAGS = { '--hopper': 'wgmma', '--mma': 'mma', '--decode': 'decode' } as const;
const family = Object.entries(FAMILY_FLAGS).find(([flag]) => process.argv.includes(flag))?.[1];
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
let runs = 0;
let failures = 0;
for (const c of cases) {
  for (const dtype of ['f32', 'f16', 'bf16'] as const) {
    const configs = deviceConfigs(gpu, c.headDim, dtype, defaultsOnly).filter((config) => !family || config.family === family);
    if (configs.length === 0) continue;
    const { q, k, v } = attentionInputs(gpu, c, dtype);
    const ref = referenceFor(c, q, k, v);
    for (const config of configs) {
      const { out, lse } = runConfig(gpu, c, q, k, v, config);
      const values = out.toArraySync() as Float32Array;
      const lseValues = lse.toArraySync() as Float32Array;
      const err = relError(values, ref.out, dtype);
      const lseOk = Array.from(lseValues).every((x, i) => (ref.lse[i] === -Infinity ? x === -Infinity : Math.abs(x - ref.lse[i]!) < 1e-4 * Math.max(1, Math.abs(ref.lse[i]!))));
      const ok = err <= TOLERANCE[dtype] && lseOk && values.every(Number.isFinite);
      runs++;
      if (!ok) failures++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${describeAttentionCase(c)} ${dtype} ${attentionConfigName(config)}: error ${err.toExponential(2)}${lseOk ? '' : ', lse wrong'}`);
      out.dispose();
      lse.dispose();
    }
    for (const t of [q, k, v]) t.dispose();
  }
}
gpu.dispose();
console.log(`attention sanitize: ${runs} runs, ${failures} wrong`);
process.exit(failures === 0 ? 0 : 1);
