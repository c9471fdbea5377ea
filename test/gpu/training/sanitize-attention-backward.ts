/**
 * Runs every attention backward kernel configuration on small problems (tails off the tile
 * sizes, causal, grouped-query, padded keys with a batch entry that has none, odd head dims,
 * seqQ ≠ seqK both ways, a negative scale) for compute-sanitizer:
 *
 *   compute-sanitizer --tool memcheck  node --import tsx test/gpu/training/sanitize-attention-backward.ts [--defaults]
 *   compute-sanitizer --tool racecheck node --import tsx test/gpu/training/sanitize-attention-backward.ts [--defaults]
 *   compute-sanitizer --tool synccheck node --import tsx test/gpu/training/sanitize-attention-backward.ts --defaults
 *
 * `--defaults` runs only the tile the launcher picks (racecheck is slow); `--mma` only the
 * mma.sync tiles; `--wgmma` only the Hopper kernel. Every result is also checked against float64 on the stored values with dk
 * and dv poisoned beforehand, so a clean run means in-bounds, race-free and correct. Exits
 * non-zero on a wrong result.
 */
import { backwardConfigName } from '../../../src/compute/cuda/attention/attention-backward-kernels.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { relError } from '../../unit/compute/helpers.js';
import { backwardInputs, storedGradientsFor } from '../../unit/attention/backward-cases.js';
import { describeAttentionCase, GPU_ATTENTION_TOLERANCE, type AttentionCase } from '../../unit/attention/cases.js';
import { backwardDeviceConfigs, runBackwardConfig } from './backward-config-runs.js';

const cases: AttentionCase[] = [
  { batch: 2, heads: 4, kvHeads: 2, seqQ: 77, seqK: 140, headDim: 64, causal: true, keyLengths: [140, 61] },
  { batch: 2, heads: 2, kvHeads: 1, seqQ: 150, seqK: 90, headDim: 128, causal: false, keyLengths: [0, 71] },
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 40, seqK: 45, headDim: 80, causal: true },
  { batch: 1, heads: 2, kvHeads: 2, seqQ: 33, seqK: 70, headDim: 96, causal: false },
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 33, seqK: 70, headDim: 256, causal: true },
  { batch: 1, heads: 1, kvHeads: 1, seqQ: 20, seqK: 21, headDim: 36, causal: true },
  // Several query tiles per head and key blocks, so the double-buffered stages wrap.
  { batch: 1, heads: 4, kvHeads: 1, seqQ: 300, seqK: 260, headDim: 128, causal: true, keyLengths: [250] },
  { batch: 1, heads: 2, kvHeads: 2, seqQ: 129, seqK: 300, headDim: 32, causal: false, scale: -0.3 },
];

const defaultsOnly = process.argv.includes('--defaults');
const family = process.argv.includes('--mma') ? 'mma' : process.argv.includes('--wgmma') ? 'wgmma' : undefined;
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
let runs = 0;
let failures = 0;
for (const c of cases) {
  for (const dtype of ['f32', 'f16', 'bf16'] as const) {
    const all = backwardDeviceConfigs(gpu, c.headDim, dtype).filter((config) => !family || config.family === family);
    const configs = defaultsOnly ? all.slice(0, 1) : all;
    if (configs.length === 0) continue;
    const t = backwardInputs(gpu, c, dtype);
    const options = { causal: c.causal, ...(c.scale === undefined ? {} : { scale: c.scale }), ...(c.keyLengths ? { keyLengths: c.keyLengths } : {}) };
    const { out, lse } = gpu.attention(t.q, t.k, t.v, { ...options, returnLogSumExp: true });
    const want = storedGradientsFor(c, t, out, lse);
    for (const config of configs) {
      const grads = runBackwardConfig(gpu, c, t, out, lse, config);
      const errors = (['dq', 'dk', 'dv'] as const).map((name) => {
        const values = grads[name].toArraySync() as Float32Array;
        return values.every(Number.isFinite) ? relError(values, want[name], dtype) : Infinity;
      });
      const worst = Math.max(...errors);
      const ok = worst <= GPU_ATTENTION_TOLERANCE[dtype];
      runs++;
      if (!ok) failures++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${describeAttentionCase(c)} ${dtype} ${backwardConfigName(config)}: dq/dk/dv error ${errors.map((e) => e.toExponential(2)).join(' / ')}`);
      for (const x of Object.values(grads)) x.dispose();
    }
    for (const x of [...Object.values(t), out, lse]) x.dispose();
  }
}
gpu.dispose();
console.log(`attention backward sanitize: ${runs} runs, ${failures} wrong`);
process.exit(failures === 0 ? 0 : 1);
