/** One-hot encoding on WebGPU (`kernels/wgsl/one-hot.wgsl`): one invocation per output element. */
import type { TensorView } from '../core/view.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

export function oneHot(ctx: WebGpuOpContext, indices: TensorView, out: TensorView, classes: number, inner: number): void {
  const spec = cachedSpec(specs, `oneHot|${out.dtype}`, () => ({
    op: 'oneHot',
    files: ['one-hot.wgsl'],
    roles: [
      { name: 'indices', dtype: 'i32' },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['n', 'u32'], ['classes', 'u32'], ['inner', 'u32']],
  }));
  ctx.dispatcher.run(spec, [indices, out], [out.size, classes, inner], groups1d(ctx, out.size, 256));
}
