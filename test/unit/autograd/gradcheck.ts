/**
 * Gradient checks against central finite differences in float64.
 *
 * The analytic side is the library's: the op runs on the CPU backend in f32, and `backward` with a
 * random seed r gives the gradient of L = Σ r·op(inputs) with respect to each input. The numeric
 * side never touches the library: a float64 reference of the op's forward (the textbook formula,
 * on the f32 inputs' exact values) differentiated by central differences, (L(x + h) − L(x − h))/2h
 * per element with h = 1e-6·max(1, |x|), whose error is O(h²) from truncation plus O(1e-16/h) from
 * rounding, about 1e-10 relative: the reference is exact as far as an f32 gradient can tell.
 *
 * What is left is the f32 rounding of the analytic gradient, so the tolerances are norm-wise
 * bounds on f32 error: one to a few roundings (u = 2^-24 ≈ 6e-8) per op of the backward formula,
 * grown by the cancellation some formulas have (softmax's g − Σg·y, layerNorm's centred terms)
 * and by the length of the sums (matmul's k, the reductions' axis). 1e-5 covers the elementwise
 * gradients (a few ops, no cancellation beyond the forward's own); 1e-4 the row ops, products,
 * reductions and losses. A wrong formula, a missing broadcast sum or a transposed product is off
 * by O(1).
 */
import { expect } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { product, randomValues, relError } from '../compute/helpers.js';

/** One input of a checked op: its shape and values, and whether its gradient is checked (default true). */
export interface CheckedInput {
  shape: readonly number[];
  values: readonly number[];
  /** false: a constant (no gradient, and it is not perturbed). */
  grad?: boolean;
}

/** What {@link gradcheck} runs: the library op on tensors, and its float64 reference on arrays. */
export interface GradCheck {
  label: string;
  inputs: readonly CheckedInput[];
  /** The op through the library (tensors in the order of `inputs`), run in a `gpu.scope`. */
  forward(g: GpuCompute, t: Tensor[]): Tensor;
  /** The op's float64 reference on the inputs' values (arrays in the order of `inputs`); its output, flat. */
  reference(x: Float64Array[]): ArrayLike<number>;
  tolerance: number;
  seed: number;
}

/** The inputs' values as the library stores them (f32). */
function f32(values: readonly number[]): Float64Array {
  return Float64Array.from(values, Math.fround);
}

/** The gradient of Σ r·reference(x) with respect to `x[which]`, by central differences in float64. */
export function numericGradient(reference: (x: Float64Array[]) => ArrayLike<number>, x: Float64Array[], r: readonly number[], which: number): number[] {
  const loss = () => {
    const out = reference(x);
    let total = 0;
    for (let i = 0; i < out.length; i++) total += out[i]! * r[i]!;
    return total;
  };
  const v = x[which]!;
  const grad: number[] = [];
  for (let j = 0; j < v.length; j++) {
    const keep = v[j]!;
    const h = 1e-6 * Math.max(1, Math.abs(keep));
    v[j] = keep + h;
    const up = loss();
    v[j] = keep - h;
    const down = loss();
    v[j] = keep;
    grad.push((up - down) / (2 * h));
  }
  return grad;
}

/** Runs `c` on `g` (a CPU GpuCompute): the analytic gradient of every checked input against the numeric one. */
export function gradcheck(g: GpuCompute, c: GradCheck): void {
  const x = c.inputs.map((input) => f32(input.values));
  const want = c.reference(x);
  const r = randomValues(want.length, c.seed + 1);
  const before = g.memoryStats().inUseBytes;
  const tensors = c.inputs.map((input, i) => {
    const t = g.tensor(Float32Array.from(x[i]!), [...input.shape]);
    return input.grad === false ? t : t.requiresGrad_();
  });
  try {
    // In a scope: the intermediates go when it ends, and the graph must keep what it saved.
    const out = g.scope(() => c.forward(g, tensors));
    try {
      expect(product(out.shape), `${c.label}: output size`).toBe(want.length);
      expect(relError(out.toArraySync(), want), `${c.label}: forward (seed ${c.seed})`).toBeLessThanOrEqual(Math.max(c.tolerance, 1e-5));
      using seed = g.tensor(Float32Array.from(r, Math.fround), [...out.shape]);
      out.backward(seed);
    } finally {
      out.dispose();
    }
    c.inputs.forEach((input, i) => {
      const t = tensors[i]!;
      if (input.grad === false) {
        expect(t.grad, `${c.label}: input ${i} is a constant`).toBeUndefined();
        return;
      }
      expect(t.grad, `${c.label}: input ${i} got a gradient`).toBeDefined();
      expect(t.grad!.shape, `${c.label}: gradient ${i} shape`).toEqual(t.shape);
      const numeric = numericGradient(c.reference, x, r.map(Math.fround), i);
      expect(relError(t.grad!.toArraySync(), numeric), `${c.label}: gradient of input ${i} (seed ${c.seed})`).toBeLessThanOrEqual(c.tolerance);
    });
  } finally {
    for (const t of tensors) t.dispose();
  }
  expect(g.memoryStats().inUseBytes, `${c.label}: everything released`).toBe(before);
}

/** Values away from 0 (at least `gap` in magnitude): where abs, relu and the comparisons have kinks. */
export function awayFromZero(n: number, seed: number, scale = 1, gap = 0.05): number[] {
  return randomValues(n, seed, scale).map((v) => (Math.abs(v) < gap ? (v < 0 ? -gap : gap) - v : v));
}

export { product };
