/**
 * Which recurrence path a CUDA GRU layer takes, and how the persistent and fused kernels
 * (`kernels/gru.cu`) are laid out for a shape: pure functions of the shape and the device limits,
 * so they are unit-tested without a GPU.
 */
import type { DType } from '../../core/dtype.js';

/** Threads per block of the persistent kernel (GRU_THREADS in gru.cu). */
export const PERSISTENT_THREADS = 256;
/** Columns of h staged per round (GRU_KC in gru.cu). */
const KC = 16;

/** How the persistent kernel is launched for one shape. */
export interface PersistentPlan {
  /** Batch rows per thread (the kernel gru_persistent_tb<tb>). */
  tb: 2 | 8;
  /** Hidden units per block. */
  units: number;
  blocks: number;
  sharedBytes: number;
}

/** Dynamic shared memory of the persistent kernel (its layout in gru.cu). */
export function persistentSharedBytes(hidden: number, units: number, tb: number): number {
  const rows3 = 3 * units;
  const batchTile = (PERSISTENT_THREADS / units) * tb;
  const head = Math.ceil((hidden * rows3 + 2 * rows3) / 4) * 4;
  return 4 * (head + 2 * KC * (batchTile + 4));
}

/**
 * The persistent launch for E members, B rows and H units, or undefined when it does not fit:
 * the fewest units per block (most blocks) whose slices fit in `sharedLimit` bytes with every
 * block resident (`residentBlocks(shared)` = blocks per SM × SMs), as a cooperative launch needs.
 */
export function planPersistent(
  E: number,
  B: number,
  H: number,
  sharedLimit: number,
  residentBlocks: (sharedBytes: number) => number,
): PersistentPlan | undefined {
  const tb = B >= 128 ? 8 : 2;
  for (let units = tb; units <= 32; units *= 2) {
    const sharedBytes = persistentSharedBytes(H, units, tb);
    if (sharedBytes > sharedLimit) return undefined;
    const blocks = E * Math.ceil(H / units);
    if (blocks <= residentBlocks(sharedBytes)) return { tb, units, blocks, sharedBytes };
  }
  return undefined;
}

/**
 * Whether the persistent kernel can run a layer: its plan, or why not (layer norm, or slices that
 * do not fit). Only a 'persistent' request takes it: 'auto' never does (see {@link autoPath}),
 * because on an H200 (bench/notes/gru.md) the persistent kernel, though correct, lost everywhere —
 * b32 h256 T10 183 µs vs 91 µs, b256 h1024 T100 11.3 ms vs 7.2 ms, b64 h1024 T512 44 ms vs 16 ms:
 * each step stages h in H/16 dependent L2 round trips.
 */
export function persistentFit(layerNorm: boolean, plan: PersistentPlan | undefined): { plan: PersistentPlan } | { reason: string } {
  if (layerNorm) return { reason: 'it has no layer norm' };
  if (plan === undefined) return { reason: "W_hh's slices do not fit on chip with every block resident" };
  return { plan };
}

/** Hidden units per block of the fused step kernels (GRU_FUSED_UNITS in gru.cu): one warp each. */
export const FUSED_UNITS = 8;
/** Columns of h per lane the fused kernels are compiled for (one module each): KPL serves H ≤ 32·KPL. */
export const FUSED_COLUMNS = [2, 4, 8, 16] as const;
/**
 * Batch rows per warp tile the fused kernels are compiled for. No 8: on an H200 it never beat
 * both neighbours (b32 h256 T10: r4 42, r8 58, r16 51 µs; b32 h512: r4 145, r8 199, r16 77 µs).
 */
const FUSED_ROWS = [4, 16, 32] as const;
/** Most h values a lane multiplies per tile (rows · columns): k16_r32 would spill registers. */
const FUSED_MAX_TILE = 256;
/** The largest hidden size of the fused path (its weights live in registers: 3·16 per lane). */
export const FUSED_MAX_HIDDEN = 32 * FUSED_COLUMNS[FUSED_COLUMNS.length - 1];

