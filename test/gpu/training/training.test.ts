/**
 * A training loop on CUDA end to end: a two-layer MLP with layerNorm and gelu fitted by AdamW to
 * a known function, the loss falling by 10x, its curve following the CPU backend's from the same
 * weights and data, and the pool's bytes in use the same after every step (the graph, its saved
 * tensors and the intermediate gradients all go back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { AdamW } from '../../../src/compute/optim/adamw.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, openPair, randomValues, type Pair } from '../compute/setup.js';

/** The losses of `steps` AdamW steps of a 3 → 64 → 1 MLP regressing y = tanh(2·x0) + x1·x2 on g, and the bytes in use after each. */
function fit(g: GpuCompute, steps: number): { losses: number[]; inUse: number[] } {
  // Host values, so both backends start from the same numbers (randn agrees only within an ulp).
  using x = g.tensor(randomValues(256 * 3, 1), [256, 3]);
  const y = g.scope(() => {
    const pick = (column: number[]) => g.matmul(x, g.tensor(column, [3, 1]));
    return g.add(g.tanh(pick([2, 0, 0])), g.mul(pick([0, 1, 0]), pick([0, 0, 1])));
  });
  const w1 = g.tensor(randomValues(64 * 3, 2, 0.5), [64, 3]).requiresGrad_();
  const b1 = g.zeros([64]).requiresGrad_();
  const w2 = g.tensor(randomValues(64, 3, 0.1), [1, 64]).requiresGrad_();
  const b2 = g.zeros([1]).requiresGrad_();
  const params = [w1, b1, w2, b2];
  try {
    using opt = new AdamW(params, { lr: 1e-2, weightDecay: 0 });
    const losses: number[] = [];
    const inUse: number[] = [];
    for (let step = 0; step < steps; step++) {
      g.scope(() => {
        const h = g.gelu(g.layerNorm(g.linear(x, w1, b1)));
        const loss = g.mseLoss(g.linear(h, w2, b2), y);
        loss.backward();
        opt.step();
        opt.zeroGrad();
        losses.push(loss.toArraySync()[0]!);
      });
      inUse.push(g.memoryStats().inUseBytes);
    }
    return { losses, inUse };
  } finally {
    for (const p of params) p.dispose();
    y.dispose();
  }
}

describe.skipIf(!gpuAvailable)('training on CUDA: a loop end to end', () => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await openPair();
  });
  afterAll(() => closePair(pair));

  it('an MLP fitted by AdamW: the loss falls 10x, follows the CPU, and nothing accumulates', () => {
    const cuda = fit(pair.cuda, 300);
    const cpu = fit(pair.cpu, 300);
    expect(cuda.losses.at(-1)! * 10).toBeLessThan(cuda.losses[0]!);
    for (const step of [0, 10, 100, 299]) expect(Math.abs(cuda.losses[step]! - cpu.losses[step]!) / cpu.losses[step]!, `step ${step}`).toBeLessThan(2e-2);
    expect(new Set(cuda.inUse.slice(1)).size, 'bytes in use after each step (the optimizer state is made on the first)').toBe(1);
  });
});
