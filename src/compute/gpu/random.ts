/**
 * Seeded random fill and dropout on CUDA from the Philox stream shared with
 * the CPU backend: the host rounds the parameters exactly as the CPU backend
 * does (f32 low/span/threshold/scale), so the bits agree.
 */
import type { ArgType } from '../../ffi/kernel-args.js';
import type { TensorView } from '../core/view.js';
import { oneKernelSpec, randomSpec } from './kernel-specs.js';
import { gridFor, type LaunchContext } from './launch-context.js';

const UNIFORM_SIGNATURE: readonly ArgType[] = ['ptr', 'u64', 'u32', 'u32', 'f32', 'f32'];
const NORMAL_SIGNATURE: readonly ArgType[] = ['ptr', 'u64', 'u32', 'u32', 'f64', 'f64'];
const DROPOUT_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u32', 'u32', 'f32', 'f32'];
const BLOCK_LIMIT = 256;

/** Philox key words of a seed (a non-negative safe integer): low and high 32 bits. */
export function seedWords(seed: number): [number, number] {
  return [seed >>> 0, Math.floor(seed / 2 ** 32) >>> 0];
}

/** One thread per Philox block of four elements. */
function philoxBlocks(n: number): number {
  return Math.ceil(n / 4);
}

export function random<S>(ctx: LaunchContext<S>, out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void {
  const stream = ctx.enqueue(out);
  const [lo, hi] = seedWords(seed);
  if (kind === 'uniform') {
    const k = ctx.kernel(`random_uniform|${out.dtype}`, () => oneKernelSpec(randomSpec(out.dtype), 'random_uniform'), 'random_uniform', UNIFORM_SIGNATURE);
    const shape = k.shape(BLOCK_LIMIT);
    const low = Math.fround(a);
    const span = Math.fround(Math.fround(b) - low);
    k.launch({ grid: gridFor(philoxBlocks(out.size), shape), block: shape.block, stream }, ctx.address(out), out.size, lo, hi, low, span);
  } else {
    const k = ctx.kernel(`random_normal|${out.dtype}`, () => oneKernelSpec(randomSpec(out.dtype), 'random_normal'), 'random_normal', NORMAL_SIGNATURE);
    const shape = k.shape(BLOCK_LIMIT);
    k.launch({ grid: gridFor(philoxBlocks(out.size), shape), block: shape.block, stream }, ctx.address(out), out.size, lo, hi, a, b);
  }
}

export function dropout<S>(ctx: LaunchContext<S>, x: TensorView, out: TensorView, p: number, seed: number): void {
  const stream = ctx.enqueue(x, out);
  const [lo, hi] = seedWords(seed);
  const k = ctx.kernel(`dropout|${x.dtype}`, () => oneKernelSpec(randomSpec(x.dtype), 'dropout'), 'dropout', DROPOUT_SIGNATURE);
  const shape = k.shape(BLOCK_LIMIT);
  const threshold = Math.fround(p);
  const scale = Math.fround(1 / (1 - p));
  const grid = gridFor(philoxBlocks(x.size), shape);
  k.launch({ grid, block: shape.block, stream }, ctx.address(x), ctx.address(out), x.size, lo, hi, threshold, scale);
}
