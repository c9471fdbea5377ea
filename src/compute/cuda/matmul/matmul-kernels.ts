/**
 * The matmul kernel variants under `kernels/` as data: the tile configurations each family
 * offers the autotuner, the module defines that specialise a source file for one variant,
 * and the launch shape (grid, block, dynamic shared memory) of a variant for a problem.
 * Pure functions of their inputs, so they are unit-tested without a GPU and the same
 * descriptions drive the NVRTC compile test in CI.
 */
import { DTYPE_CODE } from '../../gpu/kernel-specs.js';
import type { ModuleSpec } from '../../gpu/kernel-sources.js';
import type { MatmulActivation } from '../../core/matmul-plan.js';
import type { DType } from '../../core/dtype.js';

/**
 * Kernel families: CUDA-core SIMT (f32 and the pre-sm_80 fallback), mma.sync tensor cores
 * (sm_80+), and wgmma with TMA and warp specialisation (sm_90a).
 */
export type MatmulFamily = 'simt' | 'mma' | 'wgmma';

/** A SIMT tile: block BM×BN×BK, warp WM×WN, thread TM×TN; `minBlocks` resident blocks per SM asked of the compiler. */
export interface SimtConfig {
  readonly family: 'simt';
  readonly minBlocks: number;
  readonly bm: number;
  readonly bn: number;
  readonly bk: number;
  readonly wm: number;
  readonly wn: number;
  readonly tm: number;
  readonly tn: number;
}

/** A tensor-core tile: block BM×BN×BK over a WARPS_M×WARPS_N warp grid, STAGES-deep cp.async ring. */
export interface MmaConfig {
  readonly family: 'mma';
  readonly bm: number;
  readonly bn: number;
  readonly bk: number;
  readonly warpsM: number;
  readonly warpsN: number;
  readonly stages: number;
}

/**
 * A Hopper tile: 128 × BN, STAGES-deep TMA ring, and CTAs per cluster (2: vertically adjacent
 * tiles share their B tile by TMA multicast). Two consumer warpgroups either split every tile
 * (64 rows each) or, with `pingpong` (BN 128 only), take whole tiles in turn so that one's
 * epilogue runs under the other's MMAs.
 */
export interface WgmmaConfig {
  readonly family: 'wgmma';
  readonly bn: 128 | 256;
  readonly stages: number;
  readonly cluster: 1 | 2;
  readonly pingpong?: boolean;
}

export type MatmulConfig = SimtConfig | MmaConfig | WgmmaConfig;

/** Element type the tensor cores multiply: the storage dtype, or tf32 for f32 storage. */
export type MmaInput = 'f16' | 'bf16' | 'tf32';

/** Everything that selects one compiled module. */
export interface MatmulVariant {
  readonly config: MatmulConfig;
  /** Storage dtype of A, B, C, bias and out. */
  readonly dtype: Exclude<DType, 'i32'>;
  readonly transA: boolean;
  readonly transB: boolean;
  /** A's (B's) contiguous extent is a multiple of 16 bytes and its base 16-byte aligned. */
  readonly alignA: boolean;
  readonly alignB: boolean;
  /** out, C and bias allow the SIMT kernel's 16-byte epilogue accesses (see {@link epilogueVectorOk}); the tensor-core kernels stage their epilogue through shared memory and ignore it. */
  readonly vecC: boolean;
}

/** Activation codes of `kernels/matmul_epilogue.cuh` (GC_ACT_*). */
export const ACTIVATION_CODES: Record<MatmulActivation | 'none', number> = {
  none: 0,
  relu: 1,
  gelu: 2,
  geluTanh: 3,
  silu: 4,
  sigmoid: 5,
  tanh: 6,
};

/**
 * SIMT candidates, largest tile first. 128 × 128 × 8 with two blocks per SM beat 128 × 128 × 16
 * (one block), 128 × 256, 256 × 128 and 64 × 32 warp tiles at 4096 and 8192 (H200, see
 * bench/notes/matmul.md), so those were dropped.
 */
