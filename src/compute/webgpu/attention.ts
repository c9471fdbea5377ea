/**
 * Attention forward on WebGPU, three blocked online-softmax kernels (no Sq x Sk matrix), each
 * specialised per head dim, and the choice among them:
 * - `kernels/wgsl/attention-split.wgsl` (`attention-split.ts`), query rows in registers and the
 *   head dim split across subgroup lanes, for head dims from {@link SPLIT_MIN_HEAD_DIM} where
 *   subgroups allow it; where its grid would leave the device idle, each query block's keys are
 *   split over several workgroups and merged after (`attention-key-split.ts`);
 * - `kernels/wgsl/attention-flash.wgsl`, register-blocked (each invocation owns a few query rows
 *   by a few keys, then by a few 4-column groups of the output), for the other head dims that are
 *   multiples of 16 up to what the device's workgroup memory holds (128 on 48 KB);
 * - `kernels/wgsl/attention.wgsl`, scalar, for every other head dim up to 256.
 * Block shapes are chosen so their workgroup memory fits the device.
 */
import type { AttentionParams } from '../core/attention-params.js';
import { attentionFlags, attentionKey, attentionRoles, ATTENTION_PARAMS, dispatchAttention } from './attention-dispatch.js';
import { splitAttention, splitBlock, splitBytes, splitFits, splitRule, type SplitBlock } from './attention-split.js';
import { cachedSpec, type WebGpuOpContext } from './op-context.js';
import { WebGpuCapabilityError } from './webgpu-errors.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

/** Query rows per workgroup, keys per block, invocations per row. */
export interface AttentionBlock {
  readonly bq: number;
  readonly bkv: number;
  readonly tpr: number;
}

/** Candidate blocks, preferred first: 128 invocations, fewer rows and keys for long heads. */
const BLOCKS: readonly AttentionBlock[] = [
  { bq: 16, bkv: 32, tpr: 8 },
  { bq: 16, bkv: 16, tpr: 8 },
  { bq: 8, bkv: 16, tpr: 16 },
  { bq: 8, bkv: 16, tpr: 8 },
];

/** Workgroup bytes of a block for head dim d: q rows and key/value rows (padded to d + 1 words), scores, probabilities. */
export function attentionBytes(block: AttentionBlock, d: number): number {
  return 4 * ((block.bq + block.bkv) * (d + 1) + 2 * block.bq * block.bkv + 1);
}

/** The first candidate that fits `maxBytes` of workgroup memory for head dim d. */
export function attentionBlock(d: number, maxBytes: number): AttentionBlock | undefined {
  return BLOCKS.find((b) => attentionBytes(b, d) <= maxBytes);
}

/** A block of the register-blocked kernel: query rows and keys per block, invocations as TR x TC. */
export interface FlashBlock {
  readonly bq: number;
  readonly bkv: number;
  readonly tr: number;
  readonly tc: number;
}

/** Candidates, preferred first (256 invocations each but the last): the most work per invocation that fits. */
export const FLASH_BLOCKS: readonly FlashBlock[] = [
  { bq: 64, bkv: 32, tr: 16, tc: 16 },
  { bq: 64, bkv: 32, tr: 32, tc: 8 },
  { bq: 32, bkv: 16, tr: 16, tc: 16 },
  { bq: 32, bkv: 16, tr: 32, tc: 8 },
  { bq: 64, bkv: 16, tr: 64, tc: 4 },
  { bq: 16, bkv: 16, tr: 16, tc: 16 },
  { bq: 32, bkv: 8, tr: 32, tc: 4 },
];

/** Workgroup bytes of a flash block for head dim d (Q and K rows padded by 4 words, probabilities by 4 per row). */
export function flashBytes(b: FlashBlock, d: number, subgroups: boolean): number {
  const words = (b.bq + b.bkv) * (d + 4) + b.bkv * d + b.bq * (b.bkv + 4) + 1 + (subgroups ? 0 : b.tr * b.tc * (b.bq / b.tr));
  return 4 * words;
}

/** Whether a flash block suits head dim d (its column groups and fetches divide evenly). */
function flashFits(b: FlashBlock, d: number): boolean {
  const d4 = d / 4;
  return d % 16 === 0 && d4 % b.tc === 0 && b.bq % b.tr === 0 && b.bkv % b.tc === 0 && b.bkv % 4 === 0 && (b.bkv * d) % (b.tr * b.tc) === 0;
}

/** Fewest scores (Sq·Sk) worth the register-blocked kernel on a hardware adapter; below, the scalar one (cheaper to build) runs. */
export const FLASH_MIN_SCORES = 8192;

/** Head dims from which the split kernel runs where it fits (below, the register-blocked one; H200: at D64 21.7 TFLOP/s against its 18.4, smaller head dims untimed). */
export const SPLIT_MIN_HEAD_DIM = 64;

