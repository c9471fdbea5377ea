/** Swaps the last two dims of [batch, rows, cols] on CUDA: the tiled shared-memory kernel, or a thread per element for narrow matrices. */
import type { ArgType } from '../../ffi/kernel-args.js';
import { dtypeSize } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import { transposeSpec } from './kernel-specs.js';
import { planTranspose } from './launch-plans.js';
import type { LaunchContext } from './launch-context.js';

const SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u32', 'u32', 'u32'];

export function transpose<S>(ctx: LaunchContext<S>, x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
  const stream = ctx.enqueue(x, out);
  const launch = planTranspose(batch, rows, cols);
  const entry = launch.kind === 'tiled' ? 'transpose_tiled' : 'transpose_narrow';
  const k = ctx.kernel(`transpose|${dtypeSize[x.dtype]}|${entry}`, () => transposeSpec(x.dtype), entry, SIGNATURE);
  k.launch({ grid: launch.grid, block: launch.block, stream }, ctx.address(x), ctx.address(out), batch, rows, cols);
}
