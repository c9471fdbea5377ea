/**
 * Splitting the keys of each query block of the split attention kernel across several workgroups
 * (flash-decoding): each part writes its rows' unnormalised output, running maximum and sum to
 * scratch (`KSPLIT` in `kernels/wgsl/attention-split.wgsl`), and a second pass merges the parts
 * (`kernels/wgsl/attention-combine.wgsl`). It pays where a grid of whole-key workgroups leaves
 * the device idle: fewer workgroups than it runs at once (few heads and query rows, long keys),
 * or a last wave mostly empty. The result means what one workgroup per block gives (the same
 * masks, the same -inf rows), within the rounding of the merge.
 */
import type { AttentionParams } from '../core/attention-params.js';
import type { TensorView } from '../core/view.js';
import { attentionFlags, attentionKey, ATTENTION_PARAMS } from './attention-dispatch.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

/**
 * @internal What the rule assumes (the benchmark's sweep and tests change them): the device's
 * compute units, what a workgroup costs besides its keys, the fewest keys a part takes, the most
 * parts.
 */
export const keySplitTuning = {
  /**
   * Split workgroups the device runs at once. WebGPU reports no compute-unit count, so this is an
   * estimate: the 132 SMs of an H100/H200, each holding one split workgroup (at head dims 192-256
   * its registers fill an SM at 8 warps). On a smaller device a grid spans more waves than the
   * rule thinks; splitting never gives more waves of whole-key work (⌈W·s/C⌉ ≤ s·⌈W/C⌉ for any
   * C), so a wrong estimate costs at most the parts' overhead the rule weighed.
   */
  residentGroups: 132,
  /**
   * What a workgroup costs besides its keys, in keys' time: loading its query rows, the first
   * block of keys (fetched with nothing to hide it behind), its stores, and for a part its share
   * of the merge. H200, f32, head dims 64-256: 25-50 keys (where 2 or 3 parts took as many waves
   * as 1, each extra part cost 1-3.5% at 1000-2048 keys).
   */
  overheadKeys: 32,
  /** Each part streams at least this many keys. */
  minPartKeys: 128,
  maxParts: 16,
  /** @internal Forces a part count where the split kernel runs (tests, the benchmark's sweep); undefined: the rule. */
  force: undefined as number | undefined,
};

/**
 * The number of parts to split each query block's keys into, for a grid of `groups` workgroups
 * (one per query block, head and batch) over `seqK` keys: the count s that minimises the grid's
 * time in waves of C resident workgroups ({@link keySplitTuning}), ⌈groups·s / C⌉ waves of
 * seqK / s + overheadKeys keys each. It splits a grid smaller than the device (few heads and
 * query rows over long keys: up to as many workgroups as run at once) and one whose last wave is
 * mostly idle, and leaves a grid of many or nearly whole waves alone (H200, f32, against torch
 * SDPA f32 in the same run: B3 H8 S1500 D256, 4.4 waves, in 2 parts 19.9 TFLOP/s against 18.1,
 * 0.49x against 0.45x; B1 H16 Sq256 Sk8192 D128, 32 workgroups, in 4 parts 23.1 against 5.9,
 * 1.06x against 0.27x; B1 H16 S4096 D128, 3.9 waves, 9 parts ran 3% slower than 1). Under a causal mask the blocks differ in length and the grid runs the
 * longest first, so the short ones already fill the last wave: there it splits only a grid
 * smaller than the device. Parts keep at least `minPartKeys` keys each.
 */
export function keyParts(groups: number, seqK: number, causal: boolean, tuning: Omit<typeof keySplitTuning, 'force'> = keySplitTuning): number {
  const c = tuning.residentGroups;
  if (causal && groups >= c) return 1;
  const most = Math.min(tuning.maxParts, Math.floor(seqK / tuning.minPartKeys));
  const cost = (s: number) => Math.ceil((groups * s) / c) * (seqK / s + tuning.overheadKeys);
  let best = 1;
  for (let s = 2; s <= most; s++) if (cost(s) < cost(best)) best = s;
  return best;
}

/** Bytes of scratch for `parts` parts of problem p: each part's output rows, then each row's maximum and sum. */
export function keyPartBytes(p: AttentionParams, parts: number): number {
  const rows = p.batch * p.heads * p.seqQ;
  return 4 * parts * rows * (p.headDim + 2);
}

/** The views of a part's scratch, as attention-split.wgsl's KSPLIT writes them. */
export interface KeyPartViews {
  /** f32 `[parts, rows, D]`, unnormalised. */
  readonly part: TensorView;
  /** f32 `[parts, rows, 2]`: the running maximum (base 2) and the sum. */
  readonly stats: TensorView;
}

/**
 * Records the key-split run of problem p in `parts` parts: `run` dispatches the split kernel over
 * the scratch it is given, then the merge writes p.out (and p.lse).
 */
export function runKeyParts(ctx: WebGpuOpContext, p: AttentionParams, parts: number, run: (views: KeyPartViews) => void): void {
  const rows = p.batch * p.heads * p.seqQ;
  const scratch = ctx.scratch(keyPartBytes(p, parts));
  try {
    const views = { part: scratch.view('f32', [parts * rows * p.headDim]), stats: scratch.view('f32', [parts * rows * 2], parts * rows * p.headDim) };
    run(views);
    const key = `attention-combine|${attentionKey(p)}|${parts}`;
    const spec = cachedSpec(specs, key, () => ({
      op: 'attention',
      files: ['math.wgsl', 'attention-common.wgsl', 'attention-combine.wgsl'],
      flags: { ...attentionFlags(p), LENGTHS: false },
      consts: { D: p.headDim, KS: parts },
      roles: [
        { name: 'part', dtype: 'f32' },
        { name: 'stats', dtype: 'f32' },
        { name: 'out', dtype: p.out.dtype, write: true },
        ...(p.lse !== undefined ? [{ name: 'lse', dtype: 'f32' as const, write: true }] : []),
      ],
      params: ATTENTION_PARAMS,
    }));
    ctx.dispatcher.run(spec, [views.part, views.stats, p.out, ...(p.lse ? [p.lse] : [])], [p.batch, p.heads, p.kvHeads, p.seqQ, p.seqK, p.scale], groups1d(ctx, (rows * p.headDim) / 4, 256));
  } finally {
    scratch.release();
  }
}
