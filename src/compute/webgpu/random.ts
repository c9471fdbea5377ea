/**
 * Seeded random fill and dropout on WebGPU from the Philox stream shared with the CPU backend.
 * The host rounds the parameters exactly as the CPU backend does (f32 low, span, threshold,
 * scale), so uniform values and dropout masks match bit for bit; normal values come from
 * float-float Box–Muller and round to within one ulp of the CPU's f64 (mean and std go down as
 * float-float pairs).
 */
import type { TensorView } from '../core/view.js';
import { philoxKey } from '../cpu/philox.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();
/** Invocations per workgroup (each one Philox block of four elements). */
const GROUP = 64;
const FILES = ['philox.wgsl', 'float-float.wgsl', 'random.wgsl'];

/** A double as an f32 pair hi + lo. */
function split(value: number): [number, number] {
  const hi = Math.fround(value);
  return [hi, Math.fround(value - hi)];
}

export function random(ctx: WebGpuOpContext, out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void {
  const [lo, hi] = philoxKey(seed);
  const normal = kind === 'normal';
  const spec = cachedSpec(specs, `random|${kind}|${out.dtype}`, () => ({
    op: normal ? 'randn' : 'rand',
    files: FILES,
    flags: { UNIFORM: !normal, NORMAL: normal, DROPOUT: false },
    roles: [{ name: 'out', dtype: out.dtype, write: true }],
    params: normal
      ? [['n', 'u32'], ['seed_lo', 'u32'], ['seed_hi', 'u32'], ['mean_hi', 'f32'], ['mean_lo', 'f32'], ['std_hi', 'f32'], ['std_lo', 'f32']]
      : [['n', 'u32'], ['seed_lo', 'u32'], ['seed_hi', 'u32'], ['low', 'f32'], ['span', 'f32']],
  }));
  let values: number[];
  if (normal) {
    values = [out.size, lo, hi, ...split(a), ...split(b)];
  } else {
    const low = Math.fround(a);
    values = [out.size, lo, hi, low, Math.fround(Math.fround(b) - low)];
  }
  ctx.dispatcher.run(spec, [out], values, groups1d(ctx, Math.ceil(out.size / 4), GROUP));
}

export function dropout(ctx: WebGpuOpContext, x: TensorView, out: TensorView, p: number, seed: number): void {
  const [lo, hi] = philoxKey(seed);
  const spec = cachedSpec(specs, `dropout|${x.dtype}`, () => ({
    op: 'dropout',
    files: FILES,
    flags: { UNIFORM: false, NORMAL: false, DROPOUT: true },
    roles: [
      { name: 'x', dtype: x.dtype },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['n', 'u32'], ['seed_lo', 'u32'], ['seed_hi', 'u32'], ['threshold', 'f32'], ['scale', 'f32']],
  }));
  const values = [x.size, lo, hi, Math.fround(p), Math.fround(1 / (1 - p))];
  ctx.dispatcher.run(spec, [x, out], values, groups1d(ctx, Math.ceil(x.size / 4), GROUP));
}