/** @internal Forces a block of the register-blocked or split kernel (tests, the benchmark's sweep; one that does not fit falls to the scalar kernel); null: the scalar kernel. */
export const attentionTuning: { force?: FlashBlock | SplitBlock | null } = {};

/**
 * The register-blocked kernel's block for head dim d on `maxBytes` of workgroup memory, or
 * undefined (the scalar kernel runs); `subgroupSize`: the shuffles' subgroup, if any (a row's TC
 * invocations combine by shuffles where a subgroup holds whole rows, else through workgroup memory).
 */
export function flashBlock(d: number, maxBytes: number, subgroupSize: number | undefined): FlashBlock | undefined {
  return FLASH_BLOCKS.find((b) => flashFits(b, d) && flashBytes(b, d, shufflesFor(b, subgroupSize)) <= maxBytes);
}

function shufflesFor(b: FlashBlock, subgroupSize: number | undefined): boolean {
  return subgroupSize !== undefined && subgroupSize % b.tc === 0;
}

function flashAttention(ctx: WebGpuOpContext, p: AttentionParams, block: FlashBlock, subgroups: boolean, sg: number): void {
  const key = `attention-flash|${attentionKey(p)}|${block.bq}x${block.bkv}x${block.tr}x${block.tc}|${subgroups ? sg : 0}`;
  const spec = cachedSpec(specs, key, () => ({
    op: 'attention',
    files: ['math.wgsl', 'attention-common.wgsl', 'attention-flash.wgsl'],
    flags: { ...attentionFlags(p), SUBGROUPS: subgroups },
    consts: { D: p.headDim, BQ: block.bq, BKV: block.bkv, TR: block.tr, TC: block.tc, T: block.tr * block.tc },
    roles: attentionRoles(p),
    params: ATTENTION_PARAMS,
    subgroups,
  }));
  dispatchAttention(ctx, spec, p, block.bq);
}

/** Runs a forced block if it fits this problem and device; false where it does not. */
function runForced(ctx: WebGpuOpContext, p: AttentionParams, forced: FlashBlock | SplitBlock, limit: number): boolean {
  const sg = ctx.subgroupSize;
  if ('lanes' in forced) {
    if (!splitFits(forced, p.headDim, sg) || splitBytes(forced, p.headDim, p.keyLengths !== undefined) > limit) return false;
    splitAttention(ctx, p, forced);
    return true;
  }
  if (!flashFits(forced, p.headDim) || flashBytes(forced, p.headDim, shufflesFor(forced, sg)) > limit) return false;
  flashAttention(ctx, p, forced, shufflesFor(forced, sg), sg ?? 1);
  return true;
}

/** Attention forward on the WebGPU device: the split kernel where it serves, else the register-blocked one, else the scalar one. */
export function webgpuAttention(ctx: WebGpuOpContext, p: AttentionParams): void {
  const limit = ctx.dev.limits.maxComputeWorkgroupStorageSize;
  const forced = attentionTuning.force;
  const sg = ctx.subgroupSize;
  if (forced) {
    if (runForced(ctx, p, forced, limit)) return;
  } else if (forced === undefined && p.seqQ * p.seqK >= FLASH_MIN_SCORES && !ctx.dev.adapterInfo.fallback) {
    // A software adapter (lavapipe, SwiftShader) keeps the scalar kernel unless a test forces a block:
    // there each specialisation of the blocked ones takes 8–10 s to build, and speed is the CPU's.
    const split = p.headDim >= SPLIT_MIN_HEAD_DIM ? splitBlock(p.headDim, limit, sg, splitRule(p.headDim), p.keyLengths !== undefined) : undefined;
    if (split) {
      splitAttention(ctx, p, split);
      return;
    }
    const block = flashBlock(p.headDim, limit, sg);
    if (block) {
      flashAttention(ctx, p, block, shufflesFor(block, sg), sg ?? 1);
      return;
    }
  }
  const block = attentionBlock(p.headDim, limit);
  if (!block) {
    const need = attentionBytes(BLOCKS[BLOCKS.length - 1]!, p.headDim);
    throw new WebGpuCapabilityError('attention', 'maxComputeWorkgroupStorageSize', `head dim ${p.headDim} needs ${need} bytes of workgroup memory, the device gives ${limit}`);
  }
  const key = `attention|${attentionKey(p)}|${block.bq}x${block.bkv}x${block.tpr}`;
  const spec = cachedSpec(specs, key, () => ({
    op: 'attention',
    files: ['math.wgsl', 'attention-common.wgsl', 'attention.wgsl'],
    flags: attentionFlags(p),
    consts: { D: p.headDim, BQ: block.bq, BKV: block.bkv, TPR: block.tpr },
    roles: attentionRoles(p),
    params: ATTENTION_PARAMS,
  }));
  dispatchAttention(ctx, spec, p, block.bq);
}
