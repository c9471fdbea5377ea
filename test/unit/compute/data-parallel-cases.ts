/**
 * What the DataParallel tests share (here on the CPU; on CUDA in test/gpu/multi/, and in the
 * processes its multi-process fixture starts, so nothing here calls vitest): two small models
 * (an MLP and a GRU with an output layer), their parameters and a global batch from host values,
 * the reference (one GpuCompute, the mean loss over the whole batch), the data-parallel run (each
 * rank the mean loss over its share), and their comparison on the host.
 */
import type { Communicator } from '../../../src/compute/communicator.js';
import { DataParallel, type DataParallelOptions } from '../../../src/compute/data-parallel.js';
import { AdamW } from '../../../src/compute/optim/adamw.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { randomValues, relError } from './helpers.js';

/** A model: its parameters' shapes, one row of input and target, and its mean loss over a batch. */
export interface ModelCase {
  readonly name: string;
  readonly shapes: readonly (readonly number[])[];
  /** Input shape of a batch of `rows`. */
  input(rows: number): number[];
  /** Target shape of a batch of `rows`. */
  target(rows: number): number[];
  loss(g: GpuCompute, params: readonly Tensor[], x: Tensor, y: Tensor): Tensor;
}

export const MLP: ModelCase = {
  name: 'MLP (5 → 8 tanh → 6 relu → 3, mse)',
  shapes: [[8, 5], [8], [6, 8], [6], [3, 6], [3]],
  input: (rows) => [rows, 5],
  target: (rows) => [rows, 3],
  loss: (g, [w1, b1, w2, b2, w3, b3], x, y) => g.mseLoss(g.linear(g.linear(g.linear(x, w1!, b1, 'tanh'), w2!, b2, 'relu'), w3!, b3), y),
};

export const GRU: ModelCase = {
  name: 'GRU (in 3, hidden 5, 4 steps) → linear 2, mse',
  shapes: [[15, 3], [15, 5], [15], [15], [2, 5], [2]],
  input: (rows) => [rows, 4, 3],
  target: (rows) => [rows, 2],
  loss: (g, [wIh, wHh, bIh, bHh, wo, bo], x, y) => {
    const { output } = g.gru(x, null, { wIh: wIh!, wHh: wHh!, bIh, bHh }, { returnSequences: false });
    return g.mseLoss(g.linear(output, wo!, bo), y);
  },
};

export const MODELS = [MLP, GRU] as const;

const size = (shape: readonly number[]) => shape.reduce((a, d) => a * d, 1);

/** A global batch of `rows`: inputs and targets on the host. */
export interface Batch {
  readonly rows: number;
  readonly x: Float32Array;
  readonly y: Float32Array;
}

export function makeBatch(model: ModelCase, rows: number, seed: number): Batch {
  return { rows, x: Float32Array.from(randomValues(size(model.input(rows)), seed)), y: Float32Array.from(randomValues(size(model.target(rows)), seed + 1)) };
}

/** The parameters' initial values. */
export function initialValues(model: ModelCase, seed: number): Float32Array[] {
  return model.shapes.map((shape, i) => Float32Array.from(randomValues(size(shape), seed + i, 0.4)));
}

/** Parameters on `g` holding `values`, requiring grad. */
export function makeParams(g: GpuCompute, model: ModelCase, values: readonly Float32Array[]): Tensor[] {
  return values.map((v, i) => g.tensor(v, [...model.shapes[i]!]).requiresGrad_());
}

/** Rank `rank`'s share of the batch on `g`, of `ranks` equal shares. */
export function share(g: GpuCompute, model: ModelCase, batch: Batch, rank: number, ranks: number): { x: Tensor; y: Tensor } {
  const rows = batch.rows / ranks;
  return slice(g, model, batch, rank * rows, (rank + 1) * rows);
}

/** Rows [from, to) of the batch on `g`. */
function slice(g: GpuCompute, model: ModelCase, batch: Batch, from: number, to: number): { x: Tensor; y: Tensor } {
  const xRow = size(model.input(1));
  const yRow = size(model.target(1));
  return {
    x: g.tensor(batch.x.subarray(from * xRow, to * xRow), model.input(to - from)),
    y: g.tensor(batch.y.subarray(from * yRow, to * yRow), model.target(to - from)),
  };
}

