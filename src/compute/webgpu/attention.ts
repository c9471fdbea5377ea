/**
 * Attention forward on WebGPU: the blocked online-softmax kernel of `kernels/wgsl/attention.wgsl`
 * (no Sq x Sk matrix), specialised per head dim, with the block shape chosen so its workgroup
 * memory (a block of q rows, one of keys or values, the block's scores and probabilities) fits
 * the device.
 */
import type { AttentionParams } from '../core/attention-params.js';
import type { TensorView } from '../core/view.js';
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

export function webgpuAttention(ctx: WebGpuOpContext, p: AttentionParams): void {
  const limit = ctx.dev.limits.maxComputeWorkgroupStorageSize;
  const block = attentionBlock(p.headDim, limit);
  if (!block) {
    const need = attentionBytes(BLOCKS[BLOCKS.length - 1]!, p.headDim);
    throw new WebGpuCapabilityError('attention', 'maxComputeWorkgroupStorageSize', `head dim ${p.headDim} needs ${need} bytes of workgroup memory, the device gives ${limit}`);
  }
  const lengths = p.keyLengths !== undefined;
  const lse = p.lse !== undefined;
  const key = `attention|${p.q.dtype}|${p.headDim}|${block.bq}x${block.bkv}x${block.tpr}|${p.causal}|${lengths}|${lse}`;
  const spec = cachedSpec(specs, key, () => ({
    op: 'attention',
    files: ['math.wgsl', 'attention.wgsl'],
    flags: { CAUSAL: p.causal, LENGTHS: lengths, LSE: lse },
    consts: { D: p.headDim, BQ: block.bq, BKV: block.bkv, TPR: block.tpr },
    roles: [
      { name: 'q', dtype: p.q.dtype },
      { name: 'k', dtype: p.k.dtype },
      { name: 'v', dtype: p.v.dtype },
      ...(lengths ? [{ name: 'lengths', dtype: 'i32' as const }] : []),
      { name: 'out', dtype: p.out.dtype, write: true },
      ...(lse ? [{ name: 'lse', dtype: 'f32' as const, write: true }] : []),
    ],
    params: [['batch', 'u32'], ['hq', 'u32'], ['hkv', 'u32'], ['sq', 'u32'], ['sk', 'u32'], ['scale', 'f32']],
  }));
  const views: TensorView[] = [p.q, p.k, p.v, ...(lengths ? [p.keyLengths!] : []), p.out, ...(lse ? [p.lse!] : [])];
  const max = ctx.dispatcher.maxGroups;
  const groups = [Math.ceil(p.seqQ / block.bq), p.heads, Math.min(p.batch, max)] as const;
  if (groups[0] > max || groups[1] > max) {
    throw new WebGpuCapabilityError('attention', 'maxComputeWorkgroupsPerDimension', `${Math.ceil(p.seqQ / block.bq)} query blocks x ${p.heads} heads need more than ${max} workgroups along one side`);
  }
  ctx.dispatcher.run(spec, views, [p.batch, p.heads, p.kvHeads, p.seqQ, p.seqK, p.scale], groups);
}
