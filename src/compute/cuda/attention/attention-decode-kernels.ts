/**
 * The split-key ("flash-decoding") attention kernels as data: when a problem takes them, how its
 * keys are split, their modules and shared memory. Pure functions, unit-tested without a GPU; the
 * launcher is attention-decode.ts.
 *
 * Few query rows against many keys launch only batch·heads blocks of the ordinary kernels, each
 * walking every key alone. These kernels (`kernels/attention_decode*.cu`) instead give a block
 * one k/v head, a tile of the query rows that read it (the rows of all its q heads, packed: so
 * grouped-query heads share each K/V read) and one chunk of its keys; each block writes its rows'
 * partial softmax state and a second kernel merges the chunks.
 */
import type { DType } from '../../core/dtype.js';
import type { ModuleSpec } from '../../gpu/kernel-sources.js';
import { DTYPE_CODE } from '../../gpu/kernel-specs.js';

/** `simt`: CUDA cores, every dtype (`attention_decode.cu`); `mma`: tensor cores, f16/bf16 on sm_80+ (`attention_decode_mma.cu`). */
export type DecodeEngine = 'simt' | 'mma';

/**
 * A split-key kernel configuration: its engine, the packed query rows a block owns, and (to force
 * it, as tests do) the number of key chunks; without `splits` the launcher sizes the chunks to
 * fill the device ({@link decodePlan}).
 */
export interface DecodeAttentionConfig {
  readonly family: 'decode';
  readonly engine: DecodeEngine;
  readonly rows: number;
  readonly splits?: number;
}

/** The problem dimensions the route and the split depend on. */
export interface DecodeShape {
  readonly batch: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly seqQ: number;
  readonly seqK: number;
  readonly causal: boolean;
}

/** How a problem is cut: row tiles per k/v head, key chunks and keys per chunk (the last one may be shorter). */
export interface DecodePlan {
  readonly rowTiles: number;
  readonly splits: number;
  readonly chunk: number;
}

export const DECODE_SOURCE = { simt: 'attention_decode.cu', mma: 'attention_decode_mma.cu' } as const;
export const DECODE_ENTRY = { simt: 'attention_decode', mma: 'attention_decode_mma' } as const;
/** The kernel that merges the chunks' partial results (in both modules). */
export const DECODE_COMBINE = 'attention_decode_combine';
/** Threads of a split-key block (four warps). */
export const DECODE_THREADS = 128;
/** Threads of a combine block: a warp per query row. */
export const DECODE_COMBINE_THREADS = 256;
/** Query rows per block of the tensor-core kernel: four warps of 16. */
export const DECODE_MMA_ROWS = 64;
/** Most packed query rows (q heads per k/v head × seqQ) a problem may have to be routed here. */
export const DECODE_MAX_ROWS = 256;
/** Fewest keys a problem must see to be routed here: shorter walks gain nothing from a split. */
export const DECODE_MIN_KEYS = 512;
/** Fewest keys per chunk the launcher chooses, so each block's work outweighs its partial's write and merge. */
export const DECODE_MIN_SPLIT_KEYS = 256;
/** Chunks are a multiple of this many keys (the tensor-core kernel's key tile) unless `splits` is forced. */
export const DECODE_KEY_ALIGN = 64;
/** Blocks per SM the split aims at: two of either kernel are resident on an SM from sm_80. */
const BLOCKS_PER_SM = 2;

/** Packed query rows of one k/v head: its q heads' rows, `heads / kvHeads · seqQ`. */
export function decodeGroupRows(shape: DecodeShape): number {
  return (shape.heads / shape.kvHeads) * shape.seqQ;
}

/** Keys any query row may see: all of them, or under the causal mask (top-left) the first seqQ. */
export function decodeKeyExtent(shape: DecodeShape): number {
  return shape.causal ? Math.min(shape.seqK, shape.seqQ) : shape.seqK;
}

/**
 * Whether `shape` runs split-key by default: at most {@link DECODE_MAX_ROWS} packed rows per k/v
 * head, at least {@link DECODE_MIN_KEYS} keys to see, and the ordinary kernel (query blocks of
 * `normalBlockRows`) would either launch fewer than two blocks per SM or leave three quarters of
 * each block's rows empty. Causal problems never qualify: their rows see at most seqQ keys.
 */
export function decodeRouted(shape: DecodeShape, normalBlockRows: number, multiprocessors: number): boolean {
  if (decodeGroupRows(shape) > DECODE_MAX_ROWS || decodeKeyExtent(shape) < DECODE_MIN_KEYS) return false;
  const normalBlocks = Math.ceil(shape.seqQ / normalBlockRows) * shape.batch * shape.heads;
  return normalBlocks < BLOCKS_PER_SM * multiprocessors || 4 * shape.seqQ <= normalBlockRows;
}

