/**
 * Reductions on CUDA along one axis of [outer, axisLen, inner], or of
 * everything: a thread per output for short axes, a warp or a block per row for a contiguous axis, per-block
 * partials plus a fixed-order finish for few long rows, a single launch whose
 * last block combines the partials for full reductions, and column kernels
 * (optionally split along the axis) for a strided axis. All deterministic.
 */
import type { ArgType } from '../../ffi/kernel-args.js';
import type { DType } from '../core/dtype.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { TensorView } from '../core/view.js';
import { oneKernelSpec, reduceSpec } from './kernel-specs.js';
import { planReduce, type ReduceDevice } from './launch-plans.js';
import { LaunchMemo, type LaunchContext, type LaunchKernel, type LaunchShape } from './launch-context.js';

const ROWS_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u64', 'f32'];
const COLS_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u64', 'u64', 'f32'];
const COLS_SPLIT_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u64', 'u64'];
const PARTIAL_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u32'];
const FULL_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'u64', 'u32', 'f32'];
const FINISH_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'u64', 'u32', 'f32'];
/** Bytes of the largest partial accumulator (argmax's value + index). */
const PARTIAL_BYTES = 8;
const SPLIT_BLOCK_LIMIT = 512;

export function reduce<S>(ctx: LaunchContext<S>, op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
  const stream = ctx.enqueue(x, out);
  const kernel = reduceKernels(ctx, op, x.dtype);
  const divisor = op === 'mean' ? plan.axisLen : 1;
  const px = ctx.address(x);
  const po = ctx.address(out);
  const { outer, axisLen, inner } = plan;
  const launch = planReduce(plan, x, kernel);

  switch (launch.kind) {
    case 'short':
      kernel.get('reduce_short', COLS_SIGNATURE).launch({ grid: launch.grid, block: 256, stream }, px, po, outer, axisLen, inner, divisor);
      return;
    case 'rowsWarp':
      kernel.get('reduce_rows_warp', ROWS_SIGNATURE).launch({ grid: launch.grid, block: 128, stream }, px, po, outer, axisLen, divisor);
      return;
    case 'rowsBlock':
      kernel.get(launch.access === 'vec' ? 'reduce_rows_block_vec' : 'reduce_rows_block_scalar', ROWS_SIGNATURE).launch(
        { grid: launch.grid, block: launch.block, stream },
        px,
        po,
        outer,
        axisLen,
        divisor,
      );
      return;
    case 'cols':
      kernel.get('reduce_cols', COLS_SIGNATURE).launch({ grid: launch.grid, block: launch.block, stream }, px, po, outer, axisLen, inner, divisor);
      return;
    case 'colsSplit': {
      const splits = launch.grid[2];
      const scratch = ctx.scratch(outer * inner * splits * PARTIAL_BYTES);
      try {
        kernel.get('reduce_cols_split', COLS_SPLIT_SIGNATURE).launch(
          { grid: launch.grid, block: launch.block, stream },
          px,
          scratch.address,
          outer,
          axisLen,
          inner,
        );
        kernel.finish(stream, scratch.address, po, outer * inner, splits, divisor);
      } finally {
        scratch.release();
      }
      return;
    }
    case 'split': {
      const scratch = ctx.scratch(outer * launch.splits * PARTIAL_BYTES);
      try {
        kernel.get(launch.access === 'vec' ? 'reduce_partial_vec' : 'reduce_partial_scalar', PARTIAL_SIGNATURE).launch(
          { grid: [launch.splits, outer], block: launch.block, stream },
          px,
          scratch.address,
          axisLen,
          launch.splits,
        );
        kernel.finish(stream, scratch.address, po, outer, launch.splits, divisor);
      } finally {
        scratch.release();
      }
      return;
    }
    case 'full': {
      const scratch = ctx.scratch(launch.splits * PARTIAL_BYTES);
      try {
        kernel.get(launch.access === 'vec' ? 'reduce_full_vec' : 'reduce_full_scalar', FULL_SIGNATURE).launch(
          { grid: launch.splits, block: launch.block, stream },
          px,
          scratch.address,
          po,
          ctx.blockCounter(),
          axisLen,
          launch.splits,
          divisor,
        );
      } finally {
        scratch.release();
      }
      return;
    }
  }
}

/** The kernels of each reduction, per backend, under (kernel op, dtype). */
const memo = new LaunchMemo<ReduceKernels<unknown>>();

function reduceKernels<S>(ctx: LaunchContext<S>, op: ReduceOp, dtype: DType): ReduceKernels<S> {
  // mean runs sum's kernels (the divisor is an argument).
  const kernelOp = op === 'mean' ? 'sum' : op;
  const kept = memo.find(ctx, kernelOp, dtype, '') as ReduceKernels<S> | undefined;
  return kept ?? (memo.keep(ctx, kernelOp, dtype, '', new ReduceKernels(ctx, kernelOp, dtype) as ReduceKernels<unknown>) as ReduceKernels<S>);
}

/**
 * The kernels of one reduction and dtype on one backend, each looked up by name once (each its own
 * module: see `oneKernelSpec`). It is also the {@link ReduceDevice} the plans read: the split
 * kernel's occupancy decides how many blocks fill the device, so that kernel is loaded (on a first
 * use, compiled) only when a plan asks, for an axis long enough to split.
 */
class ReduceKernels<S> implements ReduceDevice {
  readonly warpSize: number;
  readonly #key: string;
  readonly #kernels = new Map<string, LaunchKernel<S>>();
  #split: LaunchShape | undefined = undefined;

  constructor(
    readonly ctx: LaunchContext<S>,
    readonly op: Exclude<ReduceOp, 'mean'>,
    readonly dtype: DType,
  ) {
    this.warpSize = ctx.warpSize;
    this.#key = `reduce|${op}|${dtype}|`;
  }

  get residentBlocks(): number {
    return this.#splitShape().maxGrid;
  }

  get block(): number {
    return this.#splitShape().block;
  }

  get(name: string, signature: readonly ArgType[]): LaunchKernel<S> {
    let k = this.#kernels.get(name);
    if (k === undefined) {
      k = this.ctx.kernel(this.#key + name, () => oneKernelSpec(reduceSpec(this.op, this.dtype), name), name, signature);
      this.#kernels.set(name, k);
    }
    return k;
  }

  /** The last step of a split reduction: each row's partials into the output. */
  finish(stream: S, partial: bigint, out: bigint, rows: number, splits: number, divisor: number): void {
    this.get('reduce_finish', FINISH_SIGNATURE).launch(
      { grid: Math.ceil(rows / (128 / this.warpSize)), block: 128, stream },
      partial,
      out,
      rows,
      splits,
      divisor,
    );
  }

  #splitShape(): LaunchShape {
    return (this.#split ??= this.get('reduce_partial_vec', PARTIAL_SIGNATURE).shape(SPLIT_BLOCK_LIMIT));
  }
}