/** The fused kernel's name for `columns` per lane and `rows` per tile. */
export function fusedKernelName(columns: number, rows: number): string {
  return `gru_fused_k${columns}_r${rows}`;
}

/** The fused kernels gru.cu defines for `columns` per lane (its GRU_FUSED_COLUMNS module). */
export function fusedKernelNames(columns: number): string[] {
  return FUSED_ROWS.filter((r) => r * columns <= FUSED_MAX_TILE).map((r) => fusedKernelName(columns, r));
}

/** How the fused step kernel is launched for one shape. */
export interface FusedPlan {
  /** Columns of h per lane (the kernel's KPL). */
  columns: number;
  /** Batch rows per warp tile (the kernel's BT). */
  rows: number;
  /** Blocks of FUSED_UNITS warps: E · ⌈H / FUSED_UNITS⌉ · ⌈B / rows⌉. */
  blocks: number;
  kernel: string;
}

/**
 * The fused step launch for E members, B rows and H units on a device with `multiprocessors`
 * SMs, or undefined for H above {@link FUSED_MAX_HIDDEN}. While 4-row tiles need at most two
 * blocks per SM, every block is resident at once and a step is one round of latency: the small
 * tile, with the most warps in flight, wins. Past that the SMs are busy and the largest tile
 * wins, as it reloads W_hh the fewest times. No tile is larger than the batch needs. (H200, per
 * 10 steps: b32 h256 r4 42 vs r32 75 µs; b128 h256 r4 117 vs r32 80; b64 h512 r4 273 vs r16 143.)
 */
export function planFused(E: number, B: number, H: number, multiprocessors: number): FusedPlan | undefined {
  const columns = FUSED_COLUMNS.find((c) => 32 * c >= H);
  if (columns === undefined) return undefined;
  const unitBlocks = E * Math.ceil(H / FUSED_UNITS);
  const tiles = FUSED_ROWS.filter((r, i) => r * columns <= FUSED_MAX_TILE && (i === 0 || FUSED_ROWS[i - 1]! < B));
  const smallest = tiles[0]!;
  const rows = unitBlocks * Math.ceil(B / smallest) <= 2 * multiprocessors ? smallest : tiles[tiles.length - 1]!;
  return { columns, rows, blocks: unitBlocks * Math.ceil(B / rows), kernel: fusedKernelName(columns, rows) };
}

/** Whether the fused kernel can run a layer: its plan, or why not. */
export function fusedFit(layerNorm: boolean, plan: FusedPlan | undefined): { plan: FusedPlan } | { reason: string } {
  if (layerNorm) return { reason: 'it has no layer norm (a whole-row reduction per step)' };
  if (plan === undefined) return { reason: `it serves hidden sizes up to ${FUSED_MAX_HIDDEN}` };
  return { plan };
}

/**
 * Per-step products E·B·H² up to which 'auto' takes the fused kernel: there a step costs about one
 * launch, where the steps path pays two (GEMM + gates). Past it the fused kernel's SIMT f32
 * products (each warp re-reads its h tile through L1) lose to the GEMM, sooner against TF32
 * tensor cores. H200, whole calls of T 10, fused vs steps: f32 b128 h256 (2^23) 88 vs 106 µs,
 * e5 b32 h256 (10·2^20) ~148 vs 107; tf32 b32 h512 (2^23) 84 vs 92, b128 h256 (2^23) 88 vs 76.
 */
export const FUSED_AUTO_LIMIT = { highest: 2 ** 23, tf32: 2 ** 22 } as const;

/**
 * Per-step products E·B·H² up to which 'auto' takes the sequence kernel where it applies: there
 * the whole layer is one launch where the fused path pays one per step. H200, whole f32 calls,
 * sequence vs fused (the previous choice) vs steps: b64 h64 T100 129 vs 275 vs 689 µs, b256 h128
 * T100 334 vs 651 vs 970, e5 b256 h128 T16 (5·2^22, the limit) 248 vs 422 vs 260, e16 b256 h32
 * T16 82 vs 218 vs 180; b1 h128 T5 45 vs 50 vs 51. Under 'tf32' the steps path's tensor-core
 * products take over sooner: the fused path's limit.
 */
