/**
 * The attention backward kernels (`kernels/attention_backward.cu`) as data: their tiles, module
 * defines and shared memory, and the tile the launcher picks for a device. Pure functions, so
 * they are unit-tested without a GPU and drive the NVRTC compile test.
 */
import type { DType } from '../../core/dtype.js';
import type { ModuleSpec } from '../../gpu/kernel-sources.js';
import { DTYPE_CODE } from '../../gpu/kernel-specs.js';
import { ATTENTION_HEAD_DIMS } from './attention-kernels.js';

export const ATTENTION_BACKWARD_SOURCE = 'attention_backward.cu';
/** The kernels each module defines: the row dot product D = rowsum(dOut ∘ out), and the gradients. */
export const ATTENTION_BACKWARD_ENTRY = { dot: 'attention_bwd_dot', simt: 'attention_bwd_simt' } as const;
/** Threads per block of both kernels. */
export const ATTENTION_BACKWARD_THREADS = 256;

/** CUDA-core tile: BR query rows per chunk against BC keys per block. */
export interface SimtBackwardConfig {
  readonly family: 'simt';
  readonly br: number;
  readonly bc: number;
}

/**
 * CUDA-core tiles, preferred first (the first whose shared memory fits the device runs): the
 * larger ones halve the dq atomics per key; the smaller fit sm_86/sm_89's 99 KiB at every head dim.
 */
export function backwardSimtCandidates(dp: number): SimtBackwardConfig[] {
  const tiles = dp <= 64 ? [[32, 64], [16, 32]] : dp <= 128 ? [[32, 32], [16, 16]] : [[16, 32], [16, 16]];
  return tiles.map(([br, bc]) => ({ family: 'simt', br: br!, bc: bc! }));
}

/** Dynamic shared memory of a tile, as the kernel lays it out: k and v, the chunk's q and dOut (transposed), P, dS and two row vectors. */
export function backwardSharedBytes(config: SimtBackwardConfig, dp: number): number {
  const lk = config.bc + 4;
  const lq = config.br + 4;
  const lp = config.bc + 1;
  return 4 * (2 * dp * lk + 2 * dp * lq + 2 * config.br * lp + 2 * config.br);
}

/** The module of a tile for a dtype and padded head dim. */
export function attentionBackwardSpec(config: SimtBackwardConfig, dtype: Exclude<DType, 'i32'>, dp: number): ModuleSpec {
  return { file: ATTENTION_BACKWARD_SOURCE, defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_BR: config.br, GC_BC: config.bc } };
}

/** The tile for a device with `optin` bytes of shared memory per block, or undefined when none fits. */
export function backwardConfig(dp: number, optin: number): SimtBackwardConfig | undefined {
  return backwardSimtCandidates(dp).find((c) => backwardSharedBytes(c, dp) <= optin);
}

/** A short stable name, e.g. `simt 32x64`. */
export function backwardConfigName(config: SimtBackwardConfig): string {
  return `simt ${config.br}x${config.bc}`;
}

/** Every tile of every head dim and dtype: what CI compiles. */
export function attentionBackwardModuleSpecs(): ModuleSpec[] {
  return ATTENTION_HEAD_DIMS.flatMap((dp) =>
    (['f32', 'f16', 'bf16'] as const).flatMap((dtype) => backwardSimtCandidates(dp).map((c) => attentionBackwardSpec(c, dtype, dp))),
  );
}
