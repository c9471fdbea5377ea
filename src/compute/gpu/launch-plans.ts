/**
 * Launch decisions of the CUDA ops as pure functions of shapes, dtypes and
 * alignment (so they are unit-tested without a GPU): which kernel variant,
 * and with what block and grid.
 */
import type { BroadcastPlan } from '../core/broadcast.js';
import type { ReducePlan } from '../core/reduce-plan.js';
import { dtypeSize, type DType } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';

/** Elements of one 16-byte vector access. */
export function vectorWidth(dtype: DType): number {
  return 16 / dtypeSize[dtype];
}

/**
 * Whether a view starts on a 16-byte boundary. Pool blocks start on 512-byte
 * boundaries, so only the view's element offset can misalign it.
 */
export function aligned16(view: TensorView): boolean {
  return (view.offset * dtypeSize[view.dtype]) % 16 === 0;
}

/** `'vec'` when every view is 16-byte aligned, else `'scalar'`: the kernel-name suffix. */
export function accessKind(...views: TensorView[]): 'vec' | 'scalar' {
  for (let i = 0; i < views.length; i++) if (!aligned16(views[i]!)) return 'scalar';
  return 'vec';
}

// ---------------------------------------------------------------- binary

/** The kernel and extra arguments of a broadcast binary op. */
export type BinaryLaunch =
  | { kind: 'flat'; kernel: string; n: number }
  | { kind: 'row'; kernel: string; n: number; cols: number }
  | { kind: 'general'; kernel: 'binary_general32' | 'binary_general64'; n: number; args: number[] }
  /** A general broadcast with a long last dim: `rows` rows of `cols`, a block row each. */
  | { kind: 'generalRows'; kernel: 'binary_general_rows32' | 'binary_general_rows64'; rows: number; cols: number; args: number[] };

/** Most dims the general kernel indexes. */
export const GENERAL_RANK = 6;
/** A general broadcast whose last dim is at least this long indexes per row (a block's row holds 1024). */
export const GENERAL_ROW_MIN = 256;

/**
 * The kernel names, by form and access, written out: the launchers look kernels up under these
 * strings on every launch, so they are constants rather than built per call.
 */
const BINARY_KERNELS = {
  same: { vec: 'binary_same_vec', scalar: 'binary_same_scalar' },
  scalarB: { vec: 'binary_scalar_b_vec', scalar: 'binary_scalar_b_scalar' },
  scalarA: { vec: 'binary_scalar_a_vec', scalar: 'binary_scalar_a_scalar' },
  rowB: { vec: 'binary_row_b_vec', wrap: 'binary_row_b_wrap', scalar: 'binary_row_b_scalar' },
  rowA: { vec: 'binary_row_a_vec', wrap: 'binary_row_a_wrap', scalar: 'binary_row_a_scalar' },
} as const;

export function planBinary(plan: BroadcastPlan, a: TensorView, b: TensorView, out: TensorView): BinaryLaunch {
  const n = out.size;
  switch (plan.kind) {
    case 'same':
      return { kind: 'flat', kernel: BINARY_KERNELS.same[accessKind(a, b, out)], n };
    case 'scalarB':
      return { kind: 'flat', kernel: BINARY_KERNELS.scalarB[accessKind(a, out)], n };
    case 'scalarA':
      return { kind: 'flat', kernel: BINARY_KERNELS.scalarA[accessKind(b, out)], n };
    case 'rowB':
    case 'rowA': {
      const cols = plan.outShape[plan.outShape.length - 1]!;
      if (cols < 2 ** 32) {
        const full = plan.kind === 'rowB' ? a : b;
        // Rows of whole vectors read the row in vectors too; others wrap the row per element.
        const access = cols % vectorWidth(out.dtype) === 0 ? accessKind(a, b, out) : accessKind(full, out) === 'vec' ? 'wrap' : 'scalar';
        return { kind: 'row', kernel: BINARY_KERNELS[plan.kind][access], n, cols };
      }
      return planGeneral(plan, n);
    }
    case 'general':
      return planGeneral(plan, n);
  }
}

/**
 * Dims and strides padded to six with leading 1s (dims) and 0s (strides). Below 2^31 elements
 * the 32-bit kernels take d0..d5, each dim's {@link fastDivisor} magic numbers m0..m5 and shifts
 * s0..s5, then a0..a5, b0..b5; the 64-bit kernels d0..d5, a0..a5, b0..b5.
 */
