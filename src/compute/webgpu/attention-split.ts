/**
 * The attention kernel that holds query rows in registers and splits the head dim across the
 * lanes of a subgroup (`kernels/wgsl/attention-split.wgsl`): its blocks, the choice of one per
 * head dim, and its run. Workgroup memory holds only one block of keys and values, so long heads
 * keep large row blocks within 48 KB, where the register-blocked kernel's Q tile leaves room for
 * few keys (H200, NVIDIA Vulkan, f32 B2 H16 S2048, an earlier version of both: D128 22.2 TFLOP/s
 * against its 12.6, D192 18.4 against 8.5; at D64, B4, 21.7 against 18.4).
 */
import type { AttentionParams } from '../core/attention-params.js';
import { attentionFlags, attentionGroups, attentionKey, attentionRoles, ATTENTION_PARAMS, dispatchAttention } from './attention-dispatch.js';
import { keyPartBytes, keyParts, keySplitTuning, runKeyParts } from './attention-key-split.js';
import { cachedSpec, type WebGpuOpContext } from './op-context.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

/** A block of the split kernel: lanes per row group, rows per row group, rows and keys per workgroup block, keys per softmax chunk. */
export interface SplitBlock {
  readonly lanes: number;
  readonly rows: number;
  readonly bq: number;
  readonly bkv: number;
  readonly kc: number;
  /** Moves a row's running maximum only when a chunk's exceeds it by a factor above 2^8 (default true). */
  readonly lazy?: boolean;
  /** Fetches the next block of keys into registers while this one is multiplied (default true). */
  readonly prefetch?: boolean;
}

/** Invocations of a split block's workgroup. */
export function splitInvocations(b: SplitBlock): number {
  return (b.bq / b.rows) * b.lanes;
}

/**
 * Workgroup bytes of a split block for head dim d: one block of keys and one of values, and with
 * `lengths` (key lengths given) the visible-key count (the shader compiler leaves out workgroup
 * variables the entry point does not use).
 */
export function splitBytes(b: SplitBlock, d: number, lengths = true): number {
  return 4 * (2 * b.bkv * d + (lengths ? 1 : 0));
}

/** Whether a split block suits head dim d on subgroups of `subgroupSize` (a row group's lanes in one subgroup). */
export function splitFits(b: SplitBlock, d: number, subgroupSize: number | undefined): boolean {
  return (
    subgroupSize !== undefined &&
    subgroupSize % b.lanes === 0 &&
    d % 4 === 0 &&
    (d / 4) % b.lanes === 0 &&
    b.bq % b.rows === 0 &&
    b.bkv % b.kc === 0 &&
    splitInvocations(b) <= MAX_INVOCATIONS
  );
}

/** What shapes the split kernel's block for a family of head dims. */
export interface SplitRule {
  /** Most 4-column groups a lane holds over its rows, of q and of the output each (4 registers per group). */
  readonly rowGroups: number;
  /** Query rows per workgroup aimed at (row groups doubled while they stay within it and 256 invocations). */
  readonly blockRows: number;
  /** Most elements of K (and of V) an invocation fetches ahead per block of keys. */
  readonly maxFetch: number;
  /** Keys per block to try, most first (default {@link KEY_BLOCKS}). */
  readonly keyBlocks?: readonly number[];
}

/** Keys per block the split kernel tries by default, most first. */
export const KEY_BLOCKS: readonly number[] = [32, 16, 8, 4];

/**
 * Up to 24 column groups a lane (D112-D128 and D224-D256: 3 rows of 7-8; D160: 4 of 5; D176: 2
 * of 11) and the keys that keep a fetch within 12 elements an invocation (8-16).
 */
const THREE_ROWS: SplitRule = { rowGroups: 24, blockRows: 128, maxFetch: 12 };
/** Up to 16 column groups a lane (D192: 2 rows of 6; D208, D240: 1 row of 13-15), the most keys that fill 48 KB. */
const TWO_ROWS: SplitRule = { rowGroups: 16, blockRows: 128, maxFetch: 24, keyBlocks: [32, 24, 16, 8, 4] };