/**
 * The cut of `shape` for blocks of `rowsPerBlock` rows: enough key chunks for about two blocks per
 * SM, each of at least {@link DECODE_MIN_SPLIT_KEYS} keys and a multiple of
 * {@link DECODE_KEY_ALIGN}; or, when `splits` is given, that many chunks of equal length (fewer
 * when there are fewer keys).
 */
export function decodePlan(shape: DecodeShape, rowsPerBlock: number, multiprocessors: number, splits?: number): DecodePlan {
  if (splits !== undefined && !(Number.isInteger(splits) && splits >= 1)) {
    throw new RangeError(`attention: key splits must be a positive integer, got ${splits}`);
  }
  const rowTiles = Math.ceil(decodeGroupRows(shape) / rowsPerBlock);
  const extent = decodeKeyExtent(shape);
  const blocks = shape.batch * shape.kvHeads * rowTiles;
  const wanted = splits ?? Math.min(Math.ceil((BLOCKS_PER_SM * multiprocessors) / blocks), Math.floor(extent / DECODE_MIN_SPLIT_KEYS));
  const n = Math.min(Math.max(1, wanted), extent);
  const even = Math.ceil(extent / n);
  const chunk = splits === undefined ? Math.ceil(even / DECODE_KEY_ALIGN) * DECODE_KEY_ALIGN : even;
  return { rowTiles, splits: Math.ceil(extent / chunk), chunk };
}

/**
 * The row counts the CUDA-core kernel is built for at head dim `dp`: 4, and as many as its
 * registers hold (each lane keeps rows · ⌈dp/32⌉ output columns).
 */
export function decodeSimtRowCounts(dp: number): readonly [number, number] {
  return [4, dp > 128 ? 8 : 16];
}

/** The configuration of `engine` for `groupRows` packed rows at head dim `dp`, `splits` forced or not. */
export function decodeConfig(engine: DecodeEngine, groupRows: number, dp: number, splits?: number): DecodeAttentionConfig {
  const [few, many] = decodeSimtRowCounts(dp);
  const rows = engine === 'mma' ? DECODE_MMA_ROWS : groupRows <= few ? few : many;
  return { family: 'decode', engine, rows, ...(splits === undefined ? {} : { splits }) };
}

/** Keys per tile of the tensor-core kernel (GC_BC in attention_decode_mma.cu). */
function mmaKeyTile(dp: number): number {
  return dp > 128 ? 32 : 64;
}

/** Dynamic shared memory: the tensor-core kernel's Q tile and two stages of K and V tiles (16-bit, rows padded by 8); none for the CUDA-core kernel. */
export function decodeSharedBytes(config: DecodeAttentionConfig, dp: number): number {
  return config.engine === 'mma' ? 2 * (DECODE_MMA_ROWS + 2 * 2 * mmaKeyTile(dp)) * (dp + 8) : 0;
}

/** A short stable name, e.g. `decode mma` or `decode simt r16 s3`. */
export function decodeConfigName(config: DecodeAttentionConfig): string {
  const rows = config.engine === 'simt' ? ` r${config.rows}` : '';
  return `decode ${config.engine}${rows}${config.splits === undefined ? '' : ` s${config.splits}`}`;
}

/**
 * The module of a configuration. `aligned` (mma only): q, k, v rows are whole 16-byte chunks at
 * 16-byte-aligned addresses, so tiles load with cp.async (the CUDA-core kernel takes its
 * alignment as an argument).
 */
export function decodeSpec(config: DecodeAttentionConfig, dtype: Exclude<DType, 'i32'>, dp: number, aligned: boolean): ModuleSpec {
  if (config.engine === 'simt') {
    const counts = decodeSimtRowCounts(dp);
    if (!counts.includes(config.rows)) throw new RangeError(`attention: the CUDA-core split-key kernel at head dim ${dp} takes ${counts.join(' or ')} rows`);
    return { file: DECODE_SOURCE.simt, defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_ROWS: config.rows } };
  }
  if (dtype === 'f32') throw new RangeError('attention: the tensor-core split-key kernel takes f16 or bf16');
  if (config.rows !== DECODE_MMA_ROWS) throw new RangeError(`attention: the tensor-core split-key kernel takes ${DECODE_MMA_ROWS} rows`);
  return { file: DECODE_SOURCE.mma, defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_HEAD_DIM: dp, GC_ALIGNED: aligned ? 1 : 0 } };
}

/** Every module of the split-key kernels at the head dims `dps`: both row counts of the CUDA-core one per dtype, both load paths of the tensor-core one. */
export function decodeModuleSpecs(dps: readonly number[]): ModuleSpec[] {
  const specs: ModuleSpec[] = [];
  for (const dp of dps) {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      for (const rows of decodeSimtRowCounts(dp)) specs.push(decodeSpec({ family: 'decode', engine: 'simt', rows }, dtype, dp, false));
    }
    for (const dtype of ['f16', 'bf16'] as const) {
      for (const aligned of [true, false]) specs.push(decodeSpec(decodeConfig('mma', 1, dp), dtype, dp, aligned));
    }
  }
  return specs;
}
