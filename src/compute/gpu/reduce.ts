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
import { planReduce } from './launch-plans.js';
import type { LaunchContext, LaunchShape } from './launch-context.js';

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
  const kernel = new ReduceKernels(ctx, op, x.dtype);
  const divisor = op === 'mean' ? plan.axisLen : 1;
  const px = ctx.address(x);
  const po = ctx.address(out);
  const { outer, axisLen, inner } = plan;

  // The split kernel's occupancy decides how many blocks fill the device: loaded (on a first use,
  // compiled) only when the plan asks, for an axis long enough to split.
  let split: LaunchShape | undefined;
  const splitShape = () => (split ??= kernel.get('reduce_partial_vec', PARTIAL_SIGNATURE).shape(SPLIT_BLOCK_LIMIT));
  const launch = planReduce(plan, x, {
    get residentBlocks() {
      return splitShape().maxGrid;
    },
    get block() {
      return splitShape().block;
    },
    warpSize: ctx.warpSize,
  });
  const finish = new Finish(kernel, ctx.warpSize, stream, po, divisor);

  switch (launch.kind) {
    case 'short':
      kernel.get('reduce_short', COLS_SIGNATURE).launch({ grid: launch.grid, block: 256, stream }, px, po, outer, axisLen, inner, divisor);
      return;
    case 'rowsWarp':
      kernel.get('reduce_rows_warp', ROWS_SIGNATURE).launch({ grid: launch.grid, block: 128, stream }, px, po, outer, axisLen, divisor);
      return;
    case 'rowsBlock':
      kernel.get(`reduce_rows_block_${launch.access}`, ROWS_SIGNATURE).launch(
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
        finish.launch(scratch.address, outer * inner, splits);
      } finally {
        scratch.release();
      }
      return;
    }
    case 'split': {
      const scratch = ctx.scratch(outer * launch.splits * PARTIAL_BYTES);
      try {
        kernel.get(`reduce_partial_${launch.access}`, PARTIAL_SIGNATURE).launch(
          { grid: [launch.splits, outer], block: launch.block, stream },
          px,
          scratch.address,
          axisLen,
          launch.splits,
        );
        finish.launch(scratch.address, outer, launch.splits);
      } finally {
        scratch.release();
      }
      return;
    }
    case 'full': {
      const scratch = ctx.scratch(launch.splits * PARTIAL_BYTES);
      try {
        kernel.get(`reduce_full_${launch.access}`, FULL_SIGNATURE).launch(
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

/** The kernels of one reduction, looked up by name (each its own module: see `oneKernelSpec`). */
class ReduceKernels<S> {
  readonly #key: string;
  constructor(
    readonly ctx: LaunchContext<S>,
    readonly op: ReduceOp,
    readonly dtype: DType,
  ) {
    this.#key = `reduce|${op === 'mean' ? 'sum' : op}|${dtype}|`;
  }

  get(name: string, signature: readonly ArgType[]) {
    return this.ctx.kernel(this.#key + name, () => oneKernelSpec(reduceSpec(this.op, this.dtype), name), name, signature);
  }
}

/** The last step of a split reduction: each row's partials into the output. */
class Finish<S> {
  constructor(
    readonly kernels: ReduceKernels<S>,
    readonly warpSize: number,
    readonly stream: S,
    readonly out: bigint,
    readonly divisor: number,
  ) {}

  launch(partial: bigint, rows: number, splits: number): void {
    this.kernels
      .get('reduce_finish', FINISH_SIGNATURE)
      .launch({ grid: Math.ceil(rows / (128 / this.warpSize)), block: 128, stream: this.stream }, partial, this.out, rows, splits, this.divisor);
  }
}
