/**
 * The attention kernels under `kernels/` as data: head-dim padding, tile configurations,
 * the module defines of each, their dynamic shared memory and the configuration the
 * launcher picks for a device. Pure functions, so they are unit-tested without a GPU and the
 * same descriptions drive the NVRTC compile test in CI.
 */
import type { DType } from '../dtype.js';
import type { ModuleSpec } from './kernel-sources.js';
import { DTYPE_CODE } from './kernel-specs.js';

/** Head dims the kernels are compiled for; any other dim up to 256 runs padded to the next one. */
export const ATTENTION_HEAD_DIMS = [32, 64, 80, 96, 128, 256] as const;

/** CUDA-core kernel (`attention_simt.cu`): BR query rows × BC keys per tile, 256 threads. */
export interface SimtAttentionConfig {
  readonly family: 'simt';
  readonly br: number;
  readonly bc: number;
}

/**
 * Tensor-core kernel (`attention_mma.cu`): `warps` warps of 16·`mTiles` rows each, `bc` keys
 * per tile through a `stages`-deep cp.async ring; Q fragments in registers or re-read from
 * shared memory.
 */
export interface MmaAttentionConfig {
  readonly family: 'mma';
  readonly warps: number;
  readonly mTiles: number;
  readonly bc: number;
  readonly stages: number;
  readonly qInRegisters: boolean;
}

/**
 * Hopper kernel (`attention_wgmma.cu`, sm_90a): `warpgroups` warpgroups of 64 rows, `bc`-key tiles
 * loaded with cp.async into a `stages`-deep ring, wgmma for both products. Head dims 64 and 128
 * exactly, 16-byte-aligned rows.
 */
export interface WgmmaAttentionConfig {
  readonly family: 'wgmma';
  readonly warpgroups: 1 | 2;
  readonly bc: 64 | 128;
  readonly stages: number;
}

export type AttentionKernelConfig = SimtAttentionConfig | MmaAttentionConfig | WgmmaAttentionConfig;

export const ATTENTION_SOURCE = { simt: 'attention_simt.cu', mma: 'attention_mma.cu', wgmma: 'attention_wgmma.cu' } as const;
export const ATTENTION_ENTRY = { simt: 'attention_simt', mma: 'attention_mma', wgmma: 'attention_wgmma' } as const;

/** Head dims the Hopper kernel is built for (others take the mma.sync kernel). */
export const WGMMA_HEAD_DIMS: readonly number[] = [64, 128];

/**
 * Hopper tiles, preferred first; empty where the kernel does not apply (other head dims, f32).
 * Measured on an H200 (bench/notes/attention.md): at head dim 128 two warpgroups on 128-key
 * tiles (one block per SM) beat one warpgroup on 64-key tiles (two blocks per SM) by 25%; at 64
 * one warpgroup on 128-key tiles (three blocks per SM) is fastest.
 */
export function wgmmaCandidates(headDim: number, dtype: DType): WgmmaAttentionConfig[] {
  if ((dtype !== 'f16' && dtype !== 'bf16') || !WGMMA_HEAD_DIMS.includes(headDim)) return [];
  const wgmma = (warpgroups: 1 | 2, bc: 64 | 128): WgmmaAttentionConfig => ({ family: 'wgmma', warpgroups, bc, stages: 2 });
  return headDim === 128 ? [wgmma(2, 128), wgmma(2, 64), wgmma(1, 64)] : [wgmma(1, 128), wgmma(1, 64), wgmma(2, 128)];
}

/** The preferred Hopper tile, or undefined where the kernel does not apply. */
export function wgmmaConfig(headDim: number, dtype: DType): WgmmaAttentionConfig | undefined {
  return wgmmaCandidates(headDim, dtype)[0];
}

/** The compiled head dim serving `headDim` (the smallest listed one that holds it). */
export function paddedHeadDim(headDim: number): number {
  const dp = ATTENTION_HEAD_DIMS.find((d) => d >= headDim);
  if (dp === undefined) throw new RangeError(`attention: head dim ${headDim} above ${ATTENTION_HEAD_DIMS.at(-1)}`);
  return dp;
}

/** Query rows per block. */
export function blockRows(config: AttentionKernelConfig): number {
  switch (config.family) {
    case 'simt':
      return config.br;
    case 'mma':
      return config.warps * 16 * config.mTiles;
    case 'wgmma':
      return 64 * config.warpgroups;
  }
}

export function threadsPerBlock(config: AttentionKernelConfig): number {
  switch (config.family) {
    case 'simt':
      return 256;
    case 'mma':
      return config.warps * 32;
    case 'wgmma':
      return 128 * config.warpgroups;
  }
}

/** Dynamic shared memory of a configuration, as the kernel lays it out. */
export function attentionSharedBytes(config: AttentionKernelConfig, dp: number): number {
  if (config.family === 'simt') {
    const lq = config.br + 4;
    const lk = config.bc + 4;
    return 4 * (dp * lq + Math.max(dp * lk, config.bc * lq) + config.bc * dp);
  }
  if (config.family === 'wgmma') return 1024 + 2 * dp * (64 * config.warpgroups + 2 * config.stages * config.bc);
  return 2 * (blockRows(config) + config.stages * 2 * config.bc) * (dp + 8);
}