export const SEQUENCE_AUTO_LIMIT = { highest: 5 * 2 ** 22, tf32: FUSED_AUTO_LIMIT.tf32 } as const;

/**
 * The path 'auto' takes: sequence where it applies, the product is small (hidden ≤ 128) and the
 * layer is f32, else fused where it applies and the product is small, else steps. 16-bit layers
 * keep the fused path for now: the sequence kernel's 16-bit form passes its float64 checks and
 * the sanitizers on the GPU but has not been timed against fused (bench/notes/gru.md).
 */
export function autoPath(
  shape: { ensemble: number; batch: number; hidden: number; layerNorm: boolean; precision: 'highest' | 'tf32'; dtype: DType },
  fused: FusedPlan | undefined,
  sequence: SequencePlan | undefined,
): 'sequence' | 'fused' | 'steps' {
  const work = shape.ensemble * shape.batch * shape.hidden * shape.hidden;
  const sequenceApplies = !('reason' in sequenceFit(shape.layerNorm, sequence)) && shape.dtype === 'f32';
  if (sequenceApplies && work <= SEQUENCE_AUTO_LIMIT[shape.precision]) return 'sequence';
  if ('reason' in fusedFit(shape.layerNorm, fused)) return 'steps';
  return work <= FUSED_AUTO_LIMIT[shape.precision] ? 'fused' : 'steps';
}

/** Lanes per hidden unit of the one-launch sequence kernel (SEQ_SPLIT in gru_sequence.cu). */
export const SEQUENCE_SPLIT = 8;
/** Columns of h per lane the sequence kernels are compiled for (one module each): KPT serves H ≤ 8·KPT. */
export const SEQUENCE_COLUMNS = [4, 8, 16] as const;
/** The largest hidden size of the sequence path: a block keeps all of W_hh on one SM (48 K floats at 128). */
export const SEQUENCE_MAX_HIDDEN = SEQUENCE_SPLIT * SEQUENCE_COLUMNS[SEQUENCE_COLUMNS.length - 1];
/**
 * Most batch rows one block of the sequence kernel runs (its state tile lives in shared memory);
 * 8 at 16 columns per lane, where each thread applies the gates of one (row, unit) item.
 */
export const SEQUENCE_MAX_ROWS = 16;

/** Rows per pass (the kernel's R) for `columns` per lane: 16 columns leave registers for 2 rows only. */
function sequenceRowTiles(columns: number): readonly number[] {
  return columns >= 16 ? [1, 2] : [1, 2, 4, 8];
}

/** Gate items (row, unit) per thread (SEQ_GATE_ITEMS in gru_sequence.cu): a block runs at most items·threads / H rows. */
function sequenceGateItems(columns: number): number {
  return columns >= 16 ? 1 : 2;
}

/** Float4 chunks of W_hh per lane held in shared memory rather than registers (SEQ_REG_CHUNKS in gru_sequence.cu). */
function sequenceSharedChunks(columns: number): number {
  return columns >= 16 ? 1 : 0;
}

/** The sequence kernel's name for `columns` per lane and `rows` per pass. */
export function sequenceKernelName(columns: number, rows: number): string {
  return `gru_sequence_k${columns}_r${rows}`;
}

/** The sequence kernels gru_sequence.cu defines for `columns` per lane (its GRU_SEQ_COLUMNS module). */
export function sequenceKernelNames(columns: number): string[] {
  return sequenceRowTiles(columns).map((r) => sequenceKernelName(columns, r));
}

/** How the one-launch sequence kernel runs a shape. */
export interface SequencePlan {
  /** Columns of h per lane (the kernel's KPT). */
  columns: number;
  /** Rows per pass (the kernel's R). */
  rows: number;
  /** Batch rows of one member each block runs through all steps. */
  rowsPerBlock: number;
  /** SEQUENCE_SPLIT lanes per hidden unit, rounded up to whole warps. */
  threads: number;
  /** E · ⌈B / rowsPerBlock⌉. */
  blocks: number;
  sharedBytes: number;
  kernel: string;
}

