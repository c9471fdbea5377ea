/**
 * The attention kernels under `kernels/` as data: head-dim padding, tile configurations,
 * the module defines of each, their dynamic shared memory and the configuration the
 * launcher picks for a device. Pure functions, so they are unit-tested without a GPU and the
 * same descriptions drive the NVRTC compile test in CI.
 */
import type { DType } from '../../core/dtype.js';
import type { ModuleSpec } from '../../gpu/kernel-sources.js';
import { DTYPE_CODE } from '../../gpu/kernel-specs.js';
import { DECODE_THREADS, decodeConfigName, decodeModuleSpecs, decodeSharedBytes, decodeSpec, type DecodeAttentionConfig } from './attention-decode-kernels.js';

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
 * shared memory. `pingPong` (`attention_mma_pingpong.cu`, 8 warps, 3 stages or more): two groups
 * of four warps take turns at the tensor cores, one group's softmax running beside the other's
 * matrix products.
 */
export interface MmaAttentionConfig {
  readonly family: 'mma';
  readonly warps: number;
  readonly mTiles: number;
  readonly bc: number;
  readonly stages: number;
  readonly qInRegisters: boolean;
  readonly pingPong?: boolean;
}

/**
 * Hopper kernel (`attention_wgmma.cu`, sm_90a), warp-specialised: a producer warpgroup loads Q,
 * K and V with TMA into a `stages`-deep ring of `keyTile`-key tiles, and `consumers`
 * warpgroups of 64 query rows each run both products with wgmma, overlapping their softmax with
 * tensor-core work. Head dims that are multiples of 8 (padded to {@link wgmmaHeadDim}),
 * 16-byte-aligned rows. `persistent`: one block per SM walks the query blocks (its producer loads
 * the next one's tiles during the current one's store); otherwise one block per query block.
 */
export interface WgmmaAttentionConfig {
  readonly family: 'wgmma';
  readonly consumers: 2 | 3;
  readonly stages: number;
  /** Keys per tile: 64 to 128, a multiple of 16. */
  readonly keyTile: number;
  readonly persistent: boolean;
}

/** A kernel configuration of any family; `decode` is the split-key one of attention-decode-kernels.ts. */
export type AttentionKernelConfig = SimtAttentionConfig | MmaAttentionConfig | WgmmaAttentionConfig | DecodeAttentionConfig;

export const ATTENTION_SOURCE = { simt: 'attention_simt.cu', mma: 'attention_mma.cu', wgmma: 'attention_wgmma.cu' } as const;
export const ATTENTION_ENTRY = { simt: 'attention_simt', mma: 'attention_mma', wgmma: 'attention_wgmma' } as const;
/** The ping-pong mma.sync kernel's source; its entry is `ATTENTION_ENTRY.mma`, as the launcher expects for the family. */
export const ATTENTION_MMA_PINGPONG_SOURCE = 'attention_mma_pingpong.cu';

/** Head dims the Hopper kernel is compiled for: whole 64-column blocks of its swizzled tiles. */
export const WGMMA_HEAD_DIMS: readonly number[] = [64, 128, 192, 256];

/**
 * The compiled head dim of the Hopper kernel serving `headDim`, or undefined where it does not
 * apply: a head dim that is a multiple of 8 (TMA's 16-byte row pitch) runs padded to the next of
 * {@link WGMMA_HEAD_DIMS}, the padding read as zeros. Padded, it still beats the mma.sync kernel
 * (which pads 160 and 192 to 256 itself).
 */
export function wgmmaHeadDim(headDim: number): number | undefined {
  return headDim % 8 === 0 ? WGMMA_HEAD_DIMS.find((d) => d >= headDim) : undefined;
}

/**
 * Keys per tile of the Hopper kernel at compiled head dim `dp` (`BC` in attention_wgmma.cuh):
 * 128 up to head dim 128; above, the longest tile whose two stages of K and V fit the 227 KiB of
 * shared memory beside Q: 112 at 192, 80 at 256. H200, bf16 B4 H16 S4096, TFLOP/s by key tile
 * (64 / 80 / 96 / 112): D192 544 / 573 / 608 / 619 (causal 516 / 526 / 556 / 617), D256
 * 581 / 597 (causal 532 / 560); three stages of 64 keys lost at 192.
 */
