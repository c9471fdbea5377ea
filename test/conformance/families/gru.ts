/**
 * gru, gruCell and gruRollout against the float64 GRU written from PyTorch's equations
 * (`test/unit/gru`), each case run on the CPU backend too with the same inputs: one layer, a
 * stack, an ensemble with a shared and with per-member inputs, the last state only, layer norm
 * of the carried state, f16/bf16 (the reference rounds where the library stores), tf32, and
 * dropout on the emitted states (the mask of `gpu.dropout`, the hidden state untouched).
 * No check of the bytes left in use here: a CUDA backend keeps a repeated call's captured graph,
 * scratch included, by design.
 */
import { expect, it } from 'vitest';
import { checkCell, checkGru, checkRollout, GRU_BOUND, read, type GruCase } from '../../unit/gru/checks.js';
import { randomLayer, randomTensor } from '../../unit/gru/fixtures.js';
import { relError } from '../../unit/compute/helpers.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import type { ConformanceContext, FloatDType } from '../context.js';
import { Case } from '../seeds.js';

type Sized = Omit<GruCase, 'seed'>;

const GRU_CASES: [string, Sized][] = [
  ['one layer', { batch: 3, steps: 5, input: 4, hidden: 6 }],
  ['three-layer stack', { batch: 2, steps: 4, input: 5, hidden: 7, layers: 3 }],
  ['ensemble of 3, shared input, 2 layers', { batch: 2, steps: 3, input: 4, hidden: 5, ensemble: 3, layers: 2 }],
  ['ensemble of 3, per-member input', { batch: 2, steps: 3, input: 4, hidden: 5, ensemble: 3, perMemberInput: true }],
  ['last state only, 2 layers', { batch: 3, steps: 6, input: 3, hidden: 5, layers: 2, returnSequences: false }],
  ['layer norm, ensemble of 2', { batch: 2, steps: 4, input: 3, hidden: 9, ensemble: 2, layerNorm: true }],
  ['f16', { batch: 2, steps: 5, input: 5, hidden: 7, dtype: 'f16' }],
  ['bf16, 2 layers', { batch: 3, steps: 4, input: 6, hidden: 5, layers: 2, dtype: 'bf16' }],
  ['tf32', { batch: 3, steps: 5, input: 8, hidden: 6, precision: 'tf32' }],
];

function bound(c: Sized): number {
  return c.precision === 'tf32' ? GRU_BOUND.tf32 : GRU_BOUND[(c.dtype ?? 'f32') as 'f32' | 'f16' | 'bf16'];
}

