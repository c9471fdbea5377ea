/**
 * The attention kernel that holds query rows in registers and splits the head dim across the
 * lanes of a subgroup (`kernels/wgsl/attention-split.wgsl`): its blocks, the choice of one per
 * head dim, and its run. Workgroup memory holds only one block of keys and values, so long heads
 * keep large row blocks within 48 KB, where the register-blocked kernel's Q tile leaves room for
 * few keys (H200, NVIDIA Vulkan, f32 B2 H16 S2048, an earlier version of both: D128 22.2 TFLOP/s
 * against its 12.6, D192 18.4 against 8.5; at D64, B4, 21.7 against 18.4).
 */
import type { AttentionParams } from '../core/attention-params.js';
import { attentionFlags, attentionKey, attentionRoles, ATTENTION_PARAMS, dispatchAttention } from './attention-dispatch.js';
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

/** Workgroup bytes of a split block for head dim d: one block of keys and one of values, the visible-key count. */
export function splitBytes(b: SplitBlock, d: number): number {
  return 4 * (2 * b.bkv * d + 1);
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
}

/**
 * Rules by head-dim family, each for head dims up to `maxHeadDim`, from timings on an H200 through
 * NVIDIA Vulkan against torch SDPA f32 in the same run (f32 B2 H16 S2048, B4 at D64;
 * `bench/webgpu.ts --sweep-attention` times a grid around them). One rule serves every family:
 * it picks for D64 4 lanes x 4 rows, 128 rows, 32 keys (25.3 TFLOP/s, 0.74x); D80 4 x 3, 96 rows
 * (22.5, 0.74x); D96 to D128 4 x 2, 128 rows, 32 keys (D128 23.4, 0.53x); D160 8 x 3, 96 rows,
 * 32 keys (20.5, 0.64x); D192 to D256 8 x 2, 64 rows, 16 keys (D256 20.6, 0.49x). Half the rows
 * per workgroup ran up to 40% slower (the prefetched K and V take twice the registers per
 * invocation; D96 alone gained 2%), twice the lanes at twice the rows 0–10% slower (causal D256
 * 30%), 16-key chunks, fewer rows or no prefetch slower still. D144 (9 column groups per lane)
 * keeps 2 rows with 16 keys (22.4 TFLOP/s, 0.78x, against 13.2 with 1 row). At D256 (20.6
 * TFLOP/s, SDPA 41.5, 0.50x; B3 H8 S1500, 4.4 waves of 64-row blocks: 18.1, 0.47x) nothing else
 * timed faster: 16 x 4 (half the shared-memory reads per multiply-add) 20.2 / 17.6, 16 x 3 at 48
 * rows 17.9 / 17.9, and 32-row blocks for a fuller last wave slower still (8 x 2 with 8 keys 16.1 /
 * 14.1, 16 x 4 19.3 / 16.9); at D128 8 x 4 23.3 against 23.5.
 */
export const SPLIT_RULES: readonly { readonly maxHeadDim: number; readonly rule: SplitRule }[] = [
  { maxHeadDim: 128, rule: { rowGroups: 16, blockRows: 128, maxFetch: 20 } },
  { maxHeadDim: 144, rule: { rowGroups: 18, blockRows: 128, maxFetch: 16 } },
  { maxHeadDim: 256, rule: { rowGroups: 16, blockRows: 128, maxFetch: 20 } },
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
export function splitBlock(d: number, maxBytes: number, subgroupSize: number | undefined, rule = splitRule(d)): SplitBlock | undefined {
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
  for (const bkv of [32, 16, 8, 4]) {
    const b = { lanes, rows, bq, bkv, kc: Math.min(CHUNK_KEYS, bkv) };
    if (Math.ceil((bkv * d) / t) <= rule.maxFetch && splitBytes(b, d) <= maxBytes && splitFits(b, d, subgroupSize)) return b;
  }
  return undefined;
}

/** The rule of head dim d's family. */
export function splitRule(d: number): SplitRule | undefined {
  return SPLIT_RULES.find((f) => d <= f.maxHeadDim)?.rule;
}

/** Runs the split kernel with block `b` (which must fit: {@link splitFits}, {@link splitBytes}). */
export function splitAttention(ctx: WebGpuOpContext, p: AttentionParams, b: SplitBlock): void {
  const lazy = b.lazy ?? true;
  const prefetch = b.prefetch ?? true;
  const key = `attention-split|${attentionKey(p)}|${b.lanes}x${b.rows}x${b.bq}x${b.bkv}x${b.kc}|${lazy ? 'lazy' : 'eager'}|${prefetch ? 'prefetch' : 'direct'}`;
  const spec = cachedSpec(specs, key, () => ({
    op: 'attention',
    files: ['math.wgsl', 'attention-common.wgsl', 'attention-split.wgsl'],
    flags: { ...attentionFlags(p), LAZY: lazy, PREFETCH: prefetch },
    consts: { D: p.headDim, G: b.lanes, RQ: b.rows, BQ: b.bq, BKV: b.bkv, KC: b.kc, T: splitInvocations(b) },
    roles: attentionRoles(p),
    params: ATTENTION_PARAMS,
    subgroups: true,
  }));
  dispatchAttention(ctx, spec, p, b.bq);
}
