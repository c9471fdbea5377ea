/**
 * The kernel modules the GPU tests, sanitizer drivers and benchmarks ask for beyond the default
 * warmup (src/compute/cuda/warmup-specs.ts): every attention configuration the tests and the
 * tuner try (the Hopper ones when the device is sm_90 and NVRTC builds sm_90a, and every split-key
 * module: test/gpu/attention/decode.test.ts forces both engines); every tile of the
 * attention backward kernels (the Hopper one on sm_90) and the GRU backward step kernel (test/gpu/training); the SIMT and
 * mma.sync matmul modules of the configuration sweep (test/gpu/matmul/config-sweep.ts: the GPU
 * tests and sanitize.ts) and of the tile sweep (bench/matmul-configs.ts: square row-major
 * products); and on sm_90 every wgmma matmul configuration for f16 and bf16 with every transpose,
 * and for tf32 (its operands are always K-major copies). The operand alignment of each sweep case
 * is predicted as the backend decides it (pool allocations are 16-byte aligned); a misprediction
 * only means that module is built later, at first use. Compiled with the warmup by the GPU test
 * setup (warmup-setup.ts) and `bench/precompile.ts`.
 */
import { attentionBackwardModuleSpecs, wgmmaBackwardModuleSpecs } from '../../src/compute/cuda/attention/attention-backward-kernels.js';
import { decodeModuleSpecs } from '../../src/compute/cuda/attention/attention-decode-kernels.js';
import { ATTENTION_HEAD_DIMS, attentionSpec, configHeadDim, mmaTuningConfigs, simtCandidates, wgmmaCandidates } from '../../src/compute/cuda/attention/attention-kernels.js';
import { GRU_BACKWARD_SPEC } from '../../src/compute/cuda/gru/gru-backward.js';
import { candidateConfigs, configName, kernelSource, WGMMA_CONFIGS, type MatmulFamily, type MatmulVariant } from '../../src/compute/cuda/matmul/matmul-kernels.js';
import type { WarmupTarget } from '../../src/compute/cuda/warmup-target.js';
import type { ModuleSpec } from '../../src/compute/gpu/kernel-sources.js';
import { sweepCases } from './matmul/config-sweep.js';

/** The sweeps' modules for `target` (duplicates included: the warmup removes them). */
export function sweepModuleSpecs(target: Pick<WarmupTarget, 'deviceArch' | 'archSpecific'>): ModuleSpec[] {
  const arch = target.deviceArch;
  const hopper = arch === 'sm_90' && target.archSpecific;
  const specs: ModuleSpec[] = [];
  for (const dp of ATTENTION_HEAD_DIMS) {
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const config of mmaTuningConfigs(dp)) for (const aligned of [true, false]) specs.push(attentionSpec(config, dtype, dp, aligned));
      // At the head dim the launcher compiles the configuration for (the Hopper kernel pads it up).
      if (hopper) for (const config of wgmmaCandidates(dp, dtype)) specs.push(attentionSpec(config, dtype, configHeadDim(config, dp), true));
    }
    for (const dtype of ['f32', 'f16', 'bf16'] as const) for (const config of simtCandidates(dp)) specs.push(attentionSpec(config, dtype, dp, false));
  }
  specs.push(...decodeModuleSpecs(ATTENTION_HEAD_DIMS), ...attentionBackwardModuleSpecs(), ...(hopper ? wgmmaBackwardModuleSpecs() : []), GRU_BACKWARD_SPEC);
  const matmul = (variant: MatmulVariant) => {
    const { file, defines, arch: own } = kernelSource(variant);
    specs.push({ file, defines, ...(own === undefined ? {} : { arch: own }) });
  };
  const families: MatmulFamily[] = ['simt', ...(Number(arch.slice(3)) >= 80 ? (['mma'] as const) : [])];
  const aligned16 = (elements: number, elem: number) => (elements * elem) % 16 === 0;
  for (const c of sweepCases(families)) {
    const dtype = c.kind === 'tf32' ? 'f32' : c.kind;
    const elem = dtype === 'f32' ? 4 : 2;
    const config = candidateConfigs(c.family, dtype).find((x) => configName(x) === c.config)!;
    const alignA = aligned16(c.transA ? c.m : c.k, elem) && aligned16(c.m * c.k, elem);
    const alignB = aligned16(c.transB ? c.k : c.n, elem) && aligned16(c.k * c.n, elem);
    matmul({ config, dtype, transA: c.transA, transB: c.transB, alignA, alignB, vecC: dtype === 'f32' && c.n % 4 === 0 });
  }
  for (const config of candidateConfigs('simt', 'f32')) matmul({ config, dtype: 'f32', transA: false, transB: false, alignA: true, alignB: true, vecC: true });
  if (families.includes('mma')) {
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const config of candidateConfigs('mma', dtype)) matmul({ config, dtype, transA: false, transB: false, alignA: true, alignB: true, vecC: false });
    }
  }
  if (hopper) {
    for (const config of WGMMA_CONFIGS) {
      for (const dtype of ['f16', 'bf16'] as const) {
        for (const transA of [false, true]) for (const transB of [false, true]) matmul({ config, dtype, transA, transB, alignA: true, alignB: true, vecC: false });
      }
      matmul({ config, dtype: 'f32', transA: false, transB: true, alignA: true, alignB: true, vecC: false });
    }
  }
  return specs;
}
