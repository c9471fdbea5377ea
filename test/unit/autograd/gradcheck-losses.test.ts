/**
 * Gradient checks (see `gradcheck.ts`) of the losses: mseLoss in pred and target under each
 * reduction; crossEntropy in the logits against class indices (ignored rows among them) and in
 * both logits and probabilities against class probabilities, under each reduction, for logits of
 * rank 1 to 3. And what the float64 checks cannot see: a masked class (a logit of −∞) beside class
 * indices gives a finite loss and gradient, all-ignored rows give NaN for 'mean', f16 logits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { LossReduction } from '../../../src/compute/ops/losses.js';
import { cpuCompute, freshSeed, freshSeedWhere, prng, randomValues, relError } from '../compute/helpers.js';
import { gradcheck, product } from './gradcheck.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

const REDUCTIONS: LossReduction[] = ['mean', 'sum', 'none'];

function reduceLoss(values: number[], reduction: LossReduction, count = values.length): number[] {
  if (reduction === 'none') return values;
  const sum = values.reduce((s, v) => s + v, 0);
  return [reduction === 'sum' ? sum : sum / count];
}

function logSoftmaxRow(row: ArrayLike<number>): number[] {
  const values = Array.from(row);
  const max = Math.max(...values);
  const lse = max + Math.log(values.reduce((s, v) => s + Math.exp(v - max), 0));
  return values.map((v) => v - lse);
}

describe('mseLoss', () => {
  for (const reduction of REDUCTIONS) {
    it(`in pred and target, reduction ${reduction}`, () => {
      for (const shape of [[7], [3, 5], [2, 1, 4]]) {
        const seed = freshSeed();
        gradcheck(g, {
          label: `mseLoss [${shape}] ${reduction}`,
          inputs: [
            { shape, values: randomValues(product(shape), seed) },
            { shape, values: randomValues(product(shape), seed + 1) },
          ],
          forward: (gpu, [p, t]) => gpu.mseLoss(p!, t!, { reduction }),
          reference: ([p, t]) => reduceLoss(Array.from(p!, (v, i) => (v - t![i]!) ** 2), reduction),
          tolerance: 1e-5,
          seed,
        });
      }
    });
  }
});

/**
 * A seed and class indices for crossEntropy over `shape`, every third row ignored (by −100 or by
 * an index past the classes). Seeds where a counted row's loss is under 0.01 are drawn again:
 * there the loss, lse − x_t, is a remainder far below f32's rounding of lse and x_t (a single row
 * missed 1e-4 about 3e-4 of runs).
 */
function indexProblem(shape: readonly number[]): { seed: number; targets: number[] } {
  const classes = shape[shape.length - 1]!;
  const rows = product(shape) / classes;
  const targetsOf = (seed: number) => {
    const next = prng(seed);
    return Array.from({ length: rows }, (_, i) => (i % 3 === 2 ? (i % 2 === 0 ? -100 : classes) : Math.floor(next() * classes)));
  };
  const seed = freshSeedWhere((s) => {
    const x = randomValues(product(shape), s, 2);
    return targetsOf(s).every((c, r) => c < 0 || c >= classes || -logSoftmaxRow(x.slice(r * classes, (r + 1) * classes))[c]! >= 0.01);
  });
  return { seed, targets: targetsOf(seed) };
}