export function wgmmaKeyTile(dp: number): number {
  return dp <= 128 ? 128 : dp <= 192 ? 112 : 80;
}

/**
 * Hopper tiles, preferred first; empty where the kernel does not apply (head dims not a multiple
 * of 8, f32). The register file holds two consumers from head dim 128 (240 registers each: O, S
 * and P of a key tile; at 256, O alone takes 128) and three at 64 (160 each). Measured on an H200
 * (bench/notes/attention.md, v3): two stages beat three at 128 and four at 64, three consumers
 * beat two at 64 (where two are candidates too, see {@link wgmmaBalanced}), and 64-key tiles lost
 * by 17% at 128.
 */
export function wgmmaCandidates(headDim: number, dtype: DType): WgmmaAttentionConfig[] {
  const dp = wgmmaHeadDim(headDim);
  if ((dtype !== 'f16' && dtype !== 'bf16') || dp === undefined) return [];
  // At 64 also two consumers: 128-row blocks balance grids that 192-row ones end in a short wave of.
  const consumerCounts: readonly (2 | 3)[] = dp === 64 ? [3, 2] : [2];
  return consumerCounts.flatMap((consumers) =>
    [true, false].map((persistent): WgmmaAttentionConfig => ({ family: 'wgmma', consumers, stages: 2, keyTile: wgmmaKeyTile(dp), persistent })),
  );
}

/** Three consumer warpgroups' speed over two at head dim 64 (H200, f16 B8 H16 S2048: 404.5 against 376.1 TFLOP/s). */
const THREE_CONSUMER_GAIN = 1.075;

/**
 * `config`, or its two-consumer form where that finishes first on `multiprocessors` SMs: every
 * block of a wave takes as long as its rows, so the time is about the waves of query blocks times
 * their rows (three consumers' rows counted at their measured gain). For few heads over long
 * sequences the 192-row blocks end in a short last wave: f16 B1 H4 S8192 D64 makes 172 of them,
 * two waves of 192 rows on 132 SMs, where 256 blocks of 128 rows take two waves of 128.
 */
export function wgmmaBalanced(config: WgmmaAttentionConfig, pairs: number, seqQ: number, multiprocessors: number): WgmmaAttentionConfig {
  if (config.consumers !== 3) return config;
  const two: WgmmaAttentionConfig = { ...config, consumers: 2 };
  const span = (c: WgmmaAttentionConfig) => Math.ceil((Math.ceil(seqQ / blockRows(c)) * pairs) / multiprocessors) * blockRows(c);
  return span(two) * THREE_CONSUMER_GAIN < span(config) ? two : config;
}

/**
 * The candidates plus the tiles the benchmark also times above head dim 128 (tuning; not launched
 * by default): every key tile from 64 to 128 in steps of 16 and two or three stages whose rings
 * fit 227 KiB of shared memory.
 */
export function wgmmaTuningConfigs(headDim: number, dtype: DType): WgmmaAttentionConfig[] {
  const candidates = wgmmaCandidates(headDim, dtype);
  const dp = wgmmaHeadDim(headDim);
  if (candidates.length === 0 || dp === undefined || dp <= 128) return candidates;
  const extra: WgmmaAttentionConfig[] = [];
  for (const stages of [2, 3]) {
    for (let keyTile = 64; keyTile <= 128; keyTile += 16) {
      const c: WgmmaAttentionConfig = { family: 'wgmma', consumers: 2, stages, keyTile, persistent: true };
      const known = candidates.some((k) => k.stages === stages && k.keyTile === keyTile);
      if (!known && attentionSharedBytes(c, dp) <= HOPPER_SHARED_BYTES) extra.push(c);
    }
  }
  return [...candidates, ...extra];
}

/** Shared memory a Hopper block may opt into (227 KiB). */
const HOPPER_SHARED_BYTES = 227 * 1024;

