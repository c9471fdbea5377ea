/**
 * The backend methods whose launchers are written once against {@link LaunchContext} (fill, random,
 * cast, elementwise, reductions, row ops, transpose, dropout, one-hot, the optimizer step): the CUDA
 * and HIP backends extend this class and supply the context (kernels, addresses, stream ordering,
 * scratch and uploads) and `copy`.
 */
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import type { OptimizerStepParams } from '../core/optimizer-params.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { TensorView } from '../core/view.js';
import * as elementwise from './elementwise.js';
import type { ModuleSpec } from './kernel-sources.js';
import type { LaunchContext, LaunchKernel, Scratch } from './launch-context.js';
import { dropout, random } from './random.js';
import { reduce } from './reduce.js';
import { oneHot } from './one-hot.js';
import { optimizerStep } from './optimizer.js';
import { layerNorm, softmax } from './rows.js';
import { transpose } from './transpose.js';

/** leakyRelu's slope when the caller gives none (as the CPU backend). */
const DEFAULT_ALPHA = 0.01;

export abstract class PortableOpsBackend<S> implements LaunchContext<S> {
  abstract readonly multiprocessorCount: number;
  abstract readonly warpSize: number;
  abstract readonly clusterLaunch: boolean;
  abstract enqueue(...views: (TensorView | undefined)[]): S;
  abstract address(view: TensorView): bigint;
  abstract scratch(bytes: number): Scratch;
  abstract upload(data: ArrayBufferView): Scratch;
  abstract blockCounter(): bigint;
  abstract kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): LaunchKernel<S>;
  abstract copy(dst: TensorView, src: TensorView): void;

  fill(out: TensorView, value: number): void {
    elementwise.fill(this, out, value);
  }

  random(out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void {
    random(this, out, kind, seed, a, b);
  }

  cast(x: TensorView, out: TensorView): void {
    if (x.dtype === out.dtype) this.copy(out, x);
    else elementwise.cast(this, x, out);
  }

  unary(op: UnaryOp, x: TensorView, out: TensorView, alpha = DEFAULT_ALPHA): void {
    elementwise.unary(this, op, x, out, alpha);
  }

  activationGrad(op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha = DEFAULT_ALPHA): void {
    elementwise.activationGrad(this, op, x, dy, out, alpha);
  }

  binary(op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
    elementwise.binary(this, op, a, b, out, plan);
  }

  binaryScalar(op: BinaryOp, x: TensorView, scalar: number, scalarFirst: boolean, out: TensorView): void {
    elementwise.binaryScalar(this, op, x, scalar, scalarFirst, out);
  }

  reduce(op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
    // Over an axis of one element the result is the input (argmax: index 0): a copy moves it at
    // full bandwidth, where the short-axis kernel reads one element per thread.
    if (plan.axisLen === 1) {
      if (op === 'argmax') this.fill(out, 0);
      else this.copy(out, x);
      return;
    }
    reduce(this, op, x, out, plan);
  }

  oneHot(indices: TensorView, out: TensorView, _outer: number, classes: number, inner: number): void {
    oneHot(this, indices, out, classes, inner);
  }

  softmax(x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
    softmax(this, x, out, rows, cols, log);
  }

  layerNorm(x: TensorView, gamma: TensorView | undefined, beta: TensorView | undefined, out: TensorView, rows: number, cols: number, eps: number): void {
    layerNorm(this, x, gamma, beta, out, rows, cols, eps);
  }

  transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
    transpose(this, x, out, batch, rows, cols);
  }

  dropout(x: TensorView, out: TensorView, p: number, seed: number): void {
    dropout(this, x, out, p, seed);
  }

  optimizerStep(params: OptimizerStepParams): void {
    optimizerStep(this, params);
  }
}