export const SIMT_CONFIGS: readonly SimtConfig[] = [
  { family: 'simt', bm: 128, bn: 128, bk: 8, wm: 32, wn: 64, tm: 8, tn: 8, minBlocks: 2 },
  { family: 'simt', bm: 128, bn: 64, bk: 16, wm: 64, wn: 32, tm: 8, tn: 8, minBlocks: 2 },
  { family: 'simt', bm: 64, bn: 64, bk: 16, wm: 32, wn: 32, tm: 8, tn: 4, minBlocks: 1 },
  { family: 'simt', bm: 64, bn: 64, bk: 16, wm: 32, wn: 32, tm: 8, tn: 4, minBlocks: 4 },
  { family: 'simt', bm: 32, bn: 32, bk: 16, wm: 16, wn: 32, tm: 4, tn: 4, minBlocks: 1 },
];

/** Tensor-core candidates for 16-bit inputs, largest tile first. */
export const MMA16_CONFIGS: readonly MmaConfig[] = [
  { family: 'mma', bm: 128, bn: 256, bk: 32, warpsM: 2, warpsN: 4, stages: 4 },
  { family: 'mma', bm: 128, bn: 256, bk: 64, warpsM: 2, warpsN: 4, stages: 4 },
  { family: 'mma', bm: 256, bn: 128, bk: 32, warpsM: 4, warpsN: 2, stages: 3 },
  { family: 'mma', bm: 128, bn: 128, bk: 32, warpsM: 2, warpsN: 2, stages: 4 },
  { family: 'mma', bm: 128, bn: 128, bk: 64, warpsM: 2, warpsN: 2, stages: 3 },
  { family: 'mma', bm: 64, bn: 64, bk: 32, warpsM: 2, warpsN: 2, stages: 3 },
];

/** Tensor-core candidates for tf32 (f32 storage: half the k depth per byte). */
export const MMA_TF32_CONFIGS: readonly MmaConfig[] = [
  { family: 'mma', bm: 128, bn: 256, bk: 16, warpsM: 2, warpsN: 4, stages: 4 },
  { family: 'mma', bm: 128, bn: 128, bk: 32, warpsM: 2, warpsN: 2, stages: 3 },
  { family: 'mma', bm: 128, bn: 128, bk: 16, warpsM: 2, warpsN: 2, stages: 4 },
  { family: 'mma', bm: 64, bn: 64, bk: 32, warpsM: 2, warpsN: 2, stages: 3 },
];

/** Hopper candidates (16-bit and tf32 alike: a stage is 128 bytes of k per row), largest tile first. */
export const WGMMA_CONFIGS: readonly WgmmaConfig[] = [
  { family: 'wgmma', bn: 256, stages: 4, cluster: 2 },
  { family: 'wgmma', bn: 256, stages: 4, cluster: 1 },
  { family: 'wgmma', bn: 128, stages: 6, cluster: 2, pingpong: true },
  { family: 'wgmma', bn: 128, stages: 6, cluster: 1, pingpong: true },
  { family: 'wgmma', bn: 128, stages: 6, cluster: 2 },
  { family: 'wgmma', bn: 128, stages: 6, cluster: 1 },
  { family: 'wgmma', bn: 128, stages: 4, cluster: 1 },
];

/** Rows of every wgmma block tile. */
export const WGMMA_BM = 128;
/** Shared memory of the wgmma epilogue: a 64 × (32 + 8) f32 buffer per consumer warpgroup. */
const WGMMA_EPILOGUE_BYTES = 2 * 64 * 40 * 4;

/** `GPUCOMPUTE_MATMUL_WGMMA=0` turns the Hopper path off (the mma.sync kernels and cuBLAS remain). */
export function wgmmaEnabled(): boolean {
  return process.env.GPUCOMPUTE_MATMUL_WGMMA !== '0';
}

/** The module of a variant (its arch is 'sm_90a' for wgmma's Hopper-only instructions) and its entry point. */
export interface KernelSource extends ModuleSpec {
  readonly file: 'matmul_f32.cu' | 'matmul_tc.cu' | 'matmul_wgmma.cu';
  readonly entry: 'matmul_f32' | 'matmul_tc' | 'matmul_wgmma';
  readonly defines: Readonly<Record<string, number | string>>;
}

