/**
 * The gradient cases the GPU training tests run on CUDA, on the CPU backend and, where torch is
 * installed, through torch autograd: the ops a training step is made of, on odd shapes (past the
 * kernels' tile and block sizes, and not multiples of them), each with the name of its torch
 * formula in `torch_grads.py`.
 */
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { prng, randomValues, roundTo } from '../../unit/compute/helpers.js';

export type FloatDType = 'f32' | 'f16' | 'bf16';

/** One input: its shape and values (as its dtype holds them), whether it gets a gradient, i32 for class indices. */
export interface CaseInput {
  shape: number[];
  values: number[];
  grad: boolean;
  int?: boolean;
}

export interface GradientCase {
  name: string;
  /** The formula's key in `torch_grads.py`. */
  torch: string;
  inputs(seed: number, dtype: FloatDType): CaseInput[];
  forward(g: GpuCompute, t: Tensor[]): Tensor;
  /** Accumulates a sum over its axis (loosen for the longer sums). */
  chained: boolean;
}

function float(shape: number[], seed: number, dtype: FloatDType, scale = 1, shift = 0): CaseInput {
  const n = shape.reduce((a, d) => a * d, 1);
  return { shape, values: randomValues(n, seed, scale, shift).map(roundTo(dtype)), grad: true };
}

export const CASES: readonly GradientCase[] = [
  {
    name: 'layerNorm [3, 37, 129] with gamma and beta',
    torch: 'layerNorm',
    inputs: (s, d) => [float([3, 37, 129], s, d, 2, 0.5), float([129], s + 1, d, 0.5, 1), float([129], s + 2, d)],
    forward: (g, [x, gamma, beta]) => g.layerNorm(x!, gamma, beta),
    chained: true,
  },
  {
    name: 'batched matmul [3, 33, 65]·[65, 47] + bias, gelu',
    torch: 'matmulBiasGelu',
    inputs: (s, d) => [float([3, 33, 65], s, d), float([65, 47], s + 1, d, 0.2), float([47], s + 2, d)],
    forward: (g, [a, b, bias]) => g.matmul(a!, b!, { bias: bias!, activation: 'gelu' }),
    chained: true,
  },
  {
    name: 'matmul aᵀ·bᵀ·0.5 + 2·c [33, 47]',
    torch: 'matmulTransposed',
    inputs: (s, d) => [float([65, 33], s, d), float([47, 65], s + 1, d, 0.2), float([33, 47], s + 2, d)],
    forward: (g, [a, b, c]) => g.matmul(a!, b!, { transA: true, transB: true, alpha: 0.5, c: c!, beta: 2 }),
    chained: true,
  },
  {
    name: 'linear [5, 7, 96] → 130, silu',
    torch: 'linearSilu',
    inputs: (s, d) => [float([5, 7, 96], s, d), float([130, 96], s + 1, d, 0.1), float([130], s + 2, d)],
    forward: (g, [x, w, b]) => g.linear(x!, w!, b, 'silu'),
    chained: true,
  },
  {
    name: 'softmax [13, 1000]',
    torch: 'softmax',
    inputs: (s, d) => [float([13, 1000], s, d, 3)],
    forward: (g, [x]) => g.softmax(x!),
    chained: true,
  },
  {
    name: 'logSoftmax [13, 1000]',
    torch: 'logSoftmax',
    inputs: (s, d) => [float([13, 1000], s, d, 3)],
    forward: (g, [x]) => g.logSoftmax(x!),
    chained: true,
  },
  {
    name: 'mseLoss [61, 17]',
    torch: 'mseLoss',
    inputs: (s, d) => [float([61, 17], s, d), float([61, 17], s + 1, d)],
    forward: (g, [p, t]) => g.mseLoss(p!, t!),
    chained: true,
  },
  {
    name: 'crossEntropy [77, 1000] against class indices, some ignored',
    torch: 'crossEntropyIndices',
    inputs: (s, d) => {
      const next = prng(s + 1);
      const targets = Array.from({ length: 77 }, (_, i) => (i % 10 === 3 ? -100 : Math.floor(next() * 1000)));
      return [float([77, 1000], s, d, 3), { shape: [77], values: targets, grad: false, int: true }];
    },
    forward: (g, [x, t]) => g.crossEntropy(x!, t!),
    chained: true,
  },
  {
    name: 'crossEntropy [19, 33] against class probabilities, summed',
    torch: 'crossEntropyProbabilities',
    inputs: (s, d) => [float([19, 33], s, d, 2), { ...float([19, 33], s + 1, d), values: randomValues(19 * 33, s + 1).map((v) => roundTo(d)(Math.abs(v) / 33)) }],
    forward: (g, [x, p]) => g.crossEntropy(x!, p!, { reduction: 'sum' }),
    chained: true,
  },
  {
    name: 'maximum [31, 1, 17] and [9, 17], times tanh',
    torch: 'maximumTanh',
    inputs: (s, d) => [float([31, 1, 17], s, d), float([9, 17], s + 1, d)],
    forward: (g, [a, b]) => g.mul(g.maximum(a!, b!), g.tanh(a!)),
    chained: true,
  },
  {
    name: 'max over an axis of [23, 57, 3] minus the mean',
    torch: 'maxMean',
    inputs: (s, d) => [float([23, 57, 3], s, d)],
    forward: (g, [x]) => g.sub(g.max(x!, { axis: 1, keepDims: true }), g.mean(x!)),
    chained: true,
  },
  {
    name: 'gelu (tanh) plus sqrt(x² + 1) [1000, 7]',
    torch: 'geluTanhSqrt',
    inputs: (s, d) => [float([1000, 7], s, d, 2)],
    forward: (g, [x]) => g.add(g.gelu(x!, { approximate: 'tanh' }), g.sqrt(g.add(g.mul(x!, x!), 1))),
    chained: false,
  },
];

/** The output and the inputs' gradients of `c` on `g`, from Σ seed·output, read back (everything disposed). */
export function runCase(g: GpuCompute, c: GradientCase, inputs: readonly CaseInput[], seed: readonly number[], dtype: FloatDType): { output: number[]; grads: number[][] } {
  const tensors = inputs.map((input) => {
    const t = g.tensor(input.int ? Int32Array.from(input.values) : Float32Array.from(input.values), input.shape, input.int ? 'i32' : dtype);
    return input.grad ? t.requiresGrad_() : t;
  });
  try {
    using out = g.scope(() => c.forward(g, tensors));
    using s = g.tensor(Float32Array.from(seed), [...out.shape], dtype);
    out.backward(s);
    return {
      output: Array.from(out.toArraySync() as Float32Array),
      grads: tensors.filter((_, i) => inputs[i]!.grad).map((t) => Array.from(t.grad!.toArraySync() as Float32Array)),
    };
  } finally {
    for (const t of tensors) t.dispose();
  }
}
