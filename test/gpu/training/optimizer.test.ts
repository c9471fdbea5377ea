/**
 * The fused optimizer kernel on CUDA (`kernels/optimizer.cu`) against the CPU backend's composed
 * step: SGD and AdamW over several steps, on f32, f16 and bf16 parameters of odd sizes (a chunk
 * and one, a single element, several chunks and a tail) in two groups, and three hundred
 * tensors in one launch; bit for bit, since both follow the documented order of f32 operations
 * with each operation rounded on its own. One backend call per group and dtype. And, where torch
 * is installed, the same f32 steps through torch.optim (its own order of operations, so norm-wise).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { AdamW, type AdamWOptions } from '../../../src/compute/optim/adamw.js';
import { SGD, type SgdOptions } from '../../../src/compute/optim/sgd.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, freshSeed, openPair, randomValues, relError, type Pair } from '../compute/setup.js';
import { roundTo } from '../../unit/compute/helpers.js';
import { torchOptimizer } from './torch.js';

type Rule = { name: 'SGD'; options: SgdOptions } | { name: 'AdamW'; options: AdamWOptions };

const RULES: Rule[] = [
  { name: 'SGD', options: { lr: 0.05, momentum: 0.9, dampening: 0.1, weightDecay: 0.01 } },
  { name: 'SGD', options: { lr: 0.02, momentum: 0.8, nesterov: true } },
  { name: 'AdamW', options: { lr: 3e-3, betas: [0.9, 0.99], eps: 1e-7, weightDecay: 0.05 } },
  { name: 'AdamW', options: { lr: 1e-2, amsgrad: true } },
];
const SIZES = [4097, 1, 3 * 4096 + 5, 100];
const STEPS = 5;

function optimizer(rule: Rule, groups: Tensor[][]): SGD | AdamW {
  const params = groups.map((params, i) => ({ params, ...(i === 1 ? { lr: 0.5 * rule.options.lr! } : {}) }));
  return rule.name === 'SGD' ? new SGD(params, rule.options) : new AdamW(params, rule.options);
}

/** The parameters after STEPS steps on `g` from the same values and gradients. */
function train(g: GpuCompute, rule: Rule, dtypes: readonly ('f32' | 'f16' | 'bf16')[], seed: number, sizes = SIZES): number[][] {
  const params = sizes.map((n, i) => g.tensor(randomValues(n, seed + i), [n], dtypes[i % dtypes.length]!).requiresGrad_());
  try {
    using opt = optimizer(rule, [params.slice(0, 2), params.slice(2)]);
    for (let step = 0; step < STEPS; step++) {
      params.forEach((p, i) => (p.grad = g.tensor(randomValues(p.size, seed + 1000 * (step + 1) + i), [p.size], p.dtype)));
      opt.step();
    }
    return params.map((p) => Array.from(p.toArraySync() as Float32Array));
  } finally {
    for (const p of params) p.dispose();
  }
}

describe.skipIf(!gpuAvailable)('training on CUDA: the fused optimizer step', () => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await openPair();
  });
  afterAll(() => closePair(pair));

  for (const rule of RULES) {
    it(`${rule.name} ${JSON.stringify(rule.options)}: ${STEPS} steps, f32/f16/bf16, two groups, bit for bit the CPU's`, () => {
      const seed = freshSeed();
      const dtypes = ['f32', 'f16', 'bf16'] as const;
      const step = vi.spyOn(pair.cuda.backend, 'optimizerStep');
      try {
        const cuda = train(pair.cuda, rule, dtypes, seed);
        // Group 0 holds f32 and f16, group 1 bf16 and f32: four calls a step.
        expect(step).toHaveBeenCalledTimes(4 * STEPS);
        expect(cuda, `seed ${seed}`).toEqual(train(pair.cpu, rule, dtypes, seed));
      } finally {
        step.mockRestore();
      }
    });
  }

  it('three hundred tensors in one launch, bit for bit the CPU', () => {
    const seed = freshSeed();
    const sizes = Array.from({ length: 300 }, (_, i) => 1 + ((i * 977) % 5000));
    const rule: Rule = { name: 'AdamW', options: { lr: 1e-2 } };
    expect(train(pair.cuda, rule, ['f32'], seed, sizes)).toEqual(train(pair.cpu, rule, ['f32'], seed, sizes));
  });

  it('close to torch.optim in f32 (skipped where torch is not installed)', () => {
    for (const rule of RULES) {
      const seed = freshSeed();
      const params = SIZES.map((n, i) => randomValues(n, seed + i).map(Math.fround));
      const grads = Array.from({ length: STEPS }, (_, step) => SIZES.map((n, i) => randomValues(n, seed + 1000 * (step + 1) + i).map(Math.fround)));
      // One group here: torch's per-group lr is the same mechanism.
      const ours = (() => {
        const tensors = params.map((p) => pair.cuda.tensor(p).requiresGrad_());
        try {
          using opt = rule.name === 'SGD' ? new SGD(tensors, rule.options) : new AdamW(tensors, rule.options);
          for (const step of grads) {
            tensors.forEach((t, i) => (t.grad = pair.cuda.tensor(step[i]!)));
            opt.step();
          }
          return tensors.map((t) => Array.from(t.toArraySync() as Float32Array));
        } finally {
          for (const t of tensors) t.dispose();
        }
      })();
      const o = rule.options as Record<string, unknown>;
      const options = Object.fromEntries(Object.entries(o).map(([k, v]) => [k === 'weightDecay' ? 'weight_decay' : k, v])) as Record<string, number | boolean | number[]>;
      const torch = torchOptimizer({ rule: rule.name === 'SGD' ? 'sgd' : 'adamw', options, params, grads });
      if (torch === undefined) return;
      ours.forEach((p, i) => expect(relError(p, torch.params[i]!), `${rule.name} tensor ${i} against torch on ${torch.device}`).toBeLessThan(1e-6));
    }
  });

  it('an f16 parameter rounds once per step: the CUDA result is its f32 update rounded', () => {
    const values = randomValues(64, freshSeed()).map(roundTo('f16'));
    const run = (g: GpuCompute) => {
      using p = g.tensor(values, [64], 'f16').requiresGrad_();
      using opt = new SGD([p], { lr: 0.1 });
      p.grad = g.ones([64], 'f16');
      opt.step();
      return Array.from(p.toArraySync());
    };
    expect(run(pair.cuda)).toEqual(values.map((v) => roundTo('f16')(Math.fround(v - Math.fround(0.1)))));
  });
});
