/**
 * Runs one attention backward problem through one CUDA kernel configuration, with dk and dv
 * poisoned (NaN) beforehand so an element the kernel fails to write shows up (dq is an
 * accumulator the launcher zeroes). Shared by the GPU tests and the compute-sanitizer driver.
 */
import type { AttentionBackwardParams } from '../../../src/compute/core/attention-backward-params.js';
import { cudaAttentionBackward } from '../../../src/compute/cuda/attention/attention-backward.js';
import {
  backwardMmaCandidates,
  backwardSharedBytes,
  backwardSimtCandidates,
  MMA_BACKWARD_MIN_HEAD_DIM,
  wgmmaBackwardHeadDim,
  type BackwardConfig,
} from '../../../src/compute/cuda/attention/attention-backward-kernels.js';
import { paddedHeadDim } from '../../../src/compute/cuda/attention/attention-kernels.js';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import type { AttentionCase, FloatDType } from '../../unit/attention/cases.js';

/**
 * Every configuration this device runs for a head dim and dtype: the Hopper kernel (sm_90, 16-bit,
 * head dims that are multiples of 8 up to 128; the tests' fresh tensors have aligned rows), the
 * tensor-core tiles (sm_80+, 16-bit, head dims 8 to 128), then the CUDA-core ones.
 */
export function backwardDeviceConfigs(gpu: GpuCompute, headDim: number, dtype: FloatDType): BackwardConfig[] {
  const backend = gpu.backend as unknown as CudaBackend;
  const { major, minor } = backend.device.computeCapability;
  const dp = paddedHeadDim(headDim);
  const optin = backend.device.sharedMemoryPerBlockOptin;
  const hopperDim = dtype !== 'f32' && major === 9 && minor === 0 ? wgmmaBackwardHeadDim(headDim) : undefined;
  const hopper: BackwardConfig[] = hopperDim !== undefined && backwardSharedBytes({ family: 'wgmma' }, hopperDim) <= optin ? [{ family: 'wgmma' }] : [];
  const mma = dtype !== 'f32' && major >= 8 && headDim >= MMA_BACKWARD_MIN_HEAD_DIM ? backwardMmaCandidates(dp) : [];
  return [...hopper, ...[...mma, ...backwardSimtCandidates(dp)].filter((c) => backwardSharedBytes(c, dp) <= optin)];
}

/** The backward of case `c` with `config`, from the forward's `out` and `lse`, into fresh (dk, dv poisoned) gradients. */
export function runBackwardConfig(
  gpu: GpuCompute,
  c: AttentionCase,
  t: { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor },
  out: Tensor,
  lse: Tensor,
  config: BackwardConfig,
): { dq: Tensor; dk: Tensor; dv: Tensor } {
  const dq = gpu.full(t.q.shape, Number.NaN, t.q.dtype);
  const dk = gpu.full(t.k.shape, Number.NaN, t.k.dtype);
  const dv = gpu.full(t.v.shape, Number.NaN, t.v.dtype);
  const lengths = c.keyLengths ? gpu.tensor(Int32Array.from(c.keyLengths), [c.batch]) : undefined;
  const params: AttentionBackwardParams = {
    q: t.q.view,
    k: t.k.view,
    v: t.v.view,
    out: out.view,
    lse: lse.view,
    dOut: t.dOut.view,
    dq: dq.view,
    dk: dk.view,
    dv: dv.view,
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
  cudaAttentionBackward(gpu.backend as unknown as CudaBackend, params, config);
  lengths?.dispose();
  return { dq, dk, dv };
}