/** Dynamic shared memory of the sequence kernel (its layout in gru_sequence.cu). */
export function sequenceSharedBytes(hidden: number, columns: number, threads: number, rowsPerBlock: number, rows: number): number {
  const weights = 4 * 3 * sequenceSharedChunks(columns) * threads;
  const padded = Math.ceil(rowsPerBlock / rows) * rows;
  const state = 2 * padded * Math.ceil(hidden / 4) * 4;
  return 4 * (weights + state + 6 * hidden + padded * 3 * hidden);
}

/**
 * The sequence launch for E members, B rows and H units on a device with `multiprocessors` SMs, or
 * undefined for H above {@link SEQUENCE_MAX_HIDDEN}. Blocks are independent, so the rows are spread
 * as thinly as the SMs allow: ⌈E·B / SMs⌉ rows per block (at most {@link SEQUENCE_MAX_ROWS}, 8 for
 * H > 64; past that the blocks run in waves), taken in passes of the smallest row tile that holds
 * them. (H200 kernel-only, b256 T100: h64 1 row per block 228 µs, 2 rows 114, 4 rows 138; h128
 * 1 row 358, 2 rows 284, 4 rows 396.)
 */
export function planSequence(E: number, B: number, H: number, multiprocessors: number): SequencePlan | undefined {
  const columns = SEQUENCE_COLUMNS.find((c) => SEQUENCE_SPLIT * c >= H);
  if (columns === undefined) return undefined;
  const threads = Math.ceil((SEQUENCE_SPLIT * H) / 32) * 32;
  const most = Math.min(SEQUENCE_MAX_ROWS, Math.floor((sequenceGateItems(columns) * threads) / H));
  const rowsPerBlock = Math.min(most, Math.ceil((E * B) / multiprocessors), B);
  const tiles = sequenceRowTiles(columns);
  const rows = tiles.find((r) => r >= rowsPerBlock) ?? tiles[tiles.length - 1]!;
  return {
    columns,
    rows,
    rowsPerBlock,
    threads,
    blocks: E * Math.ceil(B / rowsPerBlock),
    sharedBytes: sequenceSharedBytes(H, columns, threads, rowsPerBlock, rows),
    kernel: sequenceKernelName(columns, rows),
  };
}

/** Whether the sequence kernel can run a layer: its plan, or why not. */
export function sequenceFit(layerNorm: boolean, plan: SequencePlan | undefined): { plan: SequencePlan } | { reason: string } {
  if (layerNorm) return { reason: 'it has no layer norm (a whole-row reduction per step)' };
  if (plan === undefined) return { reason: `it serves hidden sizes up to ${SEQUENCE_MAX_HIDDEN}` };
  return { plan };
}

/** Columns per lane the rollout kernel is compiled for (ROLL_KH for H, ROLL_KS for S): K serves sizes up to 32·K. */
export const ROLLOUT_COLUMNS = [2, 4, 8] as const;
/** Threads per block of the rollout kernel (ROLL_THREADS in gru_rollout.cu): one warp per item. */
export const ROLLOUT_THREADS = 256;
/**
 * Most batch rows the rollout kernel takes: each warp walks the whole batch every phase, so past
 * this the per-step GEMMs of the step-by-step path keep more of the device busy.
 */
export const ROLLOUT_MAX_BATCH = 256;

/** How the one-launch rollout runs a shape: its module's column counts and its grid. */
export interface RolloutPlan {
  /** Columns of h (kh) and of the state (ks) per lane. */
  kh: number;
  ks: number;
  /** Blocks for one group each: E·⌈max(H, S) / 8⌉ (a block runs 8 units, then 8 output columns, of one member). */
  blocks: number;
}

/**
 * The one-launch rollout's plan for E members, B rows, H hidden units and S state features, or
 * why it does not apply: it keeps a warp's three W_ih and W_hh rows and its W_out row in
 * registers (H and S up to 32·8) and walks the batch per phase (B up to {@link ROLLOUT_MAX_BATCH}).
 */
