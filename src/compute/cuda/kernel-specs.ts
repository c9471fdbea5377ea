/**
 * Every specialisation the CUDA backend can request (the portable ones, and the CUDA-only
 * attention kernels (split-key ones included) and GRU kernels, forward and backward, and the
 * small dense ones; the cluster softmax and SVD and the matmul and Hopper kernels have compile tests of
 * their own), and the kernels each defines: what the CI compile test builds with NVRTC.
 */
import { portableKernelNames, portableModuleSpecs } from '../gpu/kernel-specs.js';
import type { ModuleSpec } from '../gpu/kernel-sources.js';
import { ATTENTION_BACKWARD_DOT, ATTENTION_BACKWARD_ENTRY, ATTENTION_BACKWARD_SOURCE, attentionBackwardModuleSpecs } from './attention/attention-backward-kernels.js';
import { DECODE_COMBINE, DECODE_ENTRY, DECODE_SOURCE } from './attention/attention-decode-kernels.js';
import { ATTENTION_ENTRY, ATTENTION_MMA_PINGPONG_SOURCE, ATTENTION_SOURCE, attentionModuleSpecs } from './attention/attention-kernels.js';
import { GRU_BACKWARD_KERNELS, GRU_BACKWARD_SPEC } from './gru/gru-backward.js';
import { GRU_ROLLOUT_CLUSTER_SOURCE, GRU_ROLLOUT_SOURCE, GRU_SEQUENCE_SOURCE, GRU_SOURCE, gruKernelNames, gruModuleSpecs } from './gru/gru-kernels.js';
import { SMALL_DENSE_KERNELS, SMALL_DENSE_SPEC, SMALL_RSVD_CLUSTER_SPEC } from './small-dense.js';

/** Every specialisation, without duplicates. */
export function allModuleSpecs(): ModuleSpec[] {
  return [...portableModuleSpecs(), ...attentionModuleSpecs(), ...attentionBackwardModuleSpecs(), ...gruModuleSpecs(), GRU_BACKWARD_SPEC, SMALL_DENSE_SPEC];
}

/** The kernels (extern "C" names) a specialisation defines; the backend launches only these. */
export function kernelNames(spec: ModuleSpec): string[] {
  switch (spec.file) {
    case ATTENTION_SOURCE.simt:
      return [ATTENTION_ENTRY.simt];
    case ATTENTION_SOURCE.mma:
    case ATTENTION_MMA_PINGPONG_SOURCE:
      return [ATTENTION_ENTRY.mma];
    case DECODE_SOURCE.simt:
      return [DECODE_ENTRY.simt, DECODE_COMBINE];
    case DECODE_SOURCE.mma:
      return [DECODE_ENTRY.mma, DECODE_COMBINE];
    case ATTENTION_BACKWARD_SOURCE.simt:
      return [ATTENTION_BACKWARD_ENTRY.simt, ATTENTION_BACKWARD_DOT];
    case ATTENTION_BACKWARD_SOURCE.mma:
      return [ATTENTION_BACKWARD_ENTRY.mma, ATTENTION_BACKWARD_DOT];
    case GRU_SOURCE:
    case GRU_ROLLOUT_SOURCE:
    case GRU_ROLLOUT_CLUSTER_SOURCE:
    case GRU_SEQUENCE_SOURCE:
      return gruKernelNames(spec);
    case GRU_BACKWARD_SPEC.file:
      return [...GRU_BACKWARD_KERNELS];
    case SMALL_DENSE_SPEC.file:
      return [...SMALL_DENSE_KERNELS];
    case SMALL_RSVD_CLUSTER_SPEC.file:
      return ['small_rsvd_cluster'];
    default:
      return portableKernelNames(spec);
  }
}