/**
 * Rules by head-dim family, each for head dims up to `maxHeadDim`, from timings on an H200 through
 * NVIDIA Vulkan against torch SDPA f32 in the same run (f32 B2 H16 S2048, B4 at D64;
 * `bench/webgpu.ts --sweep-attention` times a grid around them). With Dawn's bounds checks off
 * (`adapter.ts`), {@link THREE_ROWS} beat the previous rule's blocks (below), same run, non-causal
 * / causal TFLOP/s: D112 27.1 / 24.5 against 23.6 / 22.0; D128 27.1 / 21.9 against 24.2 / 22.6;
 * D160 26.7 / 25.1 against 24.1 / 23.9; D176 23.7 / 23.1 against 13.7 / 13.6; D224 24.7 / 23.7
 * against 21.3 / 21.6; D256 25.5 / 21.8 against 22.7 / 22.4, B3 H8 S1500 25.0 / 20.1 against 21.5
 * / 20.7. It lost at D192 (4 rows: 20.2 / 18.8 against 21.6 / 21.3) and where a lane holds 13-15
 * groups and so one row (D208, D240: 8 keys a block, 12.0-13.0 against 13.7-13.9 with 24), which
 * keep {@link TWO_ROWS}. Before, with the checks on, the one rule of every family picked for D64 4
 * lanes x 4 rows, 128 rows, 32 keys (25.3 TFLOP/s, 0.74x); D80 4 x 3, 96 rows (22.5, 0.74x); D96
 * to D128 4 x 2, 128 rows, 32 keys (D128 23.4, 0.53x); D160 8 x 3, 96 rows, 32 keys (20.5, 0.64x);
 * D192 to D256 8 x 2, 64 rows, and the most keys (24-32) that fill 48 KB of workgroup memory
 * within 24 fetched elements per invocation: fewer barriers and unhidden first fetches per key
 * (D192 32 keys 20.5 TFLOP/s, 0.56x, against 19.0 with 16; D224 24 keys 20.7, 0.53x, against 20.0;
 * D256 24 keys 21.1, 0.51x, against 20.6, causal unchanged; B3 H8 S1500 D256 20.3, 0.50x, against
 * 19.9; the key lengths' 4 bytes keep D256 at 16 keys with them). Half the rows per workgroup ran
 * up to 40% slower (the prefetched K and V take twice the registers per invocation; D96 alone
 * gained 2%), twice the lanes at twice the rows 0–10% slower (causal D256 30%), 16-key chunks,
 * fewer rows or no prefetch slower still. D144 (9 column groups per lane) keeps 2 rows with 16
 * keys (22.4 TFLOP/s, 0.78x, against 13.2 with 1 row). At D256 with 16 keys (20.6 TFLOP/s, SDPA
 * 41.5, 0.50x; B3 H8 S1500, 4.4 waves of 64-row blocks: 18.1, 0.47x) nothing else timed faster: 16
 * x 4 (half the shared-memory reads per multiply-add) 20.2 / 17.6, 16 x 3 at 48 rows 17.9 / 17.9,
 * and 32-row blocks for a fuller last wave slower still (8 x 2 with 8 keys 16.1 / 14.1, 16 x 4
 * 19.3 / 16.9); at D128 8 x 4 23.3 against 23.5. Nor, against 24 keys with the key split where it
 * pays (`attention-key-split.ts`; B2 H16 S2048 / B3 H8 S1500 D256 21.1 / 20.3): no prefetch 17.5 /
 * 17.0; 32-row blocks, whose fewer registers per invocation allow more warps, 8 x 1 11.8 / 11.5
 * (16 keys 11.3 / 11.0), 8 x 2 13.0 / 12.3, 16 x 2 15.0 / 14.6; 16-row blocks of 32 x 2 9.4 / 9.3.
 * Nor a kernel of two tiled products per block of 64 keys (256 invocations each owning 4 rows by 4
 * keys of S and 4 rows by D/16 columns of the output; Q and K staged transposed by chunks of 16-32
 * dims, P and chunks of V in workgroup memory: fewer bytes read from workgroup memory per
 * multiply-add, no shuffles): 10-12 TFLOP/s at D64-D256 against this kernel's 20-25, with 12-24
 * barriers per 64 keys where this one has 2 per 24-32.
 */
export const SPLIT_RULES: readonly { readonly maxHeadDim: number; readonly rule: SplitRule }[] = [
  { maxHeadDim: 96, rule: { rowGroups: 16, blockRows: 128, maxFetch: 20 } },
  { maxHeadDim: 128, rule: THREE_ROWS },
  { maxHeadDim: 144, rule: { rowGroups: 18, blockRows: 128, maxFetch: 16 } },
  { maxHeadDim: 176, rule: THREE_ROWS },
  { maxHeadDim: 208, rule: TWO_ROWS },
  { maxHeadDim: 224, rule: THREE_ROWS },
  { maxHeadDim: 240, rule: TWO_ROWS },
  { maxHeadDim: 256, rule: THREE_ROWS },
];

/** Keys per softmax chunk: 16 held scores per row cost more in registers than the chunk's rescale saves (H200). */
const CHUNK_KEYS = 8;
/** Most invocations per workgroup (WebGPU's default limit). */
const MAX_INVOCATIONS = 256;

/**
 * Shared-memory and shuffle operations per multiply-add of a split block with `lanes` lanes,
 * `rows` rows and `groups` 4-column groups per lane: a 16-byte read of K or V serves 4 multiply-adds
 * per row, and each score takes log2(lanes) shuffles per row for its 8·groups multiply-adds.
 */