/** The module that implements `variant`. */
export function kernelSource(variant: MatmulVariant): KernelSource {
  const { config } = variant;
  if (config.family === 'simt') {
    const vec = variant.dtype === 'f32';
    return {
      file: 'matmul_f32.cu',
      entry: 'matmul_f32',
      defines: {
        GC_DTYPE: DTYPE_CODE[variant.dtype],
        GC_BM: config.bm,
        GC_BN: config.bn,
        GC_BK: config.bk,
        GC_WM: config.wm,
        GC_WN: config.wn,
        GC_TM: config.tm,
        GC_TN: config.tn,
        GC_MIN_BLOCKS: config.minBlocks,
        GC_TRANS_A: bit(variant.transA),
        GC_TRANS_B: bit(variant.transB),
        GC_VEC_A: bit(vec && variant.alignA),
        GC_VEC_B: bit(vec && variant.alignB),
        GC_VEC_C: bit(vec && variant.vecC),
      },
    };
  }
  if (config.family === 'wgmma') {
    return {
      file: 'matmul_wgmma.cu',
      entry: 'matmul_wgmma',
      arch: 'sm_90a',
      defines: {
        GC_WG_TYPE: DTYPE_CODE[variant.dtype],
        GC_BN: config.bn,
        GC_STAGES: config.stages,
        GC_CLUSTER: config.cluster,
        GC_PINGPONG: config.pingpong ? 1 : 0,
        GC_TRANS_A: bit(variant.transA),
        GC_TRANS_B: bit(variant.transB),
      },
    };
  }
  return {
    file: 'matmul_tc.cu',
    entry: 'matmul_tc',
    defines: {
      GC_TC_TYPE: DTYPE_CODE[variant.dtype],
      GC_BM: config.bm,
      GC_BN: config.bn,
      GC_BK: config.bk,
      GC_WARPS_M: config.warpsM,
      GC_WARPS_N: config.warpsN,
      GC_STAGES: config.stages,
      GC_TRANS_A: bit(variant.transA),
      GC_TRANS_B: bit(variant.transB),
      GC_ALIGN_A: bit(variant.alignA),
      GC_ALIGN_B: bit(variant.alignB),
    },
  };
}

/** Threads per block of a configuration. */
export function blockThreads(config: MatmulConfig): number {
  switch (config.family) {
    case 'simt':
      return (config.bm / config.wm) * (config.bn / config.wn) * 32;
    case 'mma':
      return config.warpsM * config.warpsN * 32;
    case 'wgmma':
      return 384; // a producer and two consumer warpgroups
  }
}

/** Rows and columns of a configuration's block tile. */
export function blockTile(config: MatmulConfig): { bm: number; bn: number } {
  return config.family === 'wgmma' ? { bm: WGMMA_BM, bn: config.bn } : { bm: config.bm, bn: config.bn };
}

/**
 * Dynamic shared memory of a variant in bytes (the SIMT kernel's is static: 0). Mirrors the
 * padded stage layout of `matmul_tc.cu`: rows padded by 16 bytes (32 for m/n-contiguous tf32).
 */
export function dynamicSharedBytes(variant: MatmulVariant): number {
  const { config } = variant;
  if (config.family === 'simt') return 0;
  // wgmma: 1024 bytes to align the ring, 128-byte rows of A (128) and B (bn) per stage, the two
  // consumers' 64 × 40 f32 epilogue buffers, two mbarriers per stage.
  if (config.family === 'wgmma') return 1024 + config.stages * (WGMMA_BM + config.bn) * 128 + WGMMA_EPILOGUE_BYTES + 16 * config.stages;
  const elem = variant.dtype === 'f32' ? 4 : 2;
  const chunk = 16 / elem;
  const padX = variant.dtype === 'f32' ? 8 : chunk;
  const aKMajor = !variant.transA;
  const bKMajor = variant.transB;
  const aStage = aKMajor ? config.bm * (config.bk + chunk) : config.bk * (config.bm + padX);
  const bStage = bKMajor ? config.bn * (config.bk + chunk) : config.bk * (config.bn + padX);
  return config.stages * (aStage + bStage) * elem;
}

