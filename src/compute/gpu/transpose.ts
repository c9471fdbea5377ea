/** Swaps the last two dims of [batch, rows, cols] on CUDA and HIP: the tiled shared-memory kernel, or the narrow kernels for matrices of a few rows or columns. */
import type { ArgType } from '../../ffi/kernel-args.js';
import { dtypeSize } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import { oneKernelSpec, transposeSpec } from './kernel-specs.js';
import { accessKind, planTranspose, vectorWidth } from './launch-plans.js';
import type { LaunchContext } from './launch-context.js';

const SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u32', 'u32', 'u32'];

export function transpose<S>(ctx: LaunchContext<S>, x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
  const stream = ctx.enqueue(x, out);
  const launch = planTranspose(batch, rows, cols, vectorWidth(x.dtype), accessKind(x, out) === 'vec');
  const name = launch.kernel;
  const k = ctx.kernel(`transpose|${dtypeSize[x.dtype]}|${name}`, () => oneKernelSpec(transposeSpec(x.dtype), name), name, SIGNATURE);
  k.launch({ grid: launch.grid, block: launch.block, stream }, ctx.address(x), ctx.address(out), batch, rows, cols);
}
