/** Swaps the last two dims of [batch, rows, cols] on CUDA with the tiled shared-memory kernel. */
import type { ArgType } from '../../ffi/kernel-args.js';
import { dtypeSize } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import { transposeSpec } from './kernel-specs.js';
import { planTranspose } from './launch-plans.js';
import type { LaunchContext } from './launch-context.js';

const SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u32', 'u32', 'u32'];

export function transpose<S>(ctx: LaunchContext<S>, x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
  const stream = ctx.enqueue(x, out);
  const k = ctx.kernel(`transpose|${dtypeSize[x.dtype]}`, () => transposeSpec(x.dtype), 'transpose_tiled', SIGNATURE);
  const { grid, block } = planTranspose(batch, rows, cols);
  k.launch({ grid, block, stream }, ctx.address(x), ctx.address(out), batch, rows, cols);
}