/** The reference: one backward of the mean loss over the whole batch on `g` (adds into .grad). */
export function singleBackward(g: GpuCompute, model: ModelCase, params: readonly Tensor[], batch: Batch): void {
  g.scope(() => {
    const { x, y } = slice(g, model, batch, 0, batch.rows);
    model.loss(g, params, x, y).backward();
  });
}

/** Each rank's loss over its share of the batch (rank order), from its replicas. */
export function rankLosses(gpus: readonly GpuCompute[], dp: DataParallel, model: ModelCase, batch: Batch): Tensor[] {
  return gpus.map((g, r) =>
    g.scope(() => {
      const { x, y } = share(g, model, batch, r, gpus.length);
      return model.loss(g, dp.parameters(r), x, y);
    }),
  );
}

/** One data-parallel backward over the batch. */
export function parallelBackward(gpus: readonly GpuCompute[], dp: DataParallel, model: ModelCase, batch: Batch): void {
  const losses = rankLosses(gpus, dp, model, batch);
  try {
    dp.backward(losses);
  } finally {
    for (const l of losses) l.dispose();
  }
}

export const host = (t: Tensor | undefined): number[] => Array.from(t!.toArraySync());

/**
 * What differs between the replicas of rank 0..ranks-1 (bit for bit) and between rank 0's and the
 * reference's (beyond `tolerance`, norm-wise), for `read` of each parameter (its value or its
 * gradient): empty when they agree.
 */
export function mismatches(
  ranks: number,
  dp: DataParallel,
  reference: readonly Tensor[],
  read: (t: Tensor) => number[],
  tolerance = 1e-5,
): string[] {
  const found: string[] = [];
  const values = Array.from({ length: ranks }, (_, r) => dp.parameters(r).map(read));
  reference.forEach((want, i) => {
    for (let r = 1; r < ranks; r++) {
      const k = values[r]![i]!.findIndex((v, j) => !Object.is(v, values[0]![i]![j]));
      if (k >= 0) found.push(`parameter ${i}: rank ${r} holds ${values[r]![i]![k]} at ${k}, rank 0 ${values[0]![i]![k]}`);
    }
    const error = relError(values[0]![i]!, read(want));
    if (!(error < tolerance)) found.push(`parameter ${i}: relative error ${error} against one GpuCompute over the whole batch`);
  });
  return found;
}

/** A parameter's gradient on the host. */
export const gradOf = (t: Tensor): number[] => host(t.grad);

/** Parameters from the same values on the first rank (wrapped in a DataParallel) and on the reference. */
export interface Pair {
  readonly dp: DataParallel;
  readonly params: Tensor[];
  readonly refParams: Tensor[];
  dispose(): void;
}

export function pair(comm: Communicator, first: GpuCompute, ref: GpuCompute, model: ModelCase, seed: number, options?: DataParallelOptions): Pair {
  const values = initialValues(model, seed);
  const params = makeParams(first, model, values);
  const refParams = makeParams(ref, model, values);
  const dp = new DataParallel(comm, params, options);
  return {
    dp,
    params,
    refParams,
    dispose() {
      dp.dispose();
      for (const p of [...params, ...refParams]) p.dispose();
    },
  };
}

/**
 * `steps` AdamW steps both ways from the same start, a fresh batch each. eps is 1e-3, not the
 * default 1e-8: Adam's first step is lr·g/(|g| + eps), whose slope in g, lr·eps/(|g| + eps)², is
 * huge for a gradient component that happens to be tiny, and the two ways' gradients differ in
 * their last bits (another summation order); with 1e-8 that turned into parameters 1e-4 apart
 * about once in 550 runs.
 */
export function trainBoth(gpus: readonly GpuCompute[], ref: GpuCompute, model: ModelCase, p: Pair, steps: number, seed: number): void {
  const options = { lr: 0.02, eps: 1e-3 };
  const optimizers = gpus.map((_, r) => new AdamW(p.dp.parameters(r), options));
  const refOpt = new AdamW(p.refParams, options);
  try {
    for (let step = 0; step < steps; step++) {
      const batch = makeBatch(model, 6 * gpus.length, seed + 100 * step);
      parallelBackward(gpus, p.dp, model, batch);
      singleBackward(ref, model, p.refParams, batch);
      for (const opt of [...optimizers, refOpt]) {
        opt.step();
        opt.zeroGrad();
      }
    }
  } finally {
    for (const opt of [...optimizers, refOpt]) opt.dispose();
  }
}