function planGeneral(plan: BroadcastPlan, n: number): BinaryLaunch {
  // Plans are cached per shape pair (core/broadcast.ts), so their launches are too.
  let launch = generalLaunches.get(plan);
  if (launch === undefined) {
    launch = generalLaunch(plan, n);
    generalLaunches.set(plan, launch);
  }
  return launch;
}

const generalLaunches = new WeakMap<BroadcastPlan, BinaryLaunch>();

function generalLaunch(plan: BroadcastPlan, n: number): BinaryLaunch {
  const pad = GENERAL_RANK - plan.outShape.length;
  const dims = [...new Array<number>(pad).fill(1), ...plan.outShape];
  const as = [...new Array<number>(pad).fill(0), ...plan.aStrides];
  const bs = [...new Array<number>(pad).fill(0), ...plan.bStrides];
  // Inputs are no larger than the output, so every offset is below n.
  const narrow = n < 2 ** 31;
  const divisors = narrow ? dims.map(fastDivisor) : [];
  const args = narrow ? [...dims, ...divisors.map((d) => d.magic), ...divisors.map((d) => d.shift), ...as, ...bs] : [...dims, ...as, ...bs];
  const cols = dims[GENERAL_RANK - 1]!;
  if (cols >= GENERAL_ROW_MIN) {
    return { kind: 'generalRows', kernel: narrow ? 'binary_general_rows32' : 'binary_general_rows64', rows: n / cols, cols, args };
  }
  return { kind: 'general', kernel: narrow ? 'binary_general32' : 'binary_general64', n, args };
}

/**
 * Magic number and shift that divide by `d` (1 ≤ d < 2^31) as `(umulhi(x, magic) + x) >> shift`,
 * exact for every x below 2^31 (Granlund and Montgomery): shift = ⌈log2 d⌉ and
 * magic = ⌊2^32 (2^shift − d) / d⌋ + 1, the quotient taken in two 16-bit steps so that
 * every intermediate stays exact in a double.
 */
export function fastDivisor(d: number): { magic: number; shift: number } {
  let shift = 0;
  while (2 ** shift < d) shift++;
  const high = (2 ** shift - d) * 2 ** 16;
  const q1 = Math.floor(high / d);
  const q2 = Math.floor(((high - q1 * d) * 2 ** 16) / d);
  return { magic: (q1 * 2 ** 16 + q2 + 1) >>> 0, shift };
}

// ---------------------------------------------------------------- rows (softmax, layerNorm)

/** A row-kernel launch: kernel name, threads per block, blocks. */
export interface RowLaunch {
  kernel: string;
  block: number;
  grid: number;
}

/** Rows longer than this go to the looped kernel (32 elements per thread × 1024 threads). */
export const MAX_CACHED_COLS = 32 * 1024;

const WARP_SCALAR_CHUNKS = [1, 2, 4, 8, 16, 32];
/** Vectors per thread a row kernel may hold, by vector width: at most 32 elements. */
const VEC_CHUNKS: Readonly<Record<number, readonly number[]>> = { 4: [1, 2, 4, 8], 8: [1, 2, 4] };
const BLOCK_SCALAR_CHUNKS = [1, 2, 4, 8, 16];

/**
 * Picks the row kernel of `kernels/row.cuh` for `prefix` (softmax, layernorm):
 * a warp per row while a row fits 32 elements per lane, else a block per row
 * holding the row in registers, else the looped kernel.
 *
 * The block shape is empirical (H200, both measured in one configuration each
 * way): 16-bit rows run best with the most elements per thread (32: bf16
 * softmax over 4096 columns 2.0 → 2.7 TB/s, 8192 columns 2.4 → 2.6 TB/s
 * against 512 threads), 32-bit rows with the fewest chunks that keep the
 * block at ≤ 512 threads (f32 4096 columns 3.7 TB/s against 3.5 with 128
 * threads of 32 elements; 8192 columns 3.7 against 3.3).
 * `vecOk`: the tensors are 16-byte aligned, so rows whose length is a multiple
 * of the vector width use 16-byte accesses. `warpSize`: the device's warp
 * (wavefront) width, 32 on NVIDIA; warp teams run 128 / warpSize rows per block.
 */
