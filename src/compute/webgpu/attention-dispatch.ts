/**
 * What every WebGPU attention kernel shares on the host: its bindings, its parameters and its
 * dispatch over (heads and batches, query blocks, further batches).
 */
import type { AttentionParams } from '../core/attention-params.js';
import type { TensorView } from '../core/view.js';
import type { WebGpuOpContext } from './op-context.js';
import { WebGpuCapabilityError } from './webgpu-errors.js';
import type { KernelSpec } from './wgsl.js';

/** The bindings of an attention kernel: q, k, v, the key lengths if given, out, the log-sum-exp if asked for. */
export function attentionRoles(p: AttentionParams): KernelSpec['roles'] {
  return [
    { name: 'q', dtype: p.q.dtype },
    { name: 'k', dtype: p.k.dtype },
    { name: 'v', dtype: p.v.dtype },
    ...(p.keyLengths !== undefined ? [{ name: 'lengths', dtype: 'i32' as const }] : []),
    { name: 'out', dtype: p.out.dtype, write: true },
    ...(p.lse !== undefined ? [{ name: 'lse', dtype: 'f32' as const, write: true }] : []),
  ];
}

export const ATTENTION_PARAMS: KernelSpec['params'] = [['batch', 'u32'], ['hq', 'u32'], ['hkv', 'u32'], ['sq', 'u32'], ['sk', 'u32'], ['scale', 'f32']];

/** The flags every attention kernel reads (`attention-common.wgsl`'s among them). */
export function attentionFlags(p: AttentionParams): Record<string, boolean> {
  return { CAUSAL: p.causal, LENGTHS: p.keyLengths !== undefined, LSE: p.lse !== undefined };
}

/** The part of a spec's cache key every attention kernel has: dtypes, head dim, masks and outputs. */
export function attentionKey(p: AttentionParams): string {
  return `${p.q.dtype}|${p.k.dtype}|${p.headDim}|${p.causal}|${p.keyLengths !== undefined}|${p.lse !== undefined}`;
}

/** Workgroups of an attention grid of `bq`-row query blocks, one per block, head and batch (before any split of the keys). */
export function attentionGroups(p: AttentionParams, bq: number): number {
  return Math.ceil(p.seqQ / bq) * p.heads * p.batch;
}

/**
 * Runs an attention kernel over (head and batch, query blocks of `bq` rows, further batches),
 * bound as {@link attentionRoles}: `attention_tile` in `attention-common.wgsl` reads this layout.
 * Heads vary fastest and the query blocks go last first, so under a causal mask every head's
 * longest blocks start in the first wave and the shortest fill the tail (with the blocks of one
 * head first, the long blocks of the last heads ran alone at the end). With `parts` > 1 each
 * block's keys are split over that many workgroups, consecutive along y, whose outputs are
 * `outputs` (the key split's scratch) in place of out and the log-sum-exp.
 */
export function dispatchAttention(ctx: WebGpuOpContext, spec: KernelSpec, p: AttentionParams, bq: number, parts = 1, outputs?: readonly TensorView[]): void {
  const views: TensorView[] = [p.q, p.k, p.v, ...(p.keyLengths ? [p.keyLengths] : []), ...(outputs ?? [p.out, ...(p.lse ? [p.lse] : [])])];
  const max = ctx.dispatcher.maxGroups;
  const blocks = Math.ceil(p.seqQ / bq) * parts;
  if (blocks > max || p.heads > max) {
    throw new WebGpuCapabilityError('attention', 'maxComputeWorkgroupsPerDimension', `${blocks} query blocks${parts > 1 ? ` (${parts} parts each)` : ''} x ${p.heads} heads need more than ${max} workgroups along one side`);
  }
  const batchesX = Math.min(p.batch, Math.floor(max / p.heads));
  const groups = [p.heads * batchesX, blocks, Math.min(Math.ceil(p.batch / batchesX), max)] as const;
  ctx.dispatcher.run(spec, views, [p.batch, p.heads, p.kvHeads, p.seqQ, p.seqK, p.scale], groups);
}