export function planRollout(E: number, B: number, H: number, S: number): RolloutPlan | { reason: string } {
  const largest = 32 * ROLLOUT_COLUMNS[ROLLOUT_COLUMNS.length - 1]!;
  if (H > largest || S > largest) return { reason: `hidden and state sizes up to ${largest}` };
  if (B > ROLLOUT_MAX_BATCH) return { reason: `batches up to ${ROLLOUT_MAX_BATCH}` };
  const kh = ROLLOUT_COLUMNS.find((c) => 32 * c >= H)!;
  const ks = ROLLOUT_COLUMNS.find((c) => 32 * c >= S)!;
  const warps = ROLLOUT_THREADS / 32;
  return { kh, ks, blocks: E * Math.ceil(Math.max(H, S) / warps) };
}

/** Threads per CTA of the cluster rollout (THREADS in gru_rollout_cluster.cu). */
export const ROLLOUT_CLUSTER_THREADS = 512;
/**
 * Cluster sizes the cluster rollout takes, in the order it tries them (above 8 is non-portable):
 * the most CTAs, the least work each (H200, kernel time over 16, 8, 4, 2 CTAs: e5 b32 h128 s64 T10
 * 100, 107, 138 µs, -; e2 b16 h100 s20 T10 83, 90, 99, 110; e1 b8 h64 s32 T20 126, 122, 122, 130).
 */
export const ROLLOUT_CLUSTER_SIZES = [16, 8, 4, 2] as const;

/** How the cluster rollout (`kernels/gru_rollout_cluster.cu`) lays out one member over a cluster. */
export interface RolloutClusterPlan {
  /** CTAs per member. */
  cluster: number;
  /** Hidden units (⌈H / cluster⌉) and output columns (⌈S / cluster⌉) per CTA. */
  units: number;
  columns: number;
  /** Row strides in floats of the transposed gate weights (3·units), output weights and batch (pad): 4 mod 8. */
  ldGate: number;
  ldOut: number;
  ldBatch: number;
  /** The batch rounded up to 8. */
  pad: number;
  /** Dynamic shared memory per CTA. */
  sharedBytes: number;
}

const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/**
 * The cluster rollout's layout for clusters of `cluster` CTAs (the kernel's shared-memory layout).
 * Rows of 8-wide tiles, 4 floats past a multiple of 8 apart: the 8 lanes of a quarter warp, each
 * reading 16 bytes of its own row, hit distinct banks.
 */
export function rolloutClusterLayout(cluster: number, B: number, H: number, S: number): RolloutClusterPlan {
  const units = Math.ceil(H / cluster);
  const columns = Math.ceil(S / cluster);
  const ldGate = roundUp(3 * units, 8) + 4;
  const ldOut = roundUp(columns, 8) + 4;
  const pad = roundUp(B, 8);
  const ldBatch = pad + 4;
  const weights = (S + H) * ldGate + H * ldOut;
  const activations = (S + 2 * H) * ldBatch;
  const sums = (Math.max(ldGate, ldOut) + ldGate) * pad;
  const biases = 6 * units + columns;
  return { cluster, units, columns, ldGate, ldOut, ldBatch, pad, sharedBytes: 4 * (weights + activations + sums + biases) };
}

/**
 * The cluster rollout's plans for B rows, H hidden units and S state features, one per size of
 * `sizes` (default {@link ROLLOUT_CLUSTER_SIZES}, in that order) whose CTAs fit `sharedLimit` bytes
 * of shared memory; none where a member fits no cluster (the cooperative kernel runs it).
 */
export function rolloutClusterPlans(
  B: number,
  H: number,
  S: number,
  sharedLimit: number,
  sizes: readonly number[] = ROLLOUT_CLUSTER_SIZES,
): RolloutClusterPlan[] {
  return sizes.map((cluster) => rolloutClusterLayout(cluster, B, H, S)).filter((plan) => plan.sharedBytes <= sharedLimit);
}
