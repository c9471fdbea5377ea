/**
 * Elementwise ops on CUDA: fill, cast, unary math and activations, activation
 * gradients, and broadcasting binary ops. Each picks the 16-byte vector
 * variant of its kernel when the views are aligned and sizes its grid-stride
 * launch from the kernel's occupancy.
 */
import type { ArgType } from '../../ffi/kernel-args.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import { dtypeSize, f32ToBf16Bits, f32ToF16Bits, type DType } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import { binarySpec, castSpec, FILL_SPEC, gradSpec, oneKernelSpec, unarySpec } from './kernel-specs.js';
import { accessKind, planBinary, vectorWidth } from './launch-plans.js';
import { gridFor, LaunchMemo, type LaunchContext, type LaunchKernel } from './launch-context.js';

/** Grid-stride kernels use blocks of at most this many threads. */
const BLOCK_LIMIT = 512;
/** Threads of a block of the general broadcast's row kernel (each takes 4 columns of a row per pass). */
const GENERAL_ROW_BLOCK = 256;

const UNARY_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'f32'];
const GRAD_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64', 'f32'];
const BINARY_FLAT_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64'];
const BINARY_IMM_F32_SIGNATURE: readonly ArgType[] = ['ptr', 'f32', 'ptr', 'u64'];
const BINARY_IMM_I32_SIGNATURE: readonly ArgType[] = ['ptr', 'i32', 'ptr', 'u64'];
const BINARY_ROW_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64', 'u32'];
const BINARY_GENERAL32_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u32', ...new Array<ArgType>(30).fill('u32')];
const BINARY_GENERAL64_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64', ...new Array<ArgType>(18).fill('u64')];
const FILL_SIGNATURE: readonly ArgType[] = ['ptr', 'u64', 'u32'];
const CAST_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64'];

/** Consecutive outputs a thread of binary_general32 takes per pass: `GC_GENERAL_RUN` of kernels/binary.cu. */
const GENERAL_RUN = 4;

/** Packs each thread of a pack loop handles per tile: `GC_UNROLL` of kernels/elementwise.cuh. */
const PACK_UNROLL = 4;

/**
 * Grid of a pack-loop kernel: one block per tile of `unroll` × block packs, all in one launch
 * wave of small blocks. A grid capped at the resident blocks instead loops, and its last pass
 * runs part-empty (about 3% of the time at 2^26 elements).
 */
function tileGrid(packCount: number, block: number, unroll = PACK_UNROLL): number {
  return Math.max(1, Math.min(Math.ceil(packCount / (block * unroll)), 2 ** 31 - 1));
}

/** The smallest block {@link tileBlock} shrinks to. */
const MIN_TILE_BLOCK = 64;

/**
 * Block of a pack-loop kernel: the kernel's own, halved (to 64 threads at least) while its tiles
 * would give fewer than two blocks per multiprocessor. A mid-size op (10^5–10^6 elements) then
 * spreads over every SM instead of a few large tiles: f16 tanh of 937293 elements ran on 58
 * blocks of 512 threads, half the H200's SMs, at 2x torch's time.
 */
function tileBlock(multiprocessors: number, packCount: number, block: number, unroll = PACK_UNROLL): number {
  const wanted = 2 * multiprocessors;
  while (block > MIN_TILE_BLOCK && Math.ceil(packCount / (block * unroll)) < wanted) block = Math.max(MIN_TILE_BLOCK, ((block >> 1) + 31) & ~31);
  return block;
}

/** Packs of `width` elements a pack loop over n elements walks (the tail past the last whole pack aside). */
function packs(n: number, access: 'vec' | 'scalar', width: number): number {
  return access === 'vec' ? Math.ceil(n / width) : n;
}

const bitsF32 = new Float32Array(1);
const bitsU32 = new Uint32Array(bitsF32.buffer);

/** The bit pattern `fill` stores for `value` in `dtype`, as the CPU backend rounds it. */
export function fillBits(value: number, dtype: DType): number {
  switch (dtype) {
    case 'f32':
      bitsF32[0] = value;
      return bitsU32[0]!;
    case 'i32':
      return (value | 0) >>> 0;
    case 'f16':
      return f32ToF16Bits(value);
    case 'bf16':
      return f32ToBf16Bits(value);
  }
}

/** The kernels of these launchers, per backend, under (op or family, dtype, kernel name). */
const kernels = new LaunchMemo<LaunchKernel<unknown>>();