function trafficPerFma(lanes: number, rows: number, groups: number): number {
  return 1 / (4 * rows) + Math.log2(lanes) / (8 * groups);
}

/**
 * The split kernel's block for head dim d on `maxBytes` of workgroup memory and subgroups of
 * `subgroupSize`, or undefined where it does not fit (no subgroups, d not a multiple of 4, a row
 * too long for a lane's registers): the lanes and rows that {@link trafficPerFma} favours within
 * the family rule's register budget, its rows per workgroup, then the most keys per block that
 * fit the memory and its fetch limit.
 */
export function splitBlock(d: number, maxBytes: number, subgroupSize: number | undefined, rule = splitRule(d), lengths = true): SplitBlock | undefined {
  if (subgroupSize === undefined || d % 4 !== 0 || rule === undefined) return undefined;
  const d4 = d / 4;
  let best: { lanes: number; rows: number; cost: number } | undefined;
  for (let lanes = 1; lanes <= subgroupSize && d4 % lanes === 0; lanes *= 2) {
    const rows = Math.min(8, Math.floor(rule.rowGroups / (d4 / lanes)));
    if (rows < 1) continue;
    const cost = trafficPerFma(lanes, rows, d4 / lanes);
    if (!best || cost < best.cost) best = { lanes, rows, cost };
  }
  if (!best) return undefined;
  const { lanes, rows } = best;
  let groups = 1;
  while (groups * 2 * rows <= rule.blockRows && groups * 2 * lanes <= MAX_INVOCATIONS) groups *= 2;
  const bq = groups * rows;
  const t = groups * lanes;
  for (const bkv of rule.keyBlocks ?? KEY_BLOCKS) {
    const b = { lanes, rows, bq, bkv, kc: Math.min(CHUNK_KEYS, bkv) };
    if (Math.ceil((bkv * d) / t) <= rule.maxFetch && splitBytes(b, d, lengths) <= maxBytes && splitFits(b, d, subgroupSize)) return b;
  }
  return undefined;
}

/** The rule of head dim d's family. */
export function splitRule(d: number): SplitRule | undefined {
  return SPLIT_RULES.find((f) => d <= f.maxHeadDim)?.rule;
}

/**
 * Runs the split kernel with block `b` (which must fit: {@link splitFits}, {@link splitBytes}),
 * each query block's keys split over `parts` workgroups and merged after (`attention-key-split.ts`)
 * where `parts` > 1; by default the parts {@link splitParts} chooses.
 */
export function splitAttention(ctx: WebGpuOpContext, p: AttentionParams, b: SplitBlock, parts = splitParts(ctx, p, b)): void {
  const lazy = b.lazy ?? true;
  const prefetch = b.prefetch ?? true;
  const split = parts > 1;
  const key = `attention-split|${attentionKey(p)}|${b.lanes}x${b.rows}x${b.bq}x${b.bkv}x${b.kc}|${lazy ? 'lazy' : 'eager'}|${prefetch ? 'prefetch' : 'direct'}|${parts}`;
  const spec = cachedSpec(specs, key, () => ({
    op: 'attention',
    files: ['math.wgsl', 'attention-common.wgsl', 'attention-split.wgsl'],
    flags: { ...attentionFlags(p), LAZY: lazy, PREFETCH: prefetch, KSPLIT: split },
    consts: { D: p.headDim, G: b.lanes, RQ: b.rows, BQ: b.bq, BKV: b.bkv, KC: b.kc, T: splitInvocations(b), KS: parts },
    roles: split
      ? [...attentionRoles(p).filter((r) => !r.write), { name: 'part', dtype: 'f32', write: true }, { name: 'stats', dtype: 'f32', write: true }]
      : attentionRoles(p),
    params: ATTENTION_PARAMS,
    subgroups: true,
  }));
  if (!split) {
    dispatchAttention(ctx, spec, p, b.bq);
    return;
  }
  runKeyParts(ctx, p, parts, (views) => dispatchAttention(ctx, spec, p, b.bq, parts, [views.part, views.stats]));
}

/**
 * How many workgroups split each query block's keys for problem p under block b: the rule's
 * count ({@link keyParts}; forced by `keySplitTuning.force`), less where the parts' scratch would
 * pass the largest buffer a kernel binds or the grid's side would pass the device's limit.
 */
export function splitParts(ctx: WebGpuOpContext, p: AttentionParams, b: SplitBlock): number {
  let parts = keySplitTuning.force ?? keyParts(attentionGroups(p, b.bq), p.seqK, p.causal);
  const limit = Math.min(ctx.dev.limits.maxStorageBufferBindingSize, ctx.dev.limits.maxBufferSize);
  while (parts > 1 && (keyPartBytes(p, parts) > limit || Math.ceil(p.seqQ / b.bq) * parts > ctx.dispatcher.maxGroups)) parts--;
  return Math.max(1, parts);
}
