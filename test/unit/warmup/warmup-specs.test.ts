/**
 * The warmup's module list against what the CUDA backend itself asks for: the matmul tuner's
 * candidates (`resolve` + `tuningCandidates` + `variantFor`) and the attention launcher's default
 * configuration, driven through the backend's own functions with a fake device of each arch.
 */
import { describe, expect, it } from 'vitest';
import type { AttentionParams } from '../../../src/compute/core/attention-params.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { MatmulParams } from '../../../src/compute/core/matmul-plan.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { WARMUP_OPS } from '../../../src/compute/core/warmup-ops.js';
import { attentionSpec, ATTENTION_HEAD_DIMS, configHeadDim, WGMMA_HEAD_DIMS } from '../../../src/compute/cuda/attention/attention-kernels.js';
import { defaultAttentionConfig } from '../../../src/compute/cuda/attention/attention.js';
import type { CudaContext } from '../../../src/compute/cuda/cuda-context.js';
import { gruModuleSpecs } from '../../../src/compute/cuda/gru/gru-kernels.js';
import { dynamicSharedBytes, kernelSource, WGMMA_CONFIGS } from '../../../src/compute/cuda/matmul/matmul-kernels.js';
import { resolve, tuningCandidates, variantFor } from '../../../src/compute/cuda/matmul/product.js';
import { warmupModuleSpecs, type WarmupSpecTarget } from '../../../src/compute/cuda/warmup-specs.js';
import { archSharedMemoryOptin } from '../../../src/compute/cuda/warmup-target.js';
import { moduleKey, type ModuleSpec } from '../../../src/compute/gpu/kernel-sources.js';
import { clusterModuleSpecs, portableModuleSpecs, softmaxSpec } from '../../../src/compute/gpu/kernel-specs.js';

const target = (arch: string, archSpecific = true): WarmupSpecTarget => ({ deviceArch: arch, archSpecific, sharedMemoryPerBlockOptin: archSharedMemoryOptin(arch) });
const keys = (specs: readonly ModuleSpec[]) => specs.map(moduleKey);

/** A CUDA backend as `resolve` and `defaultAttentionConfig` read it: a device of `arch`, buffers at `address`. */
function fakeBackend(arch: string, address: bigint): CudaContext {
  const n = Number(arch.slice(3));
  const device = { computeCapability: { major: Math.floor(n / 10), minor: n % 10 }, sharedMemoryPerBlockOptin: archSharedMemoryOptin(arch), multiprocessorCount: 132 };
  return { device, address: () => address } as unknown as CudaContext;
}

const view = (dtype: DType): TensorView => ({ dtype, shape: [1], offset: 0, size: 1 }) as unknown as TensorView;

function matmulParams(dtype: DType, precision: 'highest' | 'tf32', transA: boolean, transB: boolean): MatmulParams {
  const m = 512;
  const n = 384;
  const k = 256;
  return { a: view(dtype), b: view(dtype), out: view(dtype), m, n, k, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0, transA, transB, alpha: 1, beta: 0, precision, engine: 'kernels', autotune: true };
}