/** Output tiles of a configuration for an m × n product. */
export function tileCount(config: MatmulConfig, m: number, n: number): number {
  const { bm, bn } = blockTile(config);
  return Math.ceil(m / bm) * Math.ceil(n / bn);
}

/**
 * Grid, block and dynamic shared memory of a launch of `variant` over `batch` m × n products.
 * One block per tile and blockIdx.z per batch entry, except for the persistent Hopper kernel:
 * one block per tile of every entry (whole clusters), at most `residentBlocks` (what fits on
 * the device at once).
 */
export function launchShape(
  variant: MatmulVariant,
  m: number,
  n: number,
  batch: number,
  residentBlocks = Number.POSITIVE_INFINITY,
): { grid: [number, number, number]; block: number; sharedMemBytes: number } {
  const { config } = variant;
  let grid: [number, number, number] = [tileCount(config, m, n), 1, batch];
  if (config.family === 'wgmma') {
    const clusterTiles = Math.ceil(m / (WGMMA_BM * config.cluster)) * Math.ceil(n / config.bn) * batch;
    grid = [Math.max(1, Math.min(clusterTiles, Math.floor(residentBlocks / config.cluster))) * config.cluster, 1, 1];
  }
  return { grid, block: blockThreads(config), sharedMemBytes: dynamicSharedBytes(variant) };
}

/**
 * Whether an operand can be read in 16-byte pieces: its contiguous extent (elements per row
 * as stored) fills whole pieces and its first element is 16-byte aligned.
 */
export function operandAligned(address: bigint, contiguousExtent: number, elementBytes: number): boolean {
  return address % 16n === 0n && (contiguousExtent * elementBytes) % 16 === 0;
}

/**
 * Whether the SIMT f32 epilogue may access out/C/bias 4 elements at a time: n a multiple of 4
 * and every base 16-byte aligned.
 */
export function epilogueVectorOk(n: number, addresses: readonly bigint[]): boolean {
  return n % 4 === 0 && addresses.every((p) => p % 16n === 0n);
}

/** A short stable name of a configuration, e.g. `mma128x256x32w2x4s4`, for logs and the autotune file. */
export function configName(config: MatmulConfig): string {
  switch (config.family) {
    case 'simt':
      return `simt${config.bm}x${config.bn}x${config.bk}w${config.wm}x${config.wn}t${config.tm}x${config.tn}m${config.minBlocks}`;
    case 'mma':
      return `mma${config.bm}x${config.bn}x${config.bk}w${config.warpsM}x${config.warpsN}s${config.stages}`;
    case 'wgmma':
      return `wgmma128x${config.bn}s${config.stages}${config.cluster > 1 ? `c${config.cluster}` : ''}${config.pingpong ? 'p' : ''}`;
  }
}

/** The candidate configurations for a family and storage dtype. */
export function candidateConfigs(family: MatmulFamily, dtype: 'f32' | 'f16' | 'bf16'): readonly MatmulConfig[] {
  switch (family) {
    case 'simt':
      return SIMT_CONFIGS;
    case 'mma':
      return dtype === 'f32' ? MMA_TF32_CONFIGS : MMA16_CONFIGS;
    case 'wgmma':
      return WGMMA_CONFIGS;
  }
}

/**
 * The configuration used without autotuning: in the families' order of preference, the largest
 * tile that still gives every SM at least one block; else the smallest tile of the last family
 * (small products are latency-bound: more, smaller blocks finish sooner).
 */
export function heuristicConfig(
  families: readonly MatmulFamily[],
  dtype: 'f32' | 'f16' | 'bf16',
  m: number,
  n: number,
  batch: number,
  multiprocessors: number,
): MatmulConfig {
  for (const family of families) {
    for (const config of candidateConfigs(family, dtype)) {
      if (tileCount(config, m, n) * batch >= multiprocessors) return config;
    }
  }
  const last = candidateConfigs(families[families.length - 1]!, dtype);
  return last[last.length - 1]!;
}

function bit(b: boolean): number {
  return b ? 1 : 0;
}
