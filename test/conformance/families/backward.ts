/**
 * The backward ops on every backend: for each differentiable op (broadcast elementwise ops,
 * activations, the row ops, reductions, products, layout, cast, dropout, the losses), the forward
 * and the gradient of Σ seed·output with respect to each input, in every float dtype, against a
 * float64 reference (central differences of the forward's float64 formula on the inputs as the
 * dtype holds them, see `test/unit/autograd/gradcheck.ts`) and against the CPU backend's result
 * for the same inputs. Through the public ops and `backward`, as a user runs them, so a backend
 * is held to the whole chain: forward ops, the gradients' composed ops, its own kernels.
 *
 * Tolerances: the f32 ones are the gradient checks' (a few f32 roundings through each formula,
 * grown by sums and cancellation); in 16 bits the forward's intermediates are rounded to the
 * dtype before the gradient is formed from them, so the bound is a few of the dtype's roundings
 * relative to the gradient's norm.
 */
import { describe, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { numericGradient } from '../../unit/autograd/gradcheck.js';
import { product, roundTo } from '../../unit/compute/helpers.js';
import { broadcastRef, reduceRef, rowsRef, UNARY_REFERENCE } from '../../unit/compute/reference.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext, FloatDType } from '../context.js';
import { host, type Values } from '../host.js';
import type { NeedingOp } from '../optional-ops.js';
import { Case } from '../seeds.js';

/** One input of a case: its shape and values, whether it gets a gradient, and its dtype (the case's by default). */
interface Input {
  shape: readonly number[];
  values: readonly number[];
  grad?: boolean;
  dtype?: 'i32';
}

interface BackwardCase {
  name: string;
  needs: readonly NeedingOp[];
  inputs(c: Case): Input[];
  forward(g: GpuCompute, t: Tensor[]): Tensor;
  /** The forward in float64 on the inputs' values (i32 ones too), flat. */
  reference(x: Float64Array[]): ArrayLike<number>;
  outShape(inputs: readonly Input[]): readonly number[];
  /** Norm-wise bound per dtype (f32 from the gradient checks). */
  tolerance: Record<FloatDType, number>;
}

const ELEMENTWISE = { f32: 1e-5, f16: 3e-3, bf16: 2e-2 };
const CHAINED = { f32: 1e-4, f16: 1e-2, bf16: 6e-2 };

const positive = (c: Case, n: number) => c.normal(n).map((v) => 0.3 + Math.abs(v));
const awayFromZero = (c: Case, n: number, scale = 1) => c.normal(n, scale).map((v) => (Math.abs(v) < 0.05 ? Math.sign(v || 1) * 0.05 : v));
/** `values` in a random order (the case's draws as sort keys). */
const shuffled = (c: Case, values: readonly number[]) => {
  const keys = c.normal(values.length);
  return values.map((v, i) => [keys[i]!, v] as const).sort((a, b) => a[0] - b[0]).map(([, v]) => v);
};
const eighths = (v: number) => Math.round(v * 8) / 8;
const same = (inputs: readonly Input[]) => inputs[0]!.shape;
const scalar = () => [];

function softmaxRow(row: number[], log: boolean): number[] {
  const max = Math.max(...row);
  const sum = row.reduce((s, v) => s + Math.exp(v - max), 0);
  return row.map((v) => (log ? v - max - Math.log(sum) : Math.exp(v - max) / sum));
}

function layerNormRow(row: number[], gamma: ArrayLike<number>, beta: ArrayLike<number>): number[] {
  const mean = row.reduce((s, v) => s + v, 0) / row.length;
  const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / row.length;
  return row.map((v, j) => ((v - mean) / Math.sqrt(variance + 1e-5)) * gamma[j]! + beta[j]!);
}

/** act(x·wᵀ + b) for x [rows, k], w [n, k]. */
function linearRef(x: ArrayLike<number>, w: ArrayLike<number>, b: ArrayLike<number>, rows: number, k: number, n: number, act: (v: number) => number): number[] {
  const out: number[] = [];
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < n; j++) {
      let sum = b[j]!;
      for (let l = 0; l < k; l++) sum += x[i * k + l]! * w[j * k + l]!;
      out.push(act(sum));
    }
  }
  return out;
}

