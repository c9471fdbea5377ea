/**
 * The attention backward kernels as data: the CUDA-core kernel (`kernels/attention_backward.cu`,
 * every dtype), the tensor-core one (`kernels/attention_backward_mma.cu`, f16/bf16 on sm_80+,
 * head dims 8 to 128) and the Hopper one (`kernels/attention_backward_wgmma.cu`, f16/bf16 on
 * sm_90 at head dims that are multiples of 8 up to 128), their tiles, module defines and shared
 * memory, and the tile the launcher picks for a device. Pure functions, so they are unit-tested
 * without a GPU and drive the NVRTC compile test.
 */
import type { DType } from '../../core/dtype.js';
import type { ModuleSpec } from '../../gpu/kernel-sources.js';
import { DTYPE_CODE } from '../../gpu/kernel-specs.js';
import { ATTENTION_HEAD_DIMS } from './attention-kernels.js';

export const ATTENTION_BACKWARD_SOURCE = {
  simt: 'attention_backward.cu',
  mma: 'attention_backward_mma.cu',
  wgmma: 'attention_backward_wgmma.cu',
} as const;
/** The gradient kernel of each family. */
export const ATTENTION_BACKWARD_ENTRY = { simt: 'attention_bwd_simt', mma: 'attention_bwd_mma', wgmma: 'attention_bwd_wgmma' } as const;
/** What the simt and mma modules also define: D = rowsum(dOut ∘ out), launched first. */
export const ATTENTION_BACKWARD_DOT = 'attention_bwd_dot';
/** What the Hopper module also defines: D and the base-2 log-sum-exp per 64-row query tile, launched first. */
export const ATTENTION_BACKWARD_WGMMA_PREP = 'attention_bwd_wgmma_prep';
/** Threads per block of the CUDA-core kernel and of the dot kernel. */
export const ATTENTION_BACKWARD_THREADS = 256;
/** Largest padded head dim of the tensor-core kernel (its dK and dV accumulators live in registers). */
export const MMA_BACKWARD_MAX_HEAD_DIM = 128;

/** CUDA-core tile: BR query rows per chunk against BC keys per block. */
export interface SimtBackwardConfig {
  readonly family: 'simt';
  readonly br: number;
  readonly bc: number;
}

/** Tensor-core tile: `warps` warps of 16 keys each (BC = 16·warps) against `br` query rows per step. */
export interface MmaBackwardConfig {
  readonly family: 'mma';
  readonly warps: number;
  readonly br: number;
}

/**
 * The Hopper kernel's one tile: 128 keys per block (a consumer warpgroup of 64 each, and a
 * producer) against 64-row query tiles.
 */
export interface WgmmaBackwardConfig {
  readonly family: 'wgmma';
}

export type BackwardConfig = SimtBackwardConfig | MmaBackwardConfig | WgmmaBackwardConfig;

/** Keys per block and query rows per tile of the Hopper kernel. */
export const WGMMA_BACKWARD_KEYS = 128;
export const WGMMA_BACKWARD_ROWS = 64;
const WGMMA_BACKWARD_THREADS = 384;

/**
 * The head dim the Hopper kernel is compiled for at `headDim` (64 or 128: a smaller head dim is
 * padded up, TMA reading the columns past it as zeros), or undefined where it does not run: head
 * dims that are not multiples of 8 (TMA's rows are 16-byte multiples) or above 128 (dK and dV
 * live in registers).
 */
export function wgmmaBackwardHeadDim(headDim: number): 64 | 128 | undefined {
  if (headDim % 8 !== 0 || headDim < 8 || headDim > 128) return undefined;
  return headDim <= 64 ? 64 : 128;
}

/**
 * CUDA-core tiles, preferred first (the first whose shared memory fits the device runs): the
 * larger ones halve the dq atomics per key; the smaller fit sm_86/sm_89's 99 KiB at every head dim.
 */
export function backwardSimtCandidates(dp: number): SimtBackwardConfig[] {
  const tiles = dp <= 64 ? [[32, 64], [16, 32]] : dp <= 128 ? [[32, 32], [16, 16]] : [[16, 32], [16, 16]];
  return tiles.map(([br, bc]) => ({ family: 'simt', br: br!, bc: bc! }));
}

/** Whether the tensor-core kernel's static checks hold: the warps split dq's 16-row tiles and 16-column groups evenly. */
function mmaFits(dp: number, c: MmaBackwardConfig): boolean {
  const rowTiles = c.br / 16;
  const split = c.warps / rowTiles;
  return dp <= MMA_BACKWARD_MAX_HEAD_DIM && c.br % 16 === 0 && c.warps % rowTiles === 0 && (dp / 16) % split === 0;
}

/**
 * Tensor-core tiles, preferred first; empty above head dim 128. 128 keys per block (8 warps)
 * halve the reloads of q and dOut and the dq atomics against 64; at head dim 128, 32-row query
 * steps keep the warp's scores, dP and its dK/dV accumulators within the register file.
 */
export function backwardMmaCandidates(dp: number): MmaBackwardConfig[] {
  const tiles = dp <= 96 ? [[8, 64], [4, 64], [4, 32]] : [[8, 32], [4, 32], [4, 64]];
  return tiles.map(([warps, br]) => ({ family: 'mma' as const, warps: warps!, br: br! })).filter((c) => mmaFits(dp, c));
}

