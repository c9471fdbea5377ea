/**
 * Fills the kernel cache before a GPU session with the modules the attention and matmul tests,
 * sanitizer drivers and benchmarks ask for: each takes NVRTC seconds to build, and a test run
 * would otherwise build dozens of them one after another. Needs NVRTC, not a GPU (the arch is
 * given). Shards run side by side on separate cores:
 *
 *   for i in $(seq 0 11); do tsx bench/precompile.ts sm_90 $i/12 & done; wait
 *
 * The set: every attention configuration the tests and the tuner try (the Hopper ones for sm_90a
 * when the arch is sm_90); the SIMT and mma.sync matmul modules of the configuration sweep
 * (test/gpu/matmul/config-sweep.ts: the GPU tests and sanitize.ts) and of the tile sweep
 * (bench/matmul-configs.ts: square row-major products); and on sm_90 every wgmma matmul
 * configuration for f16 and bf16 with every transpose, and for tf32 (its operands are always
 * K-major copies). The operand alignment of each sweep case is predicted as the backend decides
 * it (pool allocations are 16-byte aligned); a misprediction only means that module is built
 * later, at first use.
 */
import { ATTENTION_HEAD_DIMS, attentionSpec, mmaTuningConfigs, simtCandidates, wgmmaCandidates } from '../src/compute/cuda/attention/attention-kernels.js';
import { compileKernelModule } from '../src/compute/cuda/kernel-compile.js';
import { KernelSources, moduleKey, type ModuleSpec } from '../src/compute/gpu/kernel-sources.js';
import { candidateConfigs, configName, kernelSource, WGMMA_CONFIGS, type MatmulFamily, type MatmulVariant } from '../src/compute/cuda/matmul/matmul-kernels.js';
import { sweepCases } from '../test/gpu/matmul/config-sweep.js';

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
const matmulJob = (variant: MatmulVariant, jobArch: string) => {
  const source = kernelSource(variant);
  jobs.push({ spec: { file: source.file, defines: source.defines }, arch: jobArch });
};
const families: MatmulFamily[] = ['simt', ...(Number(arch.slice(3, 5)) >= 80 ? (['mma'] as const) : [])];
const aligned16 = (elements: number, elem: number) => (elements * elem) % 16 === 0;
for (const c of sweepCases(families)) {
  const dtype = c.kind === 'tf32' ? 'f32' : c.kind;
  const elem = dtype === 'f32' ? 4 : 2;
  const config = candidateConfigs(c.family, dtype).find((x) => configName(x) === c.config)!;
  const alignA = aligned16(c.transA ? c.m : c.k, elem) && aligned16(c.m * c.k, elem);
  const alignB = aligned16(c.transB ? c.k : c.n, elem) && aligned16(c.k * c.n, elem);
  matmulJob({ config, dtype, transA: c.transA, transB: c.transB, alignA, alignB, vecC: dtype === 'f32' && c.n % 4 === 0 }, arch);
}
for (const config of candidateConfigs('simt', 'f32')) matmulJob({ config, dtype: 'f32', transA: false, transB: false, alignA: true, alignB: true, vecC: true }, arch);
if (families.includes('mma')) {
  for (const dtype of ['f16', 'bf16'] as const) {
    for (const config of candidateConfigs('mma', dtype)) matmulJob({ config, dtype, transA: false, transB: false, alignA: true, alignB: true, vecC: false }, arch);
  }
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
  for (const variant of variants) matmulJob(variant, 'sm_90a');
}

// The sweeps ask for many modules more than once.
const unique = [...new Map(jobs.map((job) => [`${job.arch}|${moduleKey(job.spec)}`, job])).values()];
const sources = new KernelSources();
const started = performance.now();
let built = 0;
for (let i = shard; i < unique.length; i += shards) {
  const job = unique[i]!;
  if (!compileKernelModule(job.spec, sources, { arch: job.arch }).cacheHit) built++;
}
console.log(`precompile ${shard}/${shards}: ${built} of ${Math.ceil((unique.length - shard) / shards)} built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
