/**
 * A failed backward op leaves nothing allocated: attentionBackward, and gruTraining followed by
 * gruBackward (what an autograd step runs), made to fail at each allocation, at each backend call
 * and under a swept poolLimitBytes (`leak-check.ts`); the pool must be back at its baseline after
 * each failure. They are not GpuCompute methods (the autograd reaches them through the session),
 * so they are swept here rather than through the public-method tables.
 */
import { describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { attentionBackward } from '../../../src/compute/ops/attention-backward.js';
import { gruBackward, gruTraining } from '../../../src/compute/ops/gru-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { sweepFailures, type Inputs, type OpCase } from './leak-check.js';
import { filled } from './op-cases.js';

const CASES: OpCase[] = [
  {
    method: 'attentionBackward',
    label: 'GQA, causal, key lengths',
    inputs: (g) => {
      const q = filled(g, [2, 4, 5, 8], 1);
      const k = filled(g, [2, 2, 6, 8], 2);
      // A lengths tensor: a number array would make the forward allocate above what the inputs keep.
      const lengths = g.tensor(Int32Array.from([6, 3]), [2]);
      const { out, lse } = g.attention(q, k, k, { causal: true, keyLengths: lengths, returnLogSumExp: true });
      return { q, k, out, lse, lengths };
    },
    run: (g, t) => attentionBackward(g.session, t.q!, t.k!, t.k!, t.out!, t.lse!, t.q!, { causal: true, keyLengths: t.lengths as Tensor<'i32'> }),
  },
  {
    method: 'gruTraining + gruBackward',
    label: 'two-layer ensemble, dropout',
    inputs: (g) => ({
      x: filled(g, [2, 3, 4], 1),
      h0: filled(g, [2, 2, 2, 5], 2),
      wIh0: filled(g, [2, 15, 4], 3),
      wHh0: filled(g, [2, 15, 5], 4),
      bIh0: filled(g, [2, 15], 5),
      wIh1: filled(g, [2, 15, 5], 6),
      wHh1: filled(g, [2, 15, 5], 7),
      gOut: filled(g, [2, 2, 3, 5], 8),
    }),
    run: (g: GpuCompute, t: Inputs) => {
      const weights = [
        { wIh: t.wIh0!, wHh: t.wHh0!, bIh: t.bIh0! },
        { wIh: t.wIh1!, wHh: t.wHh1! },
      ];
      const { output, hidden, saved } = gruTraining(g.session, t.x!, t.h0!, weights, { dropout: { p: 0.5, seed: 3 } });
      try {
        return [output, hidden, gruBackward(g.session, saved, { output: t.gOut! })];
      } catch (err) {
        output.dispose();
        hidden.dispose();
        throw err;
      } finally {
        saved.dispose();
      }
    },
  },
];

describe('a failed backward op leaves nothing allocated', () => {
  for (const c of CASES) {
    it(`${c.method} (${c.label})`, async () => {
      const report = await sweepFailures(c);
      expect(report.allocations, 'the op allocates').toBeGreaterThan(0);
      expect(report.calls, 'the op calls the backend').toBeGreaterThan(0);
      expect(report.missed, 'the CPU backend makes the same calls on every run').toBe(0);
    });
  }
});
