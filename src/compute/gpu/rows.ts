/**
 * Softmax, logSoftmax and layerNorm over the rows of [rows, cols] (CUDA and
 * HIP), with the row kernel chosen by `planRowKernel` (a warp or a block per
 * row, the row held in registers, or the looped kernel for very long rows; softmax rows of at
 * most 16 columns a thread each),
 * the staged softmax for long rows where a block can hold one in shared memory (f32 rows of 32K
 * columns: the split kernel, part in registers, part in shared memory), and long rows split over
 * thread-block clusters where the device has them.
 */
import type { ArgType } from '../../ffi/kernel-args.js';
import type { DType } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import { clusterSoftmaxSpec, layerNormSpec, oneKernelSpec, softmaxSpec } from './kernel-specs.js';
import { aligned16, planClusterSoftmax, planRowKernel, planSplitSoftmax, planStagedSoftmax, planThreadSoftmax, type ClusterRowLaunch } from './launch-plans.js';
import { LaunchMemo, type LaunchContext, type LaunchKernel } from './launch-context.js';

const SOFTMAX_CACHED: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'i32', 'i32'];
const SOFTMAX_SPLIT: readonly ArgType[] = ['ptr', 'ptr', 'i32', 'i32'];
const SOFTMAX_CLUSTER: readonly ArgType[] = ['ptr', 'ptr', 'i32', 'i32', 'i32'];
const SOFTMAX_LOOPED: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u64', 'i32'];
const LAYERNORM_CACHED: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'u64', 'i32', 'f32'];
const LAYERNORM_LOOPED: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'u64', 'u64', 'f32'];

/** The row kernels, per backend, under (family, dtype, kernel name). */
const kernels = new LaunchMemo<LaunchKernel<unknown>>();

/** The kernel `name` of `family` for `dtype`, looked up in the registry (under `family|dtype|name`) on a first launch only. */
function rowKernel<S>(ctx: LaunchContext<S>, family: 'softmax' | 'layernorm', dtype: DType, name: string, signature: readonly ArgType[]): LaunchKernel<S> {
  const kept = kernels.find(ctx, family, dtype, name) as LaunchKernel<S> | undefined;
  if (kept !== undefined) return kept;
  const spec = family === 'softmax' ? softmaxSpec(dtype) : layerNormSpec(dtype);
  const k = ctx.kernel(`${family}|${dtype}|${name}`, () => oneKernelSpec(spec, name), name, signature);
  return kernels.keep(ctx, family, dtype, name, k as LaunchKernel<unknown>) as LaunchKernel<S>;
}

/**
 * (log)softmax over the rows of [rows, cols]. `clusters: false` keeps a row within one block even
 * where the device launches clusters (the benchmarks and tests compare both).
 */
export function softmax<S>(ctx: LaunchContext<S>, x: TensorView, out: TensorView, rows: number, cols: number, log: boolean, clusters = ctx.clusterLaunch): void {
  const vecOk = aligned16(x) && aligned16(out);
  const cluster = clusters && ctx.clusterLaunch ? planClusterSoftmax(cols, x.dtype, vecOk) : undefined;
  if (cluster) {
    clusterSoftmax(ctx, x, out, rows, cols, log, cluster);
    return;
  }
  const stream = ctx.enqueue(x, out);
  const split = planSplitSoftmax(cols, x.dtype, vecOk);
  if (split) {
    const k = rowKernel(ctx, 'softmax', x.dtype, split.kernel, SOFTMAX_SPLIT);
    const resident = k.residentGrid(split.block, split.sharedMemBytes);
    // With one block per SM the staged kernel, which overlaps a block's next row, does better.
    if (resident >= 2 * ctx.multiprocessorCount) {
      const grid = Math.min(rows, resident);
      k.launch({ grid, block: split.block, sharedMemBytes: split.sharedMemBytes, stream }, ctx.address(x), ctx.address(out), rows, log ? 1 : 0);
      return;
    }
  }
  const launch = planThreadSoftmax(rows, cols) ?? planRowKernel('softmax', rows, cols, x.dtype, vecOk, ctx.warpSize);
  const staged = planStagedSoftmax(launch, cols, x.dtype);
  if (staged) {
    const k = rowKernel(ctx, 'softmax', x.dtype, staged.kernel, SOFTMAX_CACHED);
    // A device whose blocks cannot hold a staged row (AMD's 64 KB LDS) keeps the cached kernel.
    const resident = k.residentGrid(staged.block, staged.sharedMemBytes);
    if (resident > 0) {
      const grid = Math.min(rows, resident);
      k.launch({ grid, block: staged.block, sharedMemBytes: staged.sharedMemBytes, stream }, ctx.address(x), ctx.address(out), rows, cols, log ? 1 : 0);
      return;
    }
  }
  const looped = launch.kernel === 'softmax_looped';
  const k = rowKernel(ctx, 'softmax', x.dtype, launch.kernel, looped ? SOFTMAX_LOOPED : SOFTMAX_CACHED);
  k.launch({ grid: launch.grid, block: launch.block, stream }, ctx.address(x), ctx.address(out), rows, cols, log ? 1 : 0);
}

/**
 * (log)softmax of 16-byte-aligned rows (cols a multiple of the vector width) with `launch`'s
 * cluster split; the device must launch clusters ({@link LaunchContext.clusterLaunch}).
 */
export function clusterSoftmax<S>(ctx: LaunchContext<S>, x: TensorView, out: TensorView, rows: number, cols: number, log: boolean, launch: ClusterRowLaunch): void {
  const stream = ctx.enqueue(x, out);
  const k = ctx.kernel(`softmax_cluster|${x.dtype}`, () => clusterSoftmaxSpec(x.dtype), 'softmax_cluster', SOFTMAX_CLUSTER);
  const config = { grid: rows * launch.cluster, block: launch.block, clusterDim: [launch.cluster, 1, 1] as const, stream };
  k.launch(config, ctx.address(x), ctx.address(out), cols, launch.slice, log ? 1 : 0);
}

export function layerNorm<S>(
  ctx: LaunchContext<S>,
  x: TensorView,
  gamma: TensorView | undefined,
  beta: TensorView | undefined,
  out: TensorView,
  rows: number,
  cols: number,
  eps: number,
): void {
  const stream = ctx.enqueue(x, gamma, beta, out);
  const vecOk = aligned16(x) && aligned16(out) && (!gamma || aligned16(gamma)) && (!beta || aligned16(beta));
  const launch = planRowKernel('layernorm', rows, cols, x.dtype, vecOk, ctx.warpSize);
  const looped = launch.kernel === 'layernorm_looped';
  const k = rowKernel(ctx, 'layernorm', x.dtype, launch.kernel, looped ? LAYERNORM_LOOPED : LAYERNORM_CACHED);
  const pg = gamma ? ctx.address(gamma) : 0n;
  const pb = beta ? ctx.address(beta) : 0n;
  k.launch({ grid: launch.grid, block: launch.block, stream }, ctx.address(x), pg, pb, ctx.address(out), rows, cols, eps);
}