describe('warmupModuleSpecs', () => {
  it('lists every module once, and by default every portable op module, the cluster softmax and the GRU kernels (sm_90)', () => {
    const all = keys(warmupModuleSpecs(target('sm_90')));
    expect(new Set(all).size).toBe(all.length);
    for (const key of keys([...portableModuleSpecs(), ...clusterModuleSpecs(), ...gruModuleSpecs()])) expect(all).toContain(key);
  });

  it('leaves the sm_90a kernels out where NVRTC cannot build them, and has every wgmma tile in every transpose where it can', () => {
    expect(warmupModuleSpecs(target('sm_90', false)).filter((s) => s.arch !== undefined)).toEqual([]);
    const hopper = keys(warmupModuleSpecs(target('sm_90', true)).filter((s) => s.arch === 'sm_90a'));
    for (const config of WGMMA_CONFIGS) {
      for (const dtype of ['f16', 'bf16'] as const) {
        for (const transA of [false, true]) {
          for (const transB of [false, true]) expect(hopper).toContain(moduleKey(kernelSource({ config, dtype, transA, transB, alignA: true, alignB: true, vecC: false })));
        }
      }
    }
    // 7 tiles × (f16, bf16) × 4 transposes + 7 tf32 (K-major copies) + attention at head dims 64 and 128 in f16 and bf16.
    expect(hopper).toHaveLength(7 * 2 * 4 + 7 + 2 * WGMMA_HEAD_DIMS.length);
  });

  it('follows the arch: no clusters or tensor cores on sm_75, no wgmma on sm_80', () => {
    const turing = warmupModuleSpecs(target('sm_75'));
    expect(turing.some((s) => s.file === 'softmax_cluster.cu' || s.file === 'matmul_tc.cu' || s.file.startsWith('attention_mma'))).toBe(false);
    const ampere = warmupModuleSpecs(target('sm_80'));
    expect(ampere.some((s) => s.file === 'softmax_cluster.cu' || s.arch !== undefined)).toBe(false);
    // Every mma.sync tile in every transpose but one whose shared memory is above sm_80's 163 KiB
    // in every layout (128x256x64, 4 stages: 200 to 216 KiB).
    expect(ampere.filter((s) => s.file === 'matmul_tc.cu' && s.defines?.GC_TC_TYPE === 'GC_F16')).toHaveLength(6 * 4 - 4);
  });

  it('selects by op and dtype, skipping dtypes an op does not take', () => {
    expect(keys(warmupModuleSpecs(target('sm_90'), { ops: ['softmax'], dtypes: ['f32'] }))).toEqual([
      'softmax.cu?GC_DTYPE=GC_F32',
      'softmax_cluster.cu?GC_DTYPE=GC_F32',
    ]);
    expect(keys(warmupModuleSpecs(target('sm_80'), { ops: ['logSoftmax', 'exp'], dtypes: ['i32', 'f16'] }))).toEqual([
      'unary.cu?GC_DTYPE=GC_F16&GC_OP=OpExp',
      moduleKey(softmaxSpec('f16')),
    ]);
    // maximum is the binary op max; mean is a sum divided at the end.
    expect(keys(warmupModuleSpecs(target('sm_90'), { ops: ['maximum', 'mean', 'max'], dtypes: ['i32'] }))).toEqual([
      'binary.cu?GC_DTYPE=GC_I32&GC_OP=OpMax',
      'reduce.cu?GC_DTYPE=GC_I32&GC_REDUCE=ReduceMax',
    ]);
    expect(warmupModuleSpecs(target('sm_90'), { ops: ['exp'], dtypes: ['i32'] })).toEqual([]);
    expect(keys(warmupModuleSpecs(target('sm_90'), { ops: ['fill', 'transpose'], dtypes: ['f32', 'i32', 'f16'] }))).toEqual([
      'fill.cu',
      'transpose.cu?GC_DTYPE=GC_F32',
      'transpose.cu?GC_DTYPE=GC_F16',
    ]);
  });

  it('names every op of WARMUP_OPS once, and each selects something for some dtype', () => {
    expect(new Set(WARMUP_OPS).size).toBe(WARMUP_OPS.length);
    for (const op of WARMUP_OPS) expect(warmupModuleSpecs(target('sm_90'), { ops: [op] }).length, op).toBeGreaterThan(0);
  });

  // What the matmul tuner compiles on the first use of a product class with aligned operands.
  it.each(['sm_75', 'sm_80', 'sm_86', 'sm_90'])('has every module the matmul tuner compiles on %s for aligned operands', (arch) => {
    const listed = new Set(keys(warmupModuleSpecs(target(arch), { ops: ['matmul'] })));
    const backend = fakeBackend(arch, 0n);
    let checked = 0;
    for (const [dtype, precision] of [['f32', 'highest'], ['f32', 'tf32'], ['f16', 'highest'], ['bf16', 'highest']] as const) {
      for (const transA of [false, true]) {
        for (const transB of [false, true]) {
          const r = resolve(backend, matmulParams(dtype, precision, transA, transB));
          for (const config of tuningCandidates(r)) {
            const variant = variantFor(r, config);
            if (dynamicSharedBytes(variant) > archSharedMemoryOptin(arch)) continue;
            const { file, defines, arch: own } = kernelSource(variant);
            expect(listed, `${dtype} ${precision} ${transA}${transB}`).toContain(moduleKey({ file, defines, ...(own ? { arch: own } : {}) }));
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  // What the attention launcher picks by default, rows aligned (address 0) or not (address 8), for a
  // square problem and for decode shapes (the split-key kernel, with few and with many packed rows).
  it.each(['sm_75', 'sm_80', 'sm_86', 'sm_90'])('has the attention module the launcher picks on %s for every head dim and dtype', (arch) => {
    const listed = new Set(keys(warmupModuleSpecs(target(arch), { ops: ['attention'] })));
    const shapes = [
      { batch: 1, heads: 1, kvHeads: 1, seqQ: 128, seqK: 128 },
      { batch: 2, heads: 8, kvHeads: 2, seqQ: 1, seqK: 4096 },
      { batch: 2, heads: 8, kvHeads: 2, seqQ: 7, seqK: 4096 },
    ];
    const families = new Set<string>();
    for (const address of [0n, 8n]) {
      const backend = fakeBackend(arch, address);
      for (const dtype of ['f32', 'f16', 'bf16'] as const) {
        for (const headDim of ATTENTION_HEAD_DIMS) {
          for (const shape of shapes) {
            const params = { q: view(dtype), k: view(dtype), v: view(dtype), out: view(dtype), ...shape, headDim, scale: 1, causal: false } as AttentionParams;
            const config = defaultAttentionConfig(backend, params);
            families.add(config.family);
            const aligned = config.family !== 'simt' && address === 0n;
            expect(listed, `${dtype} D${headDim} ${config.family}`).toContain(moduleKey(attentionSpec(config, dtype, configHeadDim(config, headDim), aligned)));
          }
        }
      }
    }
    expect(families).toContain('decode');
  });
});
