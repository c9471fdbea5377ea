/**
 * Fills the kernel cache with the Hopper (sm_90a) matmul modules before a GPU session: each
 * takes NVRTC seconds to build, and the tests, the configuration sweep and the benchmark's
 * autotuner need dozens of them, one after another. Needs NVRTC 12+ but no GPU. Shards run
 * side by side on separate cores:
 *
 *   for i in 0 1 2 3; do tsx bench/matmul-precompile.ts $i/4 & done; wait
 *
 * The set: every wgmma configuration for f16 and bf16 with every transpose, and for tf32 (its
 * operands are always K-major copies).
 */
import { KernelSources, compileKernelModule } from '../src/compute/cuda/kernel-sources.js';
import { kernelSource, WGMMA_CONFIGS, type MatmulVariant } from '../src/compute/cuda/matmul-kernels.js';

const [shard, shards] = (process.argv[2] ?? '0/1').split('/').map(Number) as [number, number];
const variants: MatmulVariant[] = [];
for (const config of WGMMA_CONFIGS) {
  for (const dtype of ['f16', 'bf16'] as const) {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) variants.push({ config, dtype, transA, transB, alignA: true, alignB: true, vecC: false });
    }
  }
  variants.push({ config, dtype: 'f32', transA: false, transB: true, alignA: true, alignB: true, vecC: false });
}
const sources = new KernelSources();
const started = performance.now();
let built = 0;
for (let i = shard; i < variants.length; i += shards) {
  const source = kernelSource(variants[i]!);
  const compiled = compileKernelModule({ file: source.file, defines: source.defines }, sources, { arch: 'sm_90a' });
  if (!compiled.cacheHit) built++;
}
console.log(`precompile ${shard}/${shards}: ${built} built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