export function planRowKernel(prefix: string, rows: number, cols: number, dtype: DType, vecOk: boolean, warpSize = 32): RowLaunch {
  const width = vectorWidth(dtype);
  const vec = vecOk && cols % width === 0;
  const w = vec ? width : 1;
  const chunks = Math.ceil(cols / w);
  const access = vec ? 'vec' : 'scalar';
  const vecChunks = VEC_CHUNKS[width]!;
  const warpChoices = vec ? vecChunks : WARP_SCALAR_CHUNKS;
  const warpChunk = warpChoices.find((c) => warpSize * c >= chunks);
  if (warpChunk !== undefined) {
    return { kernel: `${prefix}_warp_${access}_${warpChunk}`, block: 128, grid: Math.ceil(rows / (128 / warpSize)) };
  }
  const choices = vec ? vecChunks : BLOCK_SCALAR_CHUNKS;
  const most = choices.at(-1)!;
  const blockChunk = dtypeSize[dtype] === 2 ? most : (choices.find((c) => Math.ceil(chunks / c) <= 512) ?? most);
  const threads = Math.ceil(Math.ceil(chunks / blockChunk) / warpSize) * warpSize;
  if (threads <= 1024) return { kernel: `${prefix}_block_${access}_${blockChunk}`, block: threads, grid: rows };
  return { kernel: `${prefix}_looped`, block: 1024, grid: rows };
}

/** Softmax rows of at most this many columns take a thread each (`softmax_thread`). */
export const SOFTMAX_THREAD_COLS = 16;

/** The one-thread-per-row softmax launch for rows of at most {@link SOFTMAX_THREAD_COLS} columns, or undefined. */
export function planThreadSoftmax(rows: number, cols: number): RowLaunch | undefined {
  if (cols > SOFTMAX_THREAD_COLS) return undefined;
  return { kernel: 'softmax_thread', block: 256, grid: Math.min(Math.ceil(rows / 256), 2 ** 20) };
}

/** A staged softmax launch: the kernel, its block, and the shared memory that holds a row in flight. */
export interface StagedRowLaunch {
  kernel: string;
  block: number;
  sharedMemBytes: number;
}

/** Rows of at least this many bytes stage the next row in shared memory (see `softmax_staged` in kernels/softmax.cu). */
export const STAGED_MIN_ROW_BYTES = 64 * 1024;

/**
 * The staged form of a `softmax_block_vec_<chunks>` launch for long rows, or undefined. A block
 * per row holding a 64 KB+ row in registers leaves at most two blocks per SM, and each idles
 * between loading its row and storing it: f32 rows of 32K columns ran at 72% of the copy roof
 * (H200). The staged kernel keeps the same block shape and streams the next row meanwhile; its
 * grid is the resident-block count, which the caller gets from the occupancy API. `_full` where
 * the row fills the block's chunks exactly (no bounds checks), `_edge` otherwise.
 */
export function planStagedSoftmax(launch: RowLaunch, cols: number, dtype: DType): StagedRowLaunch | undefined {
  if (cols * dtypeSize[dtype] < STAGED_MIN_ROW_BYTES) return undefined;
  const match = /^softmax_block_vec_(\d+)$/.exec(launch.kernel);
  if (!match) return undefined;
  const chunks = Number(match[1]);
  if (chunks * vectorWidth(dtype) !== 32) return undefined;
  const kind = launch.block * chunks * vectorWidth(dtype) === cols ? 'full' : 'edge';
  return { kernel: `softmax_staged_${kind}_${chunks}`, block: launch.block, sharedMemBytes: launch.block * chunks * 16 };
}

/** The row length of `softmax_split_3_5` (kernels/softmax.cu): 1024 threads of 12 + 20 f32 elements. */
export const SPLIT_COLS = 32 * 1024;

/**
 * The split form of an f32 row of {@link SPLIT_COLS} columns (16-byte-aligned tensors), or
 * undefined: a block of 1024 threads per row at a time, each holding 12 elements in registers and
 * 20 in shared memory (80 KB a block), so a thread needs 32 registers and two blocks share an SM,
 * where the staged kernel's 32 elements in registers leave one. It pays only with two blocks per
 * SM (the caller checks the occupancy: an A100's 164 KB of shared memory holds one) and ran
 * slower than the staged kernel at 16K columns (H200, bench/notes/ops.md). Its grid is the
 * resident-block count, as for the staged kernel.
 */
export function planSplitSoftmax(cols: number, dtype: DType, vecOk: boolean): StagedRowLaunch | undefined {
  if (dtype !== 'f32' || !vecOk || cols !== SPLIT_COLS) return undefined;
  return { kernel: 'softmax_split_3_5', block: 1024, sharedMemBytes: 1024 * 5 * 16 };
}

/**
 * A softmax over thread-block clusters (`kernels/softmax_cluster.cu`, sm_90+): `cluster` CTAs of
 * `block` threads per row, CTA r holding the columns [r·slice, (r+1)·slice), 32 per thread.
 */
export interface ClusterRowLaunch {
  block: number;
  cluster: number;
  slice: number;
}