/** CUDA-core tiles, preferred first; smaller ones fit devices with less shared memory. */
export function simtCandidates(dp: number): SimtAttentionConfig[] {
  const first = dp > 128 ? { br: 32, bc: 32 } : { br: 64, bc: 64 };
  return [first, { br: 32, bc: 32 }, { br: 16, bc: 16 }]
    .filter((c, i, all) => all.findIndex((o) => o.br === c.br && o.bc === c.bc) === i)
    .map((c) => ({ family: 'simt', ...c }));
}

/**
 * Tensor-core tiles, preferred first (the first one that fits the device's shared memory runs).
 * Measured on an H200 (bench/notes/attention.md): two m-tiles per warp beat one (half the
 * shared-memory reads per flop); at dp 128 they need Q re-read from shared memory to fit the
 * registers (`ptxas -v`: 255 registers, a 64-byte spill, still the fastest).
 */
export function mmaCandidates(dp: number): MmaAttentionConfig[] {
  const mma = (warps: number, mTiles: number, bc: number, stages: number, qInRegisters: boolean): MmaAttentionConfig => ({
    family: 'mma',
    warps,
    mTiles,
    bc,
    stages,
    qInRegisters,
  });
  if (dp <= 64) return [mma(4, 2, 64, 2, true), mma(4, 1, 64, 2, true), mma(2, 1, 64, 2, true)];
  if (dp <= 128) return [mma(4, 2, 64, 2, false), mma(4, 1, 64, 2, true), mma(4, 1, 32, 2, true), mma(2, 1, 32, 2, true)];
  return [mma(4, 1, 32, 2, true), mma(2, 1, 32, 2, true), mma(2, 1, 16, 2, true)];
}

/** The candidates plus the tiles the benchmark also times at head dims 64 and 128 (tuning; not launched by default). */
export function mmaTuningConfigs(dp: number): MmaAttentionConfig[] {
  const extra: MmaAttentionConfig[] = [
    { family: 'mma', warps: 4, mTiles: 2, bc: 64, stages: 2, qInRegisters: false },
    { family: 'mma', warps: 4, mTiles: 2, bc: 32, stages: 2, qInRegisters: false },
    { family: 'mma', warps: 8, mTiles: 2, bc: 64, stages: 2, qInRegisters: false },
    { family: 'mma', warps: 8, mTiles: 1, bc: 64, stages: 2, qInRegisters: true },
  ];
  const seen = new Set<string>();
  return [...mmaCandidates(dp), ...(dp === 64 || dp === 128 ? extra : [])].filter((c) => {
    const name = attentionConfigName(c);
    if (seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/** A short stable name, e.g. `mma w4 m1 bc64 s2 qreg` or `simt 64x64`. */
export function attentionConfigName(config: AttentionKernelConfig): string {
  if (config.family === 'simt') return `simt ${config.br}x${config.bc}`;
  if (config.family === 'wgmma') return `wgmma wg${config.warpgroups} bc${config.bc} s${config.stages}`;
  return `mma w${config.warps} m${config.mTiles} bc${config.bc} s${config.stages} ${config.qInRegisters ? 'qreg' : 'qsmem'}`;
}

/**
 * The module of a configuration. `aligned` (mma only): q/k/v rows are whole 16-byte chunks at
 * 16-byte-aligned addresses, so tiles load with cp.async.
 */
export function attentionSpec(config: AttentionKernelConfig, dtype: Exclude<DType, 'i32'>, dp: number, aligned: boolean): ModuleSpec {
  if (config.family === 'simt') {
    return { file: ATTENTION_SOURCE.simt, defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_BR: config.br, GC_BC: config.bc } };
  }
  if (dtype === 'f32') throw new RangeError('attention: the tensor-core kernels take f16 or bf16');
  if (config.family === 'wgmma') {
    return {
      file: ATTENTION_SOURCE.wgmma,
      defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_WARPGROUPS: config.warpgroups, GC_BC: config.bc, GC_STAGES: config.stages },
    };
  }
  return {
    file: ATTENTION_SOURCE.mma,
    defines: {
      GC_DTYPE: DTYPE_CODE[dtype],
      GC_HEAD_DIM: dp,
      GC_WARPS: config.warps,
      GC_M_TILES: config.mTiles,
      GC_BC: config.bc,
      GC_STAGES: config.stages,
      GC_Q_REGS: config.qInRegisters ? 1 : 0,
      GC_ALIGNED: aligned ? 1 : 0,
    },
  };
}

/** What CI compiles with NVRTC 11.8: the first tile of every head dim and dtype (both load paths for mma); not the sm_90a kernel. */
export function attentionModuleSpecs(): ModuleSpec[] {
  const specs: ModuleSpec[] = [];
  for (const dp of ATTENTION_HEAD_DIMS) {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) specs.push(attentionSpec(simtCandidates(dp)[0]!, dtype, dp, false));
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const aligned of [true, false]) specs.push(attentionSpec(mmaCandidates(dp)[0]!, dtype, dp, aligned));
    }
  }
  return specs;
}