describe('crossEntropy', () => {
  for (const reduction of REDUCTIONS) {
    it(`with class indices, some ignored, reduction ${reduction}`, () => {
      for (const shape of [[5], [4, 5], [2, 3, 7]]) {
        const { seed, targets } = indexProblem(shape);
        const classes = shape[shape.length - 1]!;
        const rows = product(shape) / classes;
        using t = g.tensor(Int32Array.from(targets), shape.slice(0, -1));
        gradcheck(g, {
          label: `crossEntropy [${shape}] indices ${reduction}`,
          inputs: [{ shape, values: randomValues(product(shape), seed, 2) }],
          forward: (gpu, [x]) => gpu.crossEntropy(x!, t, { reduction }),
          reference: ([x]) => {
            const losses: number[] = [];
            let valid = 0;
            for (let r = 0; r < rows; r++) {
              const c = targets[r]!;
              const ok = c >= 0 && c < classes;
              valid += ok ? 1 : 0;
              losses.push(ok ? -logSoftmaxRow(x!.subarray(r * classes, (r + 1) * classes))[c]! : 0);
            }
            return reduceLoss(losses, reduction, valid);
          },
          tolerance: 1e-4,
          seed,
        });
      }
    });

    it(`with class probabilities, in logits and probabilities, reduction ${reduction}`, () => {
      for (const shape of [[6], [3, 4], [2, 2, 5]]) {
        const seed = freshSeed();
        const classes = shape[shape.length - 1]!;
        const rows = product(shape) / classes;
        gradcheck(g, {
          label: `crossEntropy [${shape}] probabilities ${reduction}`,
          inputs: [
            { shape, values: randomValues(product(shape), seed, 2) },
            { shape, values: randomValues(product(shape), seed + 1).map((v) => Math.abs(v) / classes) },
          ],
          forward: (gpu, [x, p]) => gpu.crossEntropy(x!, p!, { reduction }),
          reference: ([x, p]) => {
            const losses: number[] = [];
            for (let r = 0; r < rows; r++) {
              const lsm = logSoftmaxRow(x!.subarray(r * classes, (r + 1) * classes));
              losses.push(-lsm.reduce((s, v, c) => s + v * p![r * classes + c]!, 0));
            }
            return reduceLoss(losses, reduction);
          },
          tolerance: 1e-4,
          seed,
        });
      }
    });
  }

  it('a masked class (logit −∞) beside class indices: a finite loss and gradient, 0 for the masked class', () => {
    using x = g.tensor([1, -Infinity, 2, 0.5, 3, -Infinity], [2, 3]).requiresGrad_();
    using t = g.tensor(Int32Array.from([2, 1]));
    using loss = g.crossEntropy(x, t);
    const want = (-logSoftmaxRow([1, -Infinity, 2])[2]! - logSoftmaxRow([0.5, 3, -Infinity])[1]!) / 2;
    expect(relError(loss.toArraySync(), [want])).toBeLessThan(1e-6);
    loss.backward();
    const grad = x.grad!.toArraySync();
    expect(grad.every(Number.isFinite)).toBe(true);
    expect([grad[1], grad[5]]).toEqual([0, 0]);
  });

  it("'mean' over rows that are all ignored is NaN, as in PyTorch; 'sum' is 0", () => {
    using x = g.tensor([1, 2, 3, 4], [2, 2]);
    using t = g.tensor(Int32Array.from([-100, -100]));
    using mean = g.crossEntropy(x, t);
    using sum = g.crossEntropy(x, t, { reduction: 'sum' });
    expect(Number.isNaN(mean.toArraySync()[0])).toBe(true);
    expect(sum.toArraySync()[0]).toBe(0);
  });

  it('f16 logits: computed in f32 inside, the loss and gradients in f16', () => {
    const values = randomValues(12, freshSeed(), 2);
    using x = g.tensor(values, [3, 4], 'f16').requiresGrad_();
    using t = g.tensor(Int32Array.from([0, 3, 1]));
    using loss = g.crossEntropy(x, t);
    expect(loss.dtype).toBe('f16');
    loss.backward();
    expect(x.grad!.dtype).toBe('f16');
    using x32 = g.tensor(x.toArraySync(), [3, 4]).requiresGrad_();
    using loss32 = g.crossEntropy(x32, t);
    loss32.backward();
    expect(relError(loss.toArraySync(), loss32.toArraySync())).toBeLessThan(1e-3);
    expect(relError(x.grad!.toArraySync(), x32.grad!.toArraySync())).toBeLessThan(1e-3);
  });
});
