/**
 * Random GRU weights and inputs as tensors on a GpuCompute, together with the values they
 * actually hold (after rounding to their dtype) in the form the float64 reference takes.
 */
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { GruLayerWeights } from '../../../src/compute/ops/gru.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { randomValues, roundTo } from '../compute/helpers.js';
import type { RefLayer } from './reference.js';

/** A tensor of fresh values and the values it holds. */
export function randomTensor(gpu: GpuCompute, shape: number[], seed: number, dtype: DType, scale = 1): { tensor: Tensor; values: number[] } {
  const n = shape.reduce((a, d) => a * d, 1);
  const round = roundTo(dtype);
  const values = randomValues(n, seed, scale).map(round);
  return { tensor: gpu.tensor(Float32Array.from(values), shape, dtype), values };
}

export interface LayerFixture {
  weights: GruLayerWeights;
  /** One reference layer per member (one when not an ensemble). */
  members: RefLayer[];
  tensors: Tensor[];
}

/** A layer with PyTorch's init scale 1/√H; `ensemble` adds the leading [E] dim. */
export function randomLayer(
  gpu: GpuCompute,
  input: number,
  hidden: number,
  seed: number,
  dtype: DType,
  options: { ensemble?: number; biases?: boolean; layerNorm?: boolean } = {},
): LayerFixture {
  const E = options.ensemble;
  const lead = E === undefined ? [] : [E];
  const members = E ?? 1;
  const scale = 1 / Math.sqrt(hidden);
  const wIh = randomTensor(gpu, [...lead, 3 * hidden, input], seed, dtype, scale);
  const wHh = randomTensor(gpu, [...lead, 3 * hidden, hidden], seed + 1, dtype, scale);
  const tensors = [wIh.tensor, wHh.tensor];
  const weights: GruLayerWeights = { wIh: wIh.tensor, wHh: wHh.tensor };
  let bIh: number[] | undefined;
  let bHh: number[] | undefined;
  if (options.biases !== false) {
    const bi = randomTensor(gpu, [...lead, 3 * hidden], seed + 2, dtype, scale);
    const bh = randomTensor(gpu, [...lead, 3 * hidden], seed + 3, dtype, scale);
    weights.bIh = bi.tensor;
    weights.bHh = bh.tensor;
    tensors.push(bi.tensor, bh.tensor);
    bIh = bi.values;
    bHh = bh.values;
  }
  let gamma: number[] | undefined;
  let beta: number[] | undefined;
  if (options.layerNorm) {
    const g = randomTensor(gpu, [...lead, hidden], seed + 4, dtype, 0.2);
    const b = randomTensor(gpu, [...lead, hidden], seed + 5, dtype, 0.2);
    gamma = g.values.map((v) => roundTo(dtype)(1 + v));
    g.tensor.dispose();
    const gt = gpu.tensor(Float32Array.from(gamma), [...lead, hidden], dtype);
    weights.layerNorm = { weight: gt, bias: b.tensor, eps: 1e-5 };
    tensors.push(gt, b.tensor);
    beta = b.values;
  }
  const slice = (values: number[] | undefined, e: number, n: number) => values?.slice(e * n, (e + 1) * n);
  const refs: RefLayer[] = [];
  for (let e = 0; e < members; e++) {
    const ref: RefLayer = {
      wIh: wIh.values.slice(e * 3 * hidden * input, (e + 1) * 3 * hidden * input),
      wHh: wHh.values.slice(e * 3 * hidden * hidden, (e + 1) * 3 * hidden * hidden),
      input,
      hidden,
    };
    if (bIh) ref.bIh = slice(bIh, e, 3 * hidden)!;
    if (bHh) ref.bHh = slice(bHh, e, 3 * hidden)!;
    if (options.layerNorm) ref.layerNorm = { gamma: slice(gamma, e, hidden)!, beta: slice(beta, e, hidden)!, eps: 1e-5 };
    refs.push(ref);
  }
  return { weights, members: refs, tensors };
}

/** [d0][d1][d2] nesting of a flat row-major array. */
export function nest3(values: readonly number[], d0: number, d1: number, d2: number): number[][][] {
  const out: number[][][] = [];
  for (let a = 0; a < d0; a++) {
    const rows: number[][] = [];
    for (let b = 0; b < d1; b++) rows.push(values.slice((a * d1 + b) * d2, (a * d1 + b + 1) * d2) as number[]);
    out.push(rows);
  }
  return out;
}

export function flat(values: readonly (readonly (readonly number[])[])[]): number[] {
  return values.flatMap((a) => a.flatMap((b) => [...b]));
}
