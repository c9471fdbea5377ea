/** One-hot encoding on CUDA and HIP (`kernels/one_hot.cu`): one thread per output element. */
import type { ArgType } from '../../ffi/kernel-args.js';
import type { TensorView } from '../core/view.js';
import { oneHotSpec } from './kernel-specs.js';
import { gridFor, type LaunchContext } from './launch-context.js';

const SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u64', 'u64'];
const BLOCK_LIMIT = 256;

export function oneHot<S>(ctx: LaunchContext<S>, indices: TensorView, out: TensorView, classes: number, inner: number): void {
  const stream = ctx.enqueue(indices, out);
  const k = ctx.kernel(`one_hot|${out.dtype}`, () => oneHotSpec(out.dtype), 'one_hot', SIGNATURE);
  const shape = k.shape(BLOCK_LIMIT);
  k.launch({ grid: gridFor(out.size, shape), block: shape.block, stream }, ctx.address(indices), ctx.address(out), out.size, classes, inner);
}
