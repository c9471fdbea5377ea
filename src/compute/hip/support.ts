/** The optional ops the HIP backend leaves out, and why: its kernels for them are CUDA-only. */
import type { OptionalOp } from '../backend/backend.js';

export const HIP_UNSUPPORTED: Readonly<Partial<Record<OptionalOp, string>>> = {
  matmul: 'its kernels use NVIDIA tensor-core instructions (mma.sync, wgmma) or cuBLAS',
  attention: 'its kernels use NVIDIA-only instructions (mma.sync, cp.async)',
  attentionBackward: 'its kernels use NVIDIA-only instructions, and the composed fallback needs matmul',
  gruRecurrence: 'its recurrence runs on matmul and CUDA-only kernels',
  gruBackwardRecurrence: 'its steps run on matmul and CUDA-only kernels',
  denseLinalg: 'cuSOLVER is CUDA-only (svd runs its dense steps on the host)',
  gruRollout: 'its one-launch rollout is a CUDA kernel (cooperative launch); a rollout runs step by step',
  recordGraph: 'hipGraph is not bound yet: gpu.capture runs the function eagerly',
  copyFromPeer: 'hipMemcpyPeer is not bound yet: x.to(gpu) goes through the host',
};
