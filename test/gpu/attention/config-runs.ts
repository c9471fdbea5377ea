/**
 * Runs one attention problem through one CUDA kernel configuration with the output and the
 * log-sum-exp poisoned (NaN) beforehand, so an element the kernel fails to write shows up.
 * Shared by the GPU tests and the compute-sanitizer driver.
 */
import type { AttentionParams } from '../../../src/compute/core/attention-params.js';
import { cudaAttention } from '../../../src/compute/cuda/attention/attention.js';
import { decodeSimtRowCounts, type DecodeAttentionConfig } from '../../../src/compute/cuda/attention/attention-decode-kernels.js';
import {
  mmaTuningConfigs,
  paddedHeadDim,
  simtCandidates,
  wgmmaCandidates,
  type AttentionKernelConfig,
} from '../../../src/compute/cuda/attention/attention-kernels.js';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import type { AttentionCase, FloatDType } from '../../unit/attention/cases.js';

/**
 * The configurations worth checking for a head dim and dtype: every Hopper tile (sm_90, head dims
 * 64/128) and every mma.sync tile (sm_80+, 16-bit types) with the CUDA-core kernel's first tile
 * as the older GPUs' path, or every CUDA-core tile; then the split-key kernels with three key
 * chunks forced (the tensor-core one where it applies, the CUDA-core one at both row counts).
 * `defaultsOnly` keeps the first of each family.
 */
export function deviceConfigs(gpu: GpuCompute, headDim: number, dtype: FloatDType, defaultsOnly = false): AttentionKernelConfig[] {
  const backend = gpu.backend as unknown as CudaBackend;
  const { major, minor } = backend.device.computeCapability;
  const dp = paddedHeadDim(headDim);
  const hopper = major === 9 && minor === 0 ? wgmmaCandidates(headDim, dtype) : [];
  const mma = dtype !== 'f32' && major >= 8 ? mmaTuningConfigs(dp) : [];
  const simt = simtCandidates(dp);
  const decode: DecodeAttentionConfig[] = [
    ...(mma.length > 0 ? [{ family: 'decode', engine: 'mma', rows: 64, splits: 3 } as const] : []),
    ...decodeSimtRowCounts(dp).map((rows) => ({ family: 'decode', engine: 'simt', rows, splits: 3 }) as const),
  ];
  if (defaultsOnly) return [...hopper.slice(0, 1), ...mma.slice(0, 1), simt[0]!, decode[0]!];
  return [...(mma.length > 0 ? [...hopper, ...mma, simt[0]!] : simt), ...decode];
}

/** Runs case `c` on q, k, v with `config` into freshly poisoned outputs. */
export function runConfig(gpu: GpuCompute, c: AttentionCase, q: Tensor, k: Tensor, v: Tensor, config: AttentionKernelConfig): { out: Tensor; lse: Tensor } {
  const out = gpu.full(q.shape, Number.NaN, q.dtype);
  const lse = gpu.full(q.shape.slice(0, 3), Number.NaN, 'f32');
  const lengths = c.keyLengths ? gpu.tensor(Int32Array.from(c.keyLengths), [c.batch]) : undefined;
  const params: AttentionParams = {
    q: q.view,
    k: k.view,
    v: v.view,
    out: out.view,
    lse: lse.view,
    batch: c.batch,
    heads: c.heads,
    kvHeads: c.kvHeads,
    seqQ: c.seqQ,
    seqK: c.seqK,
    headDim: c.headDim,
    scale: c.scale ?? 1 / Math.sqrt(c.headDim),
    causal: c.causal,
  };
  if (lengths) params.keyLengths = lengths.view;
  cudaAttention(gpu.backend as unknown as CudaBackend, params, config);
  lengths?.dispose();
  return { out, lse };
}
