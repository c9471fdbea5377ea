/**
 * Softmax, logSoftmax and layerNorm over the rows of [rows, cols] on CUDA,
 * with the row kernel chosen by `planRowKernel` (a warp or a block per row,
 * the row held in registers, or the looped kernel for very long rows).
 */
import type { ArgType } from '../../ffi/kernel-args.js';
import type { TensorView } from '../tensor-view.js';
import { layerNormSpec, softmaxSpec } from './kernel-specs.js';
import { aligned16, planRowKernel } from './launch-plans.js';
import type { CudaOpContext } from './op-context.js';

const SOFTMAX_CACHED: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'i32', 'i32'];
const SOFTMAX_LOOPED: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u64', 'i32'];
const LAYERNORM_CACHED: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'u64', 'i32', 'f32'];
const LAYERNORM_LOOPED: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'u64', 'u64', 'f32'];

export function softmax(ctx: CudaOpContext, x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
  const stream = ctx.enqueue(x, out);
  const launch = planRowKernel('softmax', rows, cols, x.dtype, aligned16(x) && aligned16(out));
  const looped = launch.kernel === 'softmax_looped';
  const k = ctx.kernel(`softmax|${x.dtype}|${launch.kernel}`, () => softmaxSpec(x.dtype), launch.kernel, looped ? SOFTMAX_LOOPED : SOFTMAX_CACHED);
  k.launch({ grid: launch.grid, block: launch.block, stream }, ctx.address(x), ctx.address(out), rows, cols, log ? 1 : 0);
}

export function layerNorm(
  ctx: CudaOpContext,
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
  const launch = planRowKernel('layernorm', rows, cols, x.dtype, vecOk);
  const looped = launch.kernel === 'layernorm_looped';
  const k = ctx.kernel(
    `layernorm|${x.dtype}|${launch.kernel}`,
    () => layerNormSpec(x.dtype),
    launch.kernel,
    looped ? LAYERNORM_LOOPED : LAYERNORM_CACHED,
  );
  const pg = gamma ? ctx.address(gamma) : 0n;
  const pb = beta ? ctx.address(beta) : 0n;
  k.launch({ grid: launch.grid, block: launch.block, stream }, ctx.address(x), pg, pb, ctx.address(out), rows, cols, eps);
}
