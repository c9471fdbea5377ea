/** Swaps the last two dims of [batch, rows, cols] on WebGPU (raw element bits, 32 x 32 tiles). */
import type { TensorView } from '../core/view.js';
import { cachedSpec, type WebGpuOpContext } from './op-context.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

export function transpose(ctx: WebGpuOpContext, x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
  const spec = cachedSpec(specs, `transpose|${x.dtype}`, () => ({
    op: 'transpose',
    files: ['transpose.wgsl'],
    roles: [
      { name: 'x', dtype: x.dtype },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['batch', 'u32'], ['rows', 'u32'], ['cols', 'u32']],
  }));
  const max = ctx.dispatcher.maxGroups;
  const groups = [Math.min(Math.ceil(cols / 32), max), Math.min(Math.ceil(rows / 32), max), Math.min(batch, max)] as const;
  ctx.dispatcher.run(spec, [x, out], [batch, rows, cols], groups);
}
