/**
 * Fills the kernel cache with every attention module the GPU tests, the sanitizer driver and
 * the benchmark ask for, one shard per process, so a GPU session compiles them in parallel
 * instead of one after another inside the test run:
 *
 *   for i in $(seq 0 11); do tsx test/gpu/attention/warm-cache.ts sm_90 $i 12 & done; wait
 *
 * Needs NVRTC, not a GPU (the arch is given).
 */
import { ATTENTION_HEAD_DIMS, attentionSpec, mmaTuningConfigs, simtCandidates, wgmmaCandidates } from '../../../src/compute/cuda/attention-kernels.js';
import { compileKernelModule, KernelSources, type ModuleSpec } from '../../../src/compute/cuda/kernel-sources.js';

const [arch, shardArg = '0', shardsArg = '1'] = process.argv.slice(2);
if (!arch) {
  console.error('usage: tsx test/gpu/attention/warm-cache.ts <arch, e.g. sm_90> [shard] [shards]');
  process.exit(2);
}
const shard = Number(shardArg);
const shards = Number(shardsArg);
const specs: ModuleSpec[] = [];
for (const dp of ATTENTION_HEAD_DIMS) {
  for (const dtype of ['f16', 'bf16'] as const) {
    for (const config of mmaTuningConfigs(dp)) for (const aligned of [true, false]) specs.push(attentionSpec(config, dtype, dp, aligned));
  }
  for (const dtype of ['f32', 'f16', 'bf16'] as const) for (const config of simtCandidates(dp)) specs.push(attentionSpec(config, dtype, dp, false));
}
// The Hopper kernel is compiled for sm_90a (what the backend asks for on an sm_90 device).
const hopperSpecs: ModuleSpec[] = [];
if (arch === 'sm_90') {
  for (const dp of ATTENTION_HEAD_DIMS) {
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const config of wgmmaCandidates(dp, dtype)) hopperSpecs.push(attentionSpec(config, dtype, dp, true));
    }
  }
}
const sources = new KernelSources();
let compiled = 0;
const started = performance.now();
[...specs.map((spec) => ({ spec, arch })), ...hopperSpecs.map((spec) => ({ spec, arch: 'sm_90a' }))].forEach((job, i) => {
  if (i % shards !== shard) return;
  if (!compileKernelModule(job.spec, sources, { arch: job.arch }).cacheHit) compiled++;
});
console.log(`shard ${shard}/${shards}: ${compiled} compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