export function describeGru(ctx: ConformanceContext): void {
  ctx.describeOps('gru, gruCell and gruRollout', ['gru', 'gruCell', 'gruRollout'], () => {
    for (const [name, sized] of GRU_CASES) {
      if (!ctx.dtypes.includes(sized.dtype ?? 'f32')) continue;
      it(`gru: ${name}`, () => {
        const c = new Case(`gru ${name}`);
        const gruCase = { ...sized, seed: c.seed };
        const got = checkGru(ctx.gpu, gruCase);
        expect(got.output, c.msg('output vs float64 reference')).toBeLessThanOrEqual(bound(sized));
        expect(got.hidden, c.msg('hidden vs float64 reference')).toBeLessThanOrEqual(bound(sized));
        if (!ctx.cpu) return;
        const cpu = checkGru(ctx.cpu, gruCase).got;
        expect(relError(got.got.output, cpu.output, sized.dtype), c.msg('output vs the CPU backend')).toBeLessThanOrEqual(bound(sized));
        expect(relError(got.got.hidden, cpu.hidden, sized.dtype), c.msg('hidden vs the CPU backend')).toBeLessThanOrEqual(bound(sized));
      });
    }

    for (const [name, cell] of [['one', {}], ['an ensemble of 4 sharing x', { ensemble: 4 }], ['bf16', { dtype: 'bf16' }]] as const) {
      const dtype = 'dtype' in cell ? cell.dtype : 'f32';
      if (!ctx.dtypes.includes(dtype)) continue;
      it(`gruCell: ${name}`, () => {
        const c = new Case(`gruCell ${name}`);
        const cellCase = { batch: 3, input: 4, hidden: 5, ...cell, seed: c.seed };
        const got = checkCell(ctx.gpu, cellCase);
        expect(got.error, c.msg('vs float64 reference')).toBeLessThanOrEqual(GRU_BOUND[dtype]);
        if (ctx.cpu) expect(relError(got.got, checkCell(ctx.cpu, cellCase).got, dtype), c.msg('vs the CPU backend')).toBeLessThanOrEqual(GRU_BOUND[dtype]);
      });
    }

    if (ctx.dtypes.includes('f32')) {
      it('gruRollout: one layer, an ensemble of 3, a 2-layer stack', () => {
        for (const [name, extra] of [['one layer', {}], ['ensemble', { ensemble: 3 }], ['stack', { layers: 2 }]] as const) {
          const c = new Case(`gruRollout ${name}`);
          const rollout = { batch: 2, state: 3, hidden: 5, steps: 4, ...extra, seed: c.seed };
          const got = checkRollout(ctx.gpu, rollout);
          expect(got.states, c.msg('states vs float64 reference')).toBeLessThanOrEqual(GRU_BOUND.f32);
          expect(got.hidden, c.msg('hidden vs float64 reference')).toBeLessThanOrEqual(GRU_BOUND.f32);
          if (!ctx.cpu) continue;
          const cpu = checkRollout(ctx.cpu, rollout).got;
          expect(relError(got.got.states, cpu.states), c.msg('states vs the CPU backend')).toBeLessThanOrEqual(GRU_BOUND.f32);
          expect(relError(got.got.hidden, cpu.hidden), c.msg('hidden vs the CPU backend')).toBeLessThanOrEqual(GRU_BOUND.f32);
        }
      });
    }

    ctx.describeOps('with dropout', ['gru', 'dropout'], () => {
      for (const dtype of ctx.floatDtypes()) {
        it(`drops each layer's emitted states with dropout's mask (seed + layer), not the hidden state, in ${dtype}`, () => {
          const c = new Case(`gru dropout ${dtype}`);
          const seeds = [c.subSeed(), c.subSeed(), c.subSeed()];
          const got = droppedGru(ctx.gpu, dtype, seeds);
          // The same mask exactly; the values within the bound (the products may take other kernels between calls).
          expect(got.output.map((v) => v === 0), c.msg('dropped states')).toEqual(got.expectedOutput.map((v) => v === 0));
          expect(got.output.some((v) => v === 0), c.msg('some states dropped')).toBe(true);
          expect(relError(got.output, got.expectedOutput, dtype), c.msg('output')).toBeLessThanOrEqual(GRU_BOUND[dtype]);
          expect(relError(got.hidden, got.expectedHidden, dtype), c.msg('hidden')).toBeLessThanOrEqual(GRU_BOUND[dtype]);
          if (!ctx.cpu) return;
          const cpu = droppedGru(ctx.cpu, dtype, seeds);
          expect(relError(got.output, cpu.output, dtype), c.msg('output vs the CPU backend')).toBeLessThanOrEqual(GRU_BOUND[dtype]);
          expect(relError(got.hidden, cpu.hidden, dtype), c.msg('hidden vs the CPU backend')).toBeLessThanOrEqual(GRU_BOUND[dtype]);
        });
      }
    });
  });
}

/**
 * A 2-layer GRU with dropout { p: 0.3, seed: 11 } on `gpu`, and what it should give from the ops it
 * is made of: layer 0 on x, its states through `gpu.dropout` with seed 11, layer 1 on those, its
 * states with seed 12; the hidden states are the layers' own, undropped.
 */
function droppedGru(gpu: GpuCompute, dtype: FloatDType, seeds: number[]) {
  const layers = [randomLayer(gpu, 4, 6, seeds[0]!, dtype), randomLayer(gpu, 6, 6, seeds[1]!, dtype)];
  const x = randomTensor(gpu, [3, 5, 4], seeds[2]!, dtype);
  const owned: Tensor[] = [...layers.flatMap((l) => l.tensors), x.tensor];
  const keep = <T extends Tensor>(t: T): T => (owned.push(t), t);
  try {
    const dropped = gpu.gru(x.tensor, undefined, layers.map((l) => l.weights), { dropout: { p: 0.3, seed: 11 } });
    keep(dropped.output);
    keep(dropped.hidden);
    const first = gpu.gru(x.tensor, undefined, layers[0]!.weights);
    keep(first.output);
    keep(first.hidden);
    const second = gpu.gru(keep(gpu.dropout(first.output, 0.3, 11)), undefined, layers[1]!.weights);
    keep(second.output);
    keep(second.hidden);
    return {
      output: read(dropped.output),
      hidden: read(dropped.hidden),
      expectedOutput: read(keep(gpu.dropout(second.output, 0.3, 12))),
      expectedHidden: [...read(first.hidden), ...read(second.hidden)],
    };
  } finally {
    for (const t of owned) t.dispose();
  }
}