/** The preferred Hopper tile, or undefined where the kernel does not apply. */
export function wgmmaConfig(headDim: number, dtype: DType): WgmmaAttentionConfig | undefined {
  return wgmmaCandidates(headDim, dtype)[0];
}

/**
 * Whether the Hopper kernel should run persistent on a problem: its blocks take the query blocks
 * in a fixed (snake) order, which balances uniform items and short causal ones, but not long
 * causal ones once a head has more query blocks than half the grid (rounds of the deal then
 * straddle heads, and some blocks draw long items round after round). There one block per query
 * block, handed out by the hardware as SMs free up, wins: H200, B1 H16 S16384 D128 causal, 437
 * TFLOP/s persistent against 558; B2 H16 S8192 causal (64 query blocks per head): 1.05x SDPA
 * persistent (bench/notes/attention.md).
 */
export function wgmmaPersistent(config: WgmmaAttentionConfig, seqQ: number, causal: boolean, multiprocessors: number): boolean {
  return !causal || 2 * Math.ceil(seqQ / blockRows(config)) <= multiprocessors;
}

/** The compiled head dim serving `headDim` (the smallest listed one that holds it). */
export function paddedHeadDim(headDim: number): number {
  const dp = ATTENTION_HEAD_DIMS.find((d) => d >= headDim);
  if (dp === undefined) throw new RangeError(`attention: head dim ${headDim} above ${ATTENTION_HEAD_DIMS.at(-1)}`);
  return dp;
}

/** The head dim a configuration's kernel is compiled for when it serves `headDim`. */
export function configHeadDim(config: AttentionKernelConfig, headDim: number): number {
  return config.family === 'wgmma' ? (wgmmaHeadDim(headDim) ?? paddedHeadDim(headDim)) : paddedHeadDim(headDim);
}

/** Query rows per block. */
export function blockRows(config: AttentionKernelConfig): number {
  switch (config.family) {
    case 'simt':
      return config.br;
    case 'mma':
      return config.warps * 16 * config.mTiles;
    case 'wgmma':
      return 64 * config.consumers;
    case 'decode':
      return config.rows;
  }
}

export function threadsPerBlock(config: AttentionKernelConfig): number {
  switch (config.family) {
    case 'simt':
      return 256;
    case 'mma':
      return config.warps * 32;
    case 'wgmma':
      return 128 * (config.consumers + 1);
    case 'decode':
      return DECODE_THREADS;
  }
}