const CASES: BackwardCase[] = [
  {
    name: 'mul and div with broadcasting',
    needs: [],
    inputs: (c) => [
      { shape: [3, 1, 5], values: c.normal(15) },
      { shape: [4, 5], values: positive(c, 20) },
    ],
    forward: (g, [a, b]) => g.div(g.mul(a!, b!), b!.add(1)),
    reference: ([a, b]) => broadcastRef([3, 1, 5], a!, [4, 5], b!, [3, 4, 5], (x, y) => (x * y) / (y + 1)),
    outShape: () => [3, 4, 5],
    tolerance: CHAINED,
  },
  {
    name: 'maximum, sub and a number',
    needs: ['activationGrad'],
    // On a grid of eighths, so a and b tie exactly (the gradient splits, as the central difference
    // does) or differ by far more than the difference's step, which would straddle the kink.
    inputs: (c) => [
      { shape: [2, 7], values: c.normal(14).map(eighths) },
      { shape: [7], values: c.normal(7).map(eighths) },
    ],
    forward: (g, [a, b]) => g.sub(g.maximum(a!, b!), g.mul(0.5, a!)),
    reference: ([a, b]) => broadcastRef([2, 7], a!, [7], b!, [2, 7], (x, y) => Math.max(x, y) - 0.5 * x),
    outShape: same,
    tolerance: ELEMENTWISE,
  },
  ...(['exp', 'tanh', 'silu', 'abs', 'sqrt', 'softplus'] as const).map(
    (op): BackwardCase => ({
      name: op,
      needs: op === 'exp' || op === 'sqrt' ? [] : ['activationGrad'],
      inputs: (c) => [{ shape: [3, 11], values: op === 'sqrt' ? positive(c, 33) : awayFromZero(c, 33) }],
      forward: (g, [x]) => g[op](x!),
      reference: ([x]) => Array.from(x!, (v) => UNARY_REFERENCE[op](v, 0.01)),
      outShape: same,
      tolerance: ELEMENTWISE,
    }),
  ),
  {
    name: 'gelu (tanh) and leakyRelu',
    needs: ['activationGrad'],
    inputs: (c) => [{ shape: [17], values: awayFromZero(c, 17, 2) }],
    forward: (g, [x]) => g.leakyRelu(g.gelu(x!, { approximate: 'tanh' }), 0.1),
    reference: ([x]) => Array.from(x!, (v) => UNARY_REFERENCE.leakyRelu(UNARY_REFERENCE.geluTanh(v, 0), Math.fround(0.1))),
    outShape: same,
    tolerance: ELEMENTWISE,
  },
  ...([false, true] as const).map(
    (log): BackwardCase => ({
      name: log ? 'logSoftmax' : 'softmax',
      needs: ['softmax'],
      inputs: (c) => [{ shape: [5, 13], values: c.normal(65, 2) }],
      forward: (g, [x]) => (log ? g.logSoftmax(x!) : g.softmax(x!)),
      reference: ([x]) => rowsRef(x!, 13, (row) => softmaxRow(row, log)),
      outShape: same,
      tolerance: CHAINED,
    }),
  ),
  {
    name: 'layerNorm in x, gamma and beta',
    needs: ['layerNorm'],
    inputs: (c) => [
      { shape: [6, 9], values: c.normal(54, 2, 0.5) },
      { shape: [9], values: c.normal(9, 0.5, 1) },
      { shape: [9], values: c.normal(9) },
    ],
    forward: (g, [x, gamma, beta]) => g.layerNorm(x!, gamma, beta),
    reference: ([x, gamma, beta]) => rowsRef(x!, 9, (row) => layerNormRow(row, gamma!, beta!)),
    outShape: same,
    tolerance: CHAINED,
  },
  {
    name: 'sum over an axis, mean over everything',
    needs: [],
    inputs: (c) => [{ shape: [4, 3, 5], values: c.normal(60) }],
    forward: (g, [x]) => g.add(g.sum(x!, 1), g.mean(x!)),
    reference: ([x]) => {
      const mean = Array.from(x!).reduce((s, v) => s + v, 0) / 60;
      return reduceRef([4, 3, 5], x!, 1, (v) => v.reduce((s, y) => s + y, 0)).map((v) => v + mean);
    },
    outShape: () => [4, 5],
    tolerance: CHAINED,
  },
  {
    name: 'max and min over an axis (the argmax gets it)',
    needs: ['oneHot'],
    // Distinct values, exact in every dtype: at a tie the central difference splits the gradient
    // between the tied elements where the op gives it all to the first (bf16 rounding makes ties common).
    inputs: (c) => [{ shape: [3, 6, 2], values: shuffled(c, Array.from({ length: 36 }, (_, i) => (i - 18) / 4)) }],
    forward: (g, [x]) => g.sub(g.max(x!, { axis: 1, keepDims: true }), g.min(x!, { axis: -1, keepDims: true })),
    reference: ([x]) => {
      const max = reduceRef([3, 6, 2], x!, 1, (v) => Math.max(...v));
      const min = reduceRef([3, 6, 2], x!, 2, (v) => Math.min(...v));
      return broadcastRef([3, 1, 2], max, [3, 6, 1], min, [3, 6, 2], (a, b) => a - b);
    },
    outShape: () => [3, 6, 2],
    tolerance: CHAINED,
  },
  {
    name: 'batched matmul with c, bias and gelu',
    needs: ['matmul', 'activationGrad'],
    // 13 output columns: each bias gradient sums 6 rows' terms, which may cancel, and with fewer
    // entries all of them may at once, leaving 16-bit rounding next to a tiny norm (about 3 run
    // seeds in 10 million at 5 columns).
    inputs: (c) => [
      { shape: [2, 3, 4], values: c.normal(24) },
      { shape: [13, 4], values: c.normal(52) },
      { shape: [3, 13], values: c.normal(39) },
      { shape: [13], values: c.normal(13) },
    ],
    forward: (g, [a, b, cc, bias]) => g.matmul(a!, b!, { transB: true, c: cc!, bias: bias!, activation: 'gelu', alpha: 0.5 }),
    reference: ([a, b, cc, bias]) => {
      const out: number[] = [];
      for (let e = 0; e < 2; e++) {
        const products = linearRef(a!.subarray(e * 12, e * 12 + 12), b!, new Float64Array(13), 3, 4, 13, (v) => v);
        products.forEach((v, i) => out.push(UNARY_REFERENCE.gelu(0.5 * v + cc![i]! + bias![i % 13]!, 0)));
      }
      return out;
    },
    outShape: () => [2, 3, 13],
    tolerance: CHAINED,
  },
  {
    name: 'linear with silu',
    needs: ['matmul', 'activationGrad'],
    // 12 output features, for the bias gradient's sake (see the batched matmul above; about 3 run
    // seeds in a million at 4).
    inputs: (c) => [
      { shape: [2, 3, 6], values: c.normal(36) },
      { shape: [12, 6], values: c.normal(72) },
      { shape: [12], values: c.normal(12) },
    ],
    forward: (g, [x, w, b]) => g.linear(x!, w!, b, 'silu'),
    reference: ([x, w, b]) => linearRef(x!, w!, b!, 6, 6, 12, (v) => UNARY_REFERENCE.silu(v, 0)),
    outShape: () => [2, 3, 12],
    tolerance: CHAINED,
  },
  {
    name: 'transpose, reshape and a cast to f32 and back',
    needs: [],
    inputs: (c) => [{ shape: [2, 3, 4], values: c.normal(24) }],
    forward: (g, [x]) => g.mul(g.transpose(x!).reshape([2, 12]).cast('f32').cast(x!.dtype), 3),
    reference: ([x]) => {
      const out: number[] = [];
      for (let b = 0; b < 2; b++) for (let col = 0; col < 4; col++) for (let r = 0; r < 3; r++) out.push(3 * x![b * 12 + r * 4 + col]!);
      return out;
    },
    outShape: () => [2, 12],
    tolerance: ELEMENTWISE,
  },
  {
    name: 'mseLoss',
    needs: [],
    inputs: (c) => [
      { shape: [4, 7], values: c.normal(28) },
      { shape: [4, 7], values: c.normal(28) },
    ],
    forward: (g, [p, t]) => g.mseLoss(p!, t!),
    reference: ([p, t]) => [Array.from(p!).reduce((s, v, i) => s + (v - t![i]!) ** 2, 0) / 28],
    outShape: scalar,
    tolerance: CHAINED,
  },
  {
    name: 'crossEntropy with class indices, one ignored',
    needs: ['oneHot'],
    inputs: (c) => [
      { shape: [5, 7], values: c.normal(35, 2) },
      { shape: [5], values: [...c.ints(4, 0, 6), -100], grad: false, dtype: 'i32' },
    ],
    forward: (g, [x, t]) => g.crossEntropy(x!, t!, { reduction: 'sum' }),
    reference: ([x, t]) => [
      Array.from(t!).reduce((s, k, r) => (k < 0 ? s : s - softmaxRow(Array.from(x!.subarray(r * 7, r * 7 + 7)), true)[k]!), 0),
    ],
    outShape: scalar,
    tolerance: CHAINED,
  },
  {
    name: 'crossEntropy with class probabilities, in both',
    needs: [],
    inputs: (c) => [
      { shape: [3, 6], values: c.normal(18, 2) },
      { shape: [3, 6], values: positive(c, 18).map((v) => v / 6) },
    ],
    forward: (g, [x, p]) => g.crossEntropy(x!, p!, { reduction: 'none' }),
    reference: ([x, p]) => [0, 1, 2].map((r) => -softmaxRow(Array.from(x!.subarray(r * 6, r * 6 + 6)), true).reduce((s, v, k) => s + v * p![r * 6 + k]!, 0)),
    outShape: () => [3],
    tolerance: CHAINED,
  },
];