/** Dynamic shared memory of a tile, as the kernel lays it out. */
export function backwardSharedBytes(config: BackwardConfig, dp: number): number {
  if (config.family === 'wgmma') {
    const keys = WGMMA_BACKWARD_KEYS;
    const rows = WGMMA_BACKWARD_ROWS;
    // 1024 for the swizzle alignment, K and V, two stages of Q and dOut, two dSᵀ buffers, two of
    // (lse, D), the f32 dq tile, seven mbarriers.
    return 1024 + 2 * keys * dp * 2 + 2 * 2 * rows * dp * 2 + 2 * keys * rows * 2 + 2 * 2 * rows * 4 + rows * (dp + 8) * 4 + 8 * 7;
  }
  if (config.family === 'simt') {
    const lk = config.bc + 4;
    const lq = config.br + 4;
    const lp = config.bc + 1;
    return 4 * (2 * dp * lk + 2 * dp * lq + 2 * config.br * lp + 2 * config.br);
  }
  const bc = 16 * config.warps;
  const ld = dp + 8;
  return 2 * (2 * bc * ld + 4 * config.br * ld + bc * (config.br + 8)) + 16 * config.br;
}

/** Keys per block. */
export function backwardKeysPerBlock(config: BackwardConfig): number {
  if (config.family === 'wgmma') return WGMMA_BACKWARD_KEYS;
  return config.family === 'simt' ? config.bc : 16 * config.warps;
}

export function backwardThreads(config: BackwardConfig): number {
  if (config.family === 'wgmma') return WGMMA_BACKWARD_THREADS;
  return config.family === 'simt' ? ATTENTION_BACKWARD_THREADS : 32 * config.warps;
}

/**
 * The module of a tile for a dtype and padded head dim. `aligned` (mma only): rows of q, k, v and
 * dOut are whole 16-byte chunks at 16-byte-aligned addresses, so tiles load with cp.async.
 */
export function attentionBackwardSpec(config: BackwardConfig, dtype: Exclude<DType, 'i32'>, dp: number, aligned = false): ModuleSpec {
  if (config.family === 'simt') {
    return { file: ATTENTION_BACKWARD_SOURCE.simt, defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_BR: config.br, GC_BC: config.bc } };
  }
  if (dtype === 'f32') throw new RangeError('attentionBackward: the tensor-core kernels take f16 or bf16');
  if (config.family === 'wgmma') {
    if (dp !== 64 && dp !== 128) throw new RangeError(`attentionBackward: the Hopper kernel is compiled for head dims 64 and 128, not ${dp}`);
    return { file: ATTENTION_BACKWARD_SOURCE.wgmma, defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp }, arch: 'sm_90a' };
  }
  if (!mmaFits(dp, config)) throw new RangeError(`attentionBackward: ${backwardConfigName(config)} does not split head dim ${dp}`);
  return {
    file: ATTENTION_BACKWARD_SOURCE.mma,
    defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_WARPS: config.warps, GC_BR: config.br, GC_ALIGNED: aligned ? 1 : 0 },
  };
}

/**
 * Smallest head dim the tensor-core kernel takes. Below it the kernel would pad the head dim to
 * 16, and its P and dS, rounded to 16 bits before the products, are no longer averaged over
 * columns: at head dim 1 in bf16 a single cancelling element of dv or dq exceeded the 16-bit
 * bound. The CUDA-core kernel computes those in f32.
 */
export const MMA_BACKWARD_MIN_HEAD_DIM = 8;

/**
 * The tile for a problem on a device: the tensor-core kernel for f16/bf16 on sm_80 and up at
 * head dims 8 to 128 (`headDim`, the unpadded one), else the CUDA-core one; the first candidate
 * whose shared memory fits `optin` bytes; undefined when none does.
 */
export function backwardConfig(dp: number, dtype: DType, major: number, optin: number, headDim = dp): BackwardConfig | undefined {
  const tensorCores = dtype !== 'f32' && major >= 8 && headDim >= MMA_BACKWARD_MIN_HEAD_DIM;
  const candidates: BackwardConfig[] = [...(tensorCores ? backwardMmaCandidates(dp) : []), ...backwardSimtCandidates(dp)];
  return candidates.find((c) => backwardSharedBytes(c, dp) <= optin);
}

/** A short stable name, e.g. `simt 32x64`, `mma w8 br32` or `wgmma`. */
export function backwardConfigName(config: BackwardConfig): string {
  if (config.family === 'wgmma') return 'wgmma';
  return config.family === 'simt' ? `simt ${config.br}x${config.bc}` : `mma w${config.warps} br${config.br}`;
}

/** The Hopper modules (sm_90a, which CI's NVRTC 11.8 cannot build): both head dims, both 16-bit dtypes. */
export function wgmmaBackwardModuleSpecs(): ModuleSpec[] {
  return ([64, 128] as const).flatMap((dp) => (['f16', 'bf16'] as const).map((dtype) => attentionBackwardSpec({ family: 'wgmma' }, dtype, dp)));
}

/** What CI compiles: every tile of every head dim and dtype (both load paths for the tensor-core kernel); not the sm_90a kernel. */
export function attentionBackwardModuleSpecs(): ModuleSpec[] {
  return ATTENTION_HEAD_DIMS.flatMap((dp) => [
    ...(['f32', 'f16', 'bf16'] as const).flatMap((dtype) => backwardSimtCandidates(dp).map((c) => attentionBackwardSpec(c, dtype, dp))),
    ...(['f16', 'bf16'] as const).flatMap((dtype) =>
      backwardMmaCandidates(dp).flatMap((c) => [true, false].map((aligned) => attentionBackwardSpec(c, dtype, dp, aligned))),
    ),
  ]);
}
