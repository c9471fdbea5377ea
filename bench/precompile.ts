/**
 * Fills the kernel cache before a GPU session with the modules the attention and matmul tests,
 * sanitizer drivers and benchmarks ask for: each takes NVRTC seconds to build, and a test run
 * would otherwise build dozens of them one after another. Needs NVRTC, not a GPU (the arch is
 * given). Shards run side by side on separate cores:
 *
 *   for i in $(seq 0 11); do tsx bench/precompile.ts sm_90 $i/12 & done; wait
 *
 * The set: every attention configuration the tests and the tuner try (the Hopper ones for sm_90a
 * when the arch is sm_90), and on sm_90 every wgmma matmul configuration for f16 and bf16 with
 * every transpose, and for tf32 (its operands are always K-major copies).
 */
import { ATTENTION_HEAD_DIMS, attentionSpec, mmaTuningConfigs, simtCandidates, wgmmaCandidates } from '../src/compute/cuda/attention-kernels.js';
import { compileKernelModule, KernelSources, type ModuleSpec } from '../src/compute/cuda/kernel-sources.js';
import { kernelSource, WGMMA_CONFIGS, type MatmulVariant } from '../src/compute/cuda/matmul-kernels.js';

const [arch, shardArg = '0/1'] = process.argv.slice(2);
const [shard, shards] = shardArg.split('/').map(Number) as [number, number];
if (!arch || !(shard >= 0 && shards > shard)) {
  console.error('usage: tsx bench/precompile.ts <arch, e.g. sm_90> [shard/shards]');
  process.exit(2);
}

const jobs: { spec: ModuleSpec; arch: string }[] = [];
for (const dp of ATTENTION_HEAD_DIMS) {
  for (const dtype of ['f16', 'bf16'] as const) {
    for (const config of mmaTuningConfigs(dp)) for (const aligned of [true, false]) jobs.push({ spec: attentionSpec(config, dtype, dp, aligned), arch });
  }
  for (const dtype of ['f32', 'f16', 'bf16'] as const) for (const config of simtCandidates(dp)) jobs.push({ spec: attentionSpec(config, dtype, dp, false), arch });
}
// The Hopper kernels are compiled for sm_90a (what the backend asks for on an sm_90 device).
if (arch === 'sm_90') {
  for (const dp of ATTENTION_HEAD_DIMS) {
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const config of wgmmaCandidates(dp, dtype)) jobs.push({ spec: attentionSpec(config, dtype, dp, true), arch: 'sm_90a' });
    }
  }
  const variants: MatmulVariant[] = [];
  for (const config of WGMMA_CONFIGS) {
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const transA of [false, true]) {
        for (const transB of [false, true]) variants.push({ config, dtype, transA, transB, alignA: true, alignB: true, vecC: false });
      }
    }
    variants.push({ config, dtype: 'f32', transA: false, transB: true, alignA: true, alignB: true, vecC: false });
  }
  for (const variant of variants) {
    const source = kernelSource(variant);
    jobs.push({ spec: { file: source.file, defines: source.defines }, arch: 'sm_90a' });
  }
}

const sources = new KernelSources();
const started = performance.now();
let built = 0;
for (let i = shard; i < jobs.length; i += shards) {
  const job = jobs[i]!;
  if (!compileKernelModule(job.spec, sources, { arch: job.arch }).cacheHit) built++;
}
console.log(`precompile ${shard}/${shards}: ${built} of ${Math.ceil((jobs.length - shard) / shards)} built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