/** Dynamic shared memory of a configuration, as the kernel lays it out. */
export function attentionSharedBytes(config: AttentionKernelConfig, dp: number): number {
  if (config.family === 'decode') return decodeSharedBytes(config, dp);
  if (config.family === 'simt') {
    const lq = config.br + 4;
    const lk = config.bc + 4;
    return 4 * (dp * lq + Math.max(dp * lk, config.bc * lq) + config.bc * dp);
  }
  // Hopper: alignment, q, the k and v rings of key tiles, and the mbarriers (q's full/empty, full/empty per k and v stage).
  if (config.family === 'wgmma') return 1024 + 2 * dp * (64 * config.consumers + 2 * config.stages * config.keyTile) + 8 * (2 + 4 * config.stages);
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
 * Measured on an H200 (bench/notes/attention.md, "mma.sync v3"): at head dims 64 and 128 the
 * ping-pong kernel (two warp groups taking turns at the tensor cores, 4 stages) beats the
 * block-synchronous one by 16-17% (7% causal); it needs 204 KiB of shared memory at dp 128
 * (sm_90 only, so an sm_80 device takes the next tile) and 108 KiB at dp 64 (3 stages: 90 KiB,
 * for sm_86/sm_89).
 * Two m-tiles per warp beat one (half the shared-memory reads per flop); at dp 128 they need Q
 * re-read from shared memory to fit the registers.
 */
export function mmaCandidates(dp: number): MmaAttentionConfig[] {
  const mma = (warps: number, mTiles: number, bc: number, stages: number, qInRegisters: boolean, pingPong = false): MmaAttentionConfig => ({
    family: 'mma',
    warps,
    mTiles,
    bc,
    stages,
    qInRegisters,
    ...(pingPong ? { pingPong } : {}),
  });
  const qInRegisters = dp <= 64;
  const pingPong = dp === 64 || dp === 128 ? [mma(8, 2, 64, 4, qInRegisters, true), mma(8, 2, 64, 3, qInRegisters, true)] : [];
  if (dp <= 64) return [...pingPong, mma(4, 2, 64, 2, true), mma(4, 1, 64, 2, true), mma(2, 1, 64, 2, true)];
  if (dp <= 128) return [...pingPong, mma(4, 2, 64, 2, false), mma(4, 1, 64, 2, true), mma(4, 1, 32, 2, true), mma(2, 1, 32, 2, true)];
  return [mma(4, 1, 32, 2, true), mma(2, 1, 32, 2, true), mma(2, 1, 16, 2, true)];
}

/**
 * The candidates plus the tiles the benchmark also times at head dim 128 (tuning; not launched
 * by default): the ping-pong kernel on 32-key tiles, the one that fits an sm_80 block (139 KiB).
 */
export function mmaTuningConfigs(dp: number): MmaAttentionConfig[] {
  const extra: MmaAttentionConfig[] = dp === 128 ? [{ family: 'mma', warps: 8, mTiles: 2, bc: 32, stages: 4, qInRegisters: false, pingPong: true }] : [];
  return [...mmaCandidates(dp), ...extra];
}

/** A short stable name, e.g. `mma w4 m1 bc64 s2 qreg` or `simt 64x64`. */
export function attentionConfigName(config: AttentionKernelConfig): string {
  if (config.family === 'decode') return decodeConfigName(config);
  if (config.family === 'simt') return `simt ${config.br}x${config.bc}`;
  if (config.family === 'wgmma') return `wgmma c${config.consumers} s${config.stages} k${config.keyTile}${config.persistent ? ' persistent' : ''}`;
  return `mma w${config.warps} m${config.mTiles} bc${config.bc} s${config.stages} ${config.qInRegisters ? 'qreg' : 'qsmem'}${config.pingPong ? ' pingpong' : ''}`;
}

/**
 * The module of a configuration. `aligned` (mma and decode mma only): q/k/v rows are whole
 * 16-byte chunks at 16-byte-aligned addresses, so tiles load with cp.async.
 */
export function attentionSpec(config: AttentionKernelConfig, dtype: Exclude<DType, 'i32'>, dp: number, aligned: boolean): ModuleSpec {
  if (config.family === 'decode') return decodeSpec(config, dtype, dp, aligned);
  if (config.family === 'simt') {
    return { file: ATTENTION_SOURCE.simt, defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_BR: config.br, GC_BC: config.bc } };
  }
  if (dtype === 'f32') throw new RangeError('attention: the tensor-core kernels take f16 or bf16');
  if (config.family === 'wgmma') {
    return {
      file: ATTENTION_SOURCE.wgmma,
      defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_KEY_TILE: config.keyTile, GC_CONSUMERS: config.consumers, GC_STAGES: config.stages },
      arch: 'sm_90a',
    };
  }
  if (config.pingPong && (config.warps !== 8 || config.stages < 3)) throw new RangeError('attention: the ping-pong kernel takes 8 warps and 3 stages or more');
  return {
    file: config.pingPong ? ATTENTION_MMA_PINGPONG_SOURCE : ATTENTION_SOURCE.mma,
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

/**
 * What CI compiles with NVRTC 11.8: the first tile of every head dim and dtype of each kernel
 * source (both load paths for mma), and every split-key module; not the sm_90a kernels.
 */
export function attentionModuleSpecs(): ModuleSpec[] {
  const specs: ModuleSpec[] = [];
  for (const dp of ATTENTION_HEAD_DIMS) {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) specs.push(attentionSpec(simtCandidates(dp)[0]!, dtype, dp, false));
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const pingPong of [true, false]) {
        const first = mmaCandidates(dp).find((c) => (c.pingPong ?? false) === pingPong);
        if (first) for (const aligned of [true, false]) specs.push(attentionSpec(first, dtype, dp, aligned));
      }
    }
  }
  return [...specs, ...decodeModuleSpecs(ATTENTION_HEAD_DIMS)];
}