/** The kernel kept for `ctx` under (a, b, name), if any. */
function kept<S>(ctx: LaunchContext<S>, a: string, b: string, name: string): LaunchKernel<S> | undefined {
  return kernels.find(ctx, a, b, name) as LaunchKernel<S> | undefined;
}

/** Keeps `kernel` (the registry's, looked up on a first launch) for `ctx` under (a, b, name). */
function keep<S>(ctx: LaunchContext<S>, a: string, b: string, name: string, kernel: LaunchKernel<S>): LaunchKernel<S> {
  return kernels.keep(ctx, a, b, name, kernel as LaunchKernel<unknown>) as LaunchKernel<S>;
}

export function fill<S>(ctx: LaunchContext<S>, out: TensorView, value: number): void {
  const stream = ctx.enqueue(out);
  const wide = dtypeSize[out.dtype] === 4;
  const access = accessKind(out);
  const name = wide ? (access === 'vec' ? 'fill32_vec' : 'fill32_scalar') : access === 'vec' ? 'fill16_vec' : 'fill16_scalar';
  const k = kept(ctx, 'fill', '', name) ?? keep(ctx, 'fill', '', name, ctx.kernel(name, () => FILL_SPEC, name, FILL_SIGNATURE));
  const count = packs(out.size, access, wide ? 4 : 8);
  const block = tileBlock(ctx.multiprocessorCount, count, k.shape(BLOCK_LIMIT).block, 1);
  k.launch({ grid: tileGrid(count, block, 1), block, stream }, ctx.address(out), out.size, fillBits(value, out.dtype));
}

export function cast<S>(ctx: LaunchContext<S>, x: TensorView, out: TensorView): void {
  const stream = ctx.enqueue(x, out);
  const access = accessKind(x, out);
  const name = access === 'vec' ? 'cast_vec' : 'cast_scalar';
  const k =
    kept(ctx, x.dtype, out.dtype, name) ??
    keep(ctx, x.dtype, out.dtype, name, ctx.kernel(`cast|${x.dtype}|${out.dtype}|${access}`, () => castSpec(x.dtype, out.dtype), name, CAST_SIGNATURE));
  const count = packs(x.size, access, 4);
  const block = tileBlock(ctx.multiprocessorCount, count, k.shape(BLOCK_LIMIT).block);
  k.launch({ grid: tileGrid(count, block), block, stream }, ctx.address(x), ctx.address(out), x.size);
}

export function unary<S>(ctx: LaunchContext<S>, op: UnaryOp, x: TensorView, out: TensorView, alpha: number): void {
  const stream = ctx.enqueue(x, out);
  const access = accessKind(x, out);
  const name = access === 'vec' ? 'unary_vec' : 'unary_scalar';
  const k =
    kept(ctx, op, x.dtype, name) ??
    keep(ctx, op, x.dtype, name, ctx.kernel(`unary|${op}|${x.dtype}|${access}`, () => oneKernelSpec(unarySpec(op, x.dtype), name), name, UNARY_SIGNATURE));
  const count = packs(x.size, access, vectorWidth(x.dtype));
  const block = tileBlock(ctx.multiprocessorCount, count, k.shape(BLOCK_LIMIT).block);
  k.launch({ grid: tileGrid(count, block), block, stream }, ctx.address(x), ctx.address(out), x.size, alpha);
}

export function activationGrad<S>(
  ctx: LaunchContext<S>,
  op: ActivationGradOp,
  x: TensorView,
  dy: TensorView,
  out: TensorView,
  alpha: number,
): void {
  const stream = ctx.enqueue(x, dy, out);
  const access = accessKind(x, dy, out);
  const name = access === 'vec' ? 'grad_vec' : 'grad_scalar';
  const k =
    kept(ctx, op, x.dtype, name) ??
    keep(ctx, op, x.dtype, name, ctx.kernel(`grad|${op}|${x.dtype}|${access}`, () => oneKernelSpec(gradSpec(op, x.dtype), name), name, GRAD_SIGNATURE));
  const count = packs(x.size, access, vectorWidth(x.dtype));
  const block = tileBlock(ctx.multiprocessorCount, count, k.shape(BLOCK_LIMIT).block);
  k.launch({ grid: tileGrid(count, block), block, stream }, ctx.address(x), ctx.address(dy), ctx.address(out), x.size, alpha);
}

/** The scalar-operand kernels by side and access. */
const IMM_KERNELS = {
  a: { vec: 'binary_imm_a_vec', scalar: 'binary_imm_a_scalar' },
  b: { vec: 'binary_imm_b_vec', scalar: 'binary_imm_b_scalar' },
} as const;