export function describeBackward(ctx: ConformanceContext): void {
  describe('backward', () => {
    for (const bc of CASES) {
      ctx.describeOps(bc.name, bc.needs, () => {
        for (const dtype of ctx.floatDtypes()) {
          it(`forward and gradients in ${dtype}`, () => {
            const c = new Case(`backward ${bc.name} ${dtype}`);
            const inputs = bc.inputs(c);
            const held = inputs.map((input) => host(input.values, input.shape, input.dtype ?? dtype));
            const outShape = bc.outShape(inputs);
            const seed = host(c.normal(product(outShape)), outShape, dtype);
            const x = held.map((h) => Float64Array.from(h.values));
            const want: Values[] = [host(Array.from(bc.reference(x)), outShape, dtype)];
            inputs.forEach((input, i) => {
              if (input.grad === false) return;
              want.push(host(numericGradient(bc.reference, x, seed.values, i), input.shape, dtype));
            });
            const runs = ctx.run([...held, seed], (g, t) => {
              const leaves = inputs.map((input, i) => (input.grad === false ? t[i]! : t[i]!.requiresGrad_()));
              const out = g.scope(() => bc.forward(g, leaves));
              out.backward(t[inputs.length]);
              return [out, ...leaves.filter((_, i) => inputs[i]!.grad !== false).map((leaf) => leaf.grad!)];
            });
            expectRun(c, runs, want, bc.tolerance[dtype]);
          });
        }
      });
    }

    ctx.describeOps('dropout', ['dropout'], () => {
      for (const dtype of ctx.floatDtypes()) {
        it(`sends the gradient through the forward's mask and scale, exactly, in ${dtype}`, () => {
          const c = new Case(`backward dropout ${dtype}`);
          const x = host(awayFromZero(c, 45, 2), [5, 9], dtype);
          const seed = host(c.normal(45), [5, 9], dtype);
          const runs = ctx.run([x, seed], (g, [tx, ts]) => {
            const leaf = tx!.requiresGrad_();
            const out = g.dropout(leaf, 0.3, 11);
            out.backward(ts);
            return [out, leaf.grad!];
          });
          // The gradient is the seed through dropout with the same key: where the output kept x, seed·scale.
          const scale = Math.fround(1 / (1 - 0.3));
          const kept = runs.got[0]!.values.map((v) => v !== 0);
          expectRun(c, runs, [runs.got[0]!, { ...seed, values: seed.values.map((v, i) => (kept[i] ? roundTo(dtype)(Math.fround(v * scale)) : 0)) }], 0);
        });
      }
    });
  });
}