/** Largest portable cluster (CUDA guarantees 8 CTAs; 16 needs an opt-in). */
export const MAX_CLUSTER = 8;

/** Elements each thread of `softmax_cluster` holds. */
export const CLUSTER_ELEMENTS_PER_THREAD = 32;

/**
 * The cluster launch of CTAs of `block` threads for a row of `cols`, or undefined where that needs
 * one CTA (no split) or more than {@link MAX_CLUSTER}.
 */
export function clusterSoftmaxLaunch(cols: number, dtype: DType, block: number): ClusterRowLaunch | undefined {
  const w = vectorWidth(dtype);
  const cluster = Math.ceil(cols / (block * CLUSTER_ELEMENTS_PER_THREAD));
  if (cluster < 2 || cluster > MAX_CLUSTER) return undefined;
  return { block, cluster, slice: Math.ceil(cols / cluster / w) * w };
}

/**
 * The cluster form of a softmax over vector-aligned rows longer than a block holds
 * ({@link MAX_CACHED_COLS}), or undefined: CTAs of 256 threads, up to 8, so rows up to 64K
 * columns stay in registers instead of taking the looped kernel's two passes (H200, 256 × 65536:
 * f32 2692 against 1601 GB/s, bf16 2026 against 944). Shorter rows stay on a block per row:
 * splitting them lost at every shape measured (bench/softmax-split.ts; bf16 512 × 32768: 2145 at
 * best against 2565 GB/s).
 */
export function planClusterSoftmax(cols: number, dtype: DType, vecOk: boolean): ClusterRowLaunch | undefined {
  if (!vecOk || cols % vectorWidth(dtype) !== 0 || cols <= MAX_CACHED_COLS) return undefined;
  return clusterSoftmaxLaunch(cols, dtype, 256);
}

// ---------------------------------------------------------------- reductions

/** How a reduction over [outer, axisLen, inner] runs. */
export type ReduceLaunch =
  /** An axis of at most {@link SHORT_AXIS} elements (any inner): one thread per output, `grid` blocks of 256. */
  | { kind: 'short'; grid: number }
  /** inner = 1, one warp per row, 4 rows per 128-thread block. */
  | { kind: 'rowsWarp'; grid: number }
  /** inner = 1, one block per row. */
  | { kind: 'rowsBlock'; grid: number; block: number; access: 'vec' | 'scalar' }
  /** inner = 1, few long rows: `splits` blocks per row write partials, a warp per row combines them. */
  | { kind: 'split'; splits: number; block: number; access: 'vec' | 'scalar' }
  /** One long row (a full reduction): `splits` blocks, the last to finish combines the partials. */
  | { kind: 'full'; splits: number; block: number; access: 'vec' | 'scalar' }
  /** inner > 1: block (bx, by), bx along inner, by splitting the axis. */
  | { kind: 'cols'; block: [number, number]; grid: [number, number] }
  /** inner > 1 with few columns: as 'cols', the axis also split over grid z into partials. */
  | { kind: 'colsSplit'; block: [number, number]; grid: [number, number, number] };

/**
 * What {@link planReduce} needs to know about the device and the split kernels. It reads
 * `residentBlocks` and `block` only for axes long enough to split, so a caller can make them
 * getters that load the split kernel (its occupancy gives both) on demand.
 */
export interface ReduceDevice {
  /** Blocks of the split kernel resident on the whole device at once. */
  readonly residentBlocks: number;
  /** Its block size. */
  readonly block: number;
  /** Threads per warp (wavefront); default 32. A warp-per-row launch runs 128 / warpSize rows per block. */
  warpSize?: number;
}

/** Axes this short are walked by one thread per output: a warp or a block per output would mostly idle. */
export const SHORT_AXIS = 32;
/** Rows shorter than this are never split across blocks. */
const MIN_SPLIT_LEN = 8192;
/** A full reduction shorter than this runs in one block: a split's scratch and combine cost more than they save. */
const MIN_FULL_SPLIT_LEN = 65536;
/** Fewest elements one split block should own. */
const ELEMENTS_PER_SPLIT = 4096;
/** Fewest axis elements per thread of a column split. */
const ELEMENTS_PER_COLUMN_THREAD = 16;
/** Fewest elements for which a column split (partials, then a second launch) pays. */
const MIN_COLUMN_SPLIT_ELEMENTS = 2 ** 18;
/**
 * Axis elements per thread from which a column split pays below that size too: a thread's walk
 * down the axis is serial (H200, mean over axis 0 of [2039, 41] f32: two blocks walking 255
 * rows per thread timed 21 µs against torch's 12; split, its two kernels take 7.1 µs).
 */
