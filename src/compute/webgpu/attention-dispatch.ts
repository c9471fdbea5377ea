/**
 * What every WebGPU attention kernel shares on the host: its bindings, its parameters and its
 * dispatch over (query blocks, heads, batch).
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

/** Runs an attention kernel over (query blocks of `bq` rows, heads, batch), bound as {@link attentionRoles}. */
export function dispatchAttention(ctx: WebGpuOpContext, spec: KernelSpec, p: AttentionParams, bq: number): void {
  const views: TensorView[] = [p.q, p.k, p.v, ...(p.keyLengths ? [p.keyLengths] : []), p.out, ...(p.lse ? [p.lse] : [])];
  const max = ctx.dispatcher.maxGroups;
  const groups = [Math.ceil(p.seqQ / bq), p.heads, Math.min(p.batch, max)] as const;
  if (groups[0] > max || groups[1] > max) {
    throw new WebGpuCapabilityError('attention', 'maxComputeWorkgroupsPerDimension', `${groups[0]} query blocks x ${p.heads} heads need more than ${max} workgroups along one side`);
  }
  ctx.dispatcher.run(spec, views, [p.batch, p.heads, p.kvHeads, p.seqQ, p.seqK, p.scale], groups);
}
