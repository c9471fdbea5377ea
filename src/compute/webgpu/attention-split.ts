/**
 * The attention kernel that holds query rows in registers and splits the head dim across the
 * lanes of a subgroup (`kernels/wgsl/attention-split.wgsl`): its blocks, the choice of one per
 * head dim, and its run. Workgroup memory holds only one block of keys and values, so long heads
 * keep large row blocks within 48 KB, where the register-blocked kernel's Q tile leaves room for
 * few keys (H200, NVIDIA Vulkan, f32 B2 H16 S2048: D128 22.2 TFLOP/s against its 12.6, D192 18.4
 * against 8.5; at D64, B4, 21.7 against 18.4).
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
 * Rules by head-dim family, each for head dims up to `maxHeadDim`: of rowGroups 16/24 x blockRows
 * 64/128 x maxFetch 8/16, the one with the highest worst ratio to torch SDPA f32 over the family's
 * head dims (64; 96 and 128; 192 and 256) on an H200 through NVIDIA Vulkan, f32 B2–4 H16 S2048
 * (`bench/webgpu.ts --sweep-attention` times the same grid). 24 groups ran 16–35% slower (registers).
 */
export const SPLIT_RULES: readonly { readonly maxHeadDim: number; readonly rule: SplitRule }[] = [
  { maxHeadDim: 64, rule: { rowGroups: 16, blockRows: 128, maxFetch: 8 } },
  { maxHeadDim: 128, rule: { rowGroups: 16, blockRows: 128, maxFetch: 16 } },
  { maxHeadDim: 256, rule: { rowGroups: 16, blockRows: 64, maxFetch: 16 } },
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
  const key = `attention-split|${attentionKey(p)}|${b.lanes}x${b.rows}x${b.bq}x${b.bkv}x${b.kc}`;
  const spec = cachedSpec(specs, key, () => ({
    op: 'attention',
    files: ['math.wgsl', 'attention-common.wgsl', 'attention-split.wgsl'],
    flags: attentionFlags(p),
    consts: { D: p.headDim, G: b.lanes, RQ: b.rows, BQ: b.bq, BKV: b.bkv, KC: b.kc, T: splitInvocations(b) },
    roles: attentionRoles(p),
    params: ATTENTION_PARAMS,
    subgroups: true,
  }));
  dispatchAttention(ctx, spec, p, b.bq);
}