/** out = x op scalar (scalar op x when `scalarFirst`), the scalar a kernel argument in the compute type (f32, or i32). */
export function binaryScalar<S>(ctx: LaunchContext<S>, op: BinaryOp, x: TensorView, scalar: number, scalarFirst: boolean, out: TensorView): void {
  const stream = ctx.enqueue(x, out);
  const access = accessKind(x, out);
  const name = IMM_KERNELS[scalarFirst ? 'a' : 'b'][access];
  const signature = x.dtype === 'i32' ? BINARY_IMM_I32_SIGNATURE : BINARY_IMM_F32_SIGNATURE;
  const k =
    kept(ctx, op, x.dtype, name) ??
    keep(ctx, op, x.dtype, name, ctx.kernel(`binary|${op}|${x.dtype}|${name}`, () => oneKernelSpec(binarySpec(op, x.dtype), name), name, signature));
  const count = packs(x.size, access, vectorWidth(x.dtype));
  const block = tileBlock(ctx.multiprocessorCount, count, k.shape(BLOCK_LIMIT).block);
  k.launch({ grid: tileGrid(count, block), block, stream }, ctx.address(x), scalar, ctx.address(out), x.size);
}

export function binary<S>(ctx: LaunchContext<S>, op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
  const stream = ctx.enqueue(a, b, out);
  const launch = planBinary(plan, a, b, out);
  const name = launch.kernel;
  const dtype = out.dtype;
  const pa = ctx.address(a);
  const pb = ctx.address(b);
  const po = ctx.address(out);
  const width = vectorWidth(dtype);
  switch (launch.kind) {
    case 'flat': {
      const k =
        kept(ctx, op, dtype, name) ??
        keep(ctx, op, dtype, name, ctx.kernel(`binary|${op}|${dtype}|${name}`, () => oneKernelSpec(binarySpec(op, dtype), name), name, BINARY_FLAT_SIGNATURE));
      const count = packs(launch.n, name.endsWith('_vec') ? 'vec' : 'scalar', width);
      const block = tileBlock(ctx.multiprocessorCount, count, k.shape(BLOCK_LIMIT).block);
      k.launch({ grid: tileGrid(count, block), block, stream }, pa, pb, po, launch.n);
      return;
    }
    case 'row': {
      const k =
        kept(ctx, op, dtype, name) ??
        keep(ctx, op, dtype, name, ctx.kernel(`binary|${op}|${dtype}|${name}`, () => oneKernelSpec(binarySpec(op, dtype), name), name, BINARY_ROW_SIGNATURE));
      const shape = k.shape(BLOCK_LIMIT);
      const access = name.endsWith('_scalar') ? 'scalar' : 'vec';
      const grid = gridFor(packs(launch.n, access, width), shape);
      k.launch({ grid, block: shape.block, stream }, pa, pb, po, launch.n, launch.cols);
      return;
    }
    case 'general': {
      const signature = name === 'binary_general32' ? BINARY_GENERAL32_SIGNATURE : BINARY_GENERAL64_SIGNATURE;
      const k =
        kept(ctx, op, dtype, name) ??
        keep(ctx, op, dtype, name, ctx.kernel(`binary|${op}|${dtype}|${name}`, () => oneKernelSpec(binarySpec(op, dtype), name), name, signature));
      const shape = k.shape(BLOCK_LIMIT);
      // The 32-bit kernel takes GENERAL_RUN consecutive outputs per thread.
      const work = name === 'binary_general32' ? Math.ceil(launch.n / GENERAL_RUN) : launch.n;
      k.launch({ grid: gridFor(work, shape), block: shape.block, stream }, pa, pb, po, launch.n, ...launch.args);
      return;
    }
    case 'generalRows': {
      const signature = name === 'binary_general_rows32' ? BINARY_GENERAL32_SIGNATURE : BINARY_GENERAL64_SIGNATURE;
      const k =
        kept(ctx, op, dtype, name) ??
        keep(ctx, op, dtype, name, ctx.kernel(`binary|${op}|${dtype}|${name}`, () => oneKernelSpec(binarySpec(op, dtype), name), name, signature));
      const grid: [number, number] = [Math.ceil(launch.cols / (4 * GENERAL_ROW_BLOCK)), Math.min(launch.rows, 65535)];
      k.launch({ grid, block: GENERAL_ROW_BLOCK, stream }, pa, pb, po, launch.rows, ...launch.args);
      return;
    }
  }
}