const MIN_COLUMN_WALK = 128;
/** Most blocks of the short-axis kernel; it strides over further outputs. */
const MAX_SHORT_GRID = 2 ** 20;

export function planReduce(plan: ReducePlan, x: TensorView, device: ReduceDevice): ReduceLaunch {
  const { outer, axisLen, inner } = plan;
  if (axisLen <= SHORT_AXIS && outer * inner > 1) return { kind: 'short', grid: Math.min(Math.ceil((outer * inner) / 256), MAX_SHORT_GRID) };
  if (inner > 1) {
    const bx = Math.min(32, nextPowerOfTwo(inner));
    const by = 256 / bx;
    const gx = Math.ceil(inner / bx);
    const gy = Math.min(outer, 65535);
    // Too few blocks to fill the device: split the axis too (column blocks are half the split kernel's size).
    const long = outer * axisLen * inner >= MIN_COLUMN_SPLIT_ELEMENTS || axisLen >= by * MIN_COLUMN_WALK;
    if (outer <= 65535 && long && gx * gy < device.residentBlocks / 2) {
      const splits = Math.min(Math.ceil((2 * device.residentBlocks) / (gx * gy)), Math.floor(axisLen / (by * ELEMENTS_PER_COLUMN_THREAD)), 65535);
      if (splits > 1) return { kind: 'colsSplit', block: [bx, by], grid: [gx, gy, splits] };
    }
    return { kind: 'cols', block: [bx, by], grid: [gx, gy] };
  }
  const rows = outer;
  const rowsAligned = rows === 1 || (axisLen * dtypeSize[x.dtype]) % 16 === 0;
  const access = rowsAligned && aligned16(x) ? 'vec' : 'scalar';
  if (axisLen >= (rows === 1 ? MIN_FULL_SPLIT_LEN : MIN_SPLIT_LEN) && rows < device.residentBlocks / 2 && rows <= 65535) {
    const splits = Math.max(1, Math.min(Math.ceil(device.residentBlocks / rows), Math.ceil(axisLen / ELEMENTS_PER_SPLIT)));
    return { kind: rows === 1 ? 'full' : 'split', splits, block: device.block, access };
  }
  if (axisLen <= 1024) return { kind: 'rowsWarp', grid: Math.ceil(rows / (128 / (device.warpSize ?? 32))) };
  return { kind: 'rowsBlock', grid: rows, block: axisLen <= 8192 ? 256 : 512, access };
}

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

// ---------------------------------------------------------------- transpose

/** Matrices with this few rows or columns skip the tiles (a 32×32 tile would be mostly empty): `GC_NARROW` of kernels/transpose.cu. */
export const NARROW_TRANSPOSE = 8;

/** A transpose launch: the tiled kernel, or one of the narrow kernels (1-D grid-stride). */
export type TransposeLaunch =
  | { kind: 'tiled'; kernel: 'transpose_tiled'; grid: [number, number, number]; block: [number, number] }
  | { kind: 'narrow'; kernel: string; grid: number; block: number };

/**
 * The transpose launch of [batch, rows, cols]: 32×32 tiles (grid y and z capped at 65535 and
 * strided by the kernel), or for a matrix of at most 8 columns (else rows) a thread per W rows
 * (columns): 16-byte accesses (`_vec`) where the tensors are `aligned` and the long dim is a
 * multiple of the vector `width`, else W = 1. The narrow kernels count groups in 32 bits, so
 * more than 2^31 of them take the tiles.
 */
export function planTranspose(batch: number, rows: number, cols: number, width: number, aligned: boolean): TransposeLaunch {
  const narrowCols = cols <= NARROW_TRANSPOSE;
  if (narrowCols || rows <= NARROW_TRANSPOSE) {
    const long = narrowCols ? rows : cols;
    const vec = aligned && long % width === 0;
    const groups = batch * (vec ? long / width : long);
    if (groups <= 2 ** 31) {
      const kernel = `transpose_narrow_${narrowCols ? 'cols' : 'rows'}_${vec ? 'vec' : 'scalar'}`;
      return { kind: 'narrow', kernel, grid: Math.max(1, Math.min(Math.ceil(groups / 256), 2 ** 20)), block: 256 };
    }
  }
  return {
    kind: 'tiled',
    kernel: 'transpose_tiled',
    grid: [Math.ceil(cols / 32), Math.min(Math.ceil(rows / 32), 65535), Math.min(batch, 65535)],
    block: [32, 8],
  };
}
