/**
 * GRU training on CUDA (gruTraining + gruBackward): the gradients of x, h0 and every weight and
 * bias against the CPU backend on the same inputs (stacks, ensembles with shared and per-member
 * input, dropout, no h0, the last state only, f16/bf16, tf32), against float64 central
 * differences on small cases, against torch autograd through torch.nn.GRU (cuDNN, TF32 off) with
 * the same weights, and repeated backwards (the second captures the steps in a CUDA graph, the
 * third replays it) giving the same gradients.
 *
 * Tolerances (see test/unit/gru/gru-backward.test.ts): f32 gradients within 1e-4 of their norm of
 * the float64 ones, of the CPU's and of torch's (each carries about 1e-6 of f32 products and
 * stored states); bf16 within 6e-2 and f16 within 1e-2, the states being rounded at every step (the
 * CUDA forward may round a state the other way from the CPU's); tf32 within 2e-2, its products
 * keeping 10 bits of mantissa over T steps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { gruBackward, gruTraining, type GruGradients } from '../../../src/compute/ops/gru-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { freshSeed, relError } from '../../unit/compute/helpers.js';
import {
  centralDifference,
  describeTrainCase,
  dropoutMasks,
  parameters,
  trainTensors,
  trainValues,
  type TrainCase,
  type TrainValues,
} from '../../unit/gru/backward-cases.js';
import { closePair, openPair, type Pair } from '../compute/setup.js';
import { gpuAvailable } from '../gpu-available.js';
import { torchAvailable, torchGradients, type TorchCase } from './torch-sequence.js';

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

type Dtype = 'f32' | 'f16' | 'bf16';
const BOUND = { f32: 1e-4, f16: 1e-2, bf16: 6e-2, tf32: 2e-2 } as const;

/** Gradients of a training step of `c` on `g`, by input name (see `parameters`). */
function gradientsOn(g: GpuCompute, c: TrainCase, v: TrainValues, dtype: Dtype = 'f32', precision: 'highest' | 'tf32' = 'highest', repeats = 1): Map<string, number[]>[] {
  const t = trainTensors(g, c, v, dtype);
  const { output, hidden, saved } = gruTraining(g.session, t.x, t.h0, t.weights, { returnSequences: c.returnSequences, precision, ...(c.dropout ? { dropout: c.dropout } : {}) });
  try {
    return Array.from({ length: repeats }, () => {
      const grads = gruBackward(g.session, saved, { output: t.gOut, hidden: t.gHidden });
      try {
        return flatten(grads);
      } finally {
        for (const x of [grads.x, grads.h0, ...grads.layers.flatMap((l) => Object.values(l) as Tensor[])]) x?.dispose();
      }
    });
  } finally {
    saved.dispose();
    output.dispose();
    hidden.dispose();
    t.dispose();
  }
}

function flatten(grads: GruGradients): Map<string, number[]> {
  const read = (x: Tensor) => Array.from(x.toArraySync() as Float32Array);
  const out = new Map<string, number[]>([['x', read(grads.x)]]);
  if (grads.h0) out.set('h0', read(grads.h0));
  grads.layers.forEach((layer, l) => {
    for (const key of ['wIh', 'wHh', 'bIh', 'bHh'] as const) if (layer[key]) out.set(`layers[${l}].${key}`, read(layer[key]!));
  });
  return out;
}

function expectAgree(label: string, got: Map<string, number[]>, want: Map<string, ArrayLike<number>>, bound: number, dtype: Dtype = 'f32'): void {
  expect([...got.keys()].sort(), label).toEqual([...want.keys()].sort());
  for (const [name, values] of got) expect(relError(values, want.get(name)!, dtype), `${label}: ${name}`).toBeLessThanOrEqual(bound);
}

const CASES: TrainCase[] = [
  { layers: 1, batch: 32, steps: 10, input: 128, hidden: 256, h0: true, returnSequences: true, grads: 'both' },
  { layers: 2, batch: 32, steps: 10, input: 128, hidden: 256, h0: true, returnSequences: true, grads: 'output' },
  { layers: 1, ensemble: 5, sharedInput: true, batch: 32, steps: 10, input: 64, hidden: 128, h0: true, returnSequences: true, grads: 'both' },
  { layers: 2, ensemble: 3, batch: 9, steps: 7, input: 12, hidden: 40, h0: true, returnSequences: true, dropout: { p: 0.25, seed: 9 }, grads: 'both' },
  { layers: 3, batch: 33, steps: 12, input: 5, hidden: 17, biases: [true, false, true], h0: false, returnSequences: false, grads: 'both' },
  { layers: 1, batch: 1, steps: 1, input: 3, hidden: 600, h0: true, returnSequences: true, grads: 'hidden' },
  { layers: 1, batch: 256, steps: 20, input: 256, hidden: 512, h0: true, returnSequences: true, grads: 'both' },
];

describe.skipIf(!gpuAvailable)('GRU backward on CUDA', () => {
  for (const c of CASES) {
    it(`${describeTrainCase(c)} vs the CPU backend`, () => {
      const v = trainValues(c, freshSeed());
      const [cuda] = gradientsOn(pair.cuda, c, v);
      const [cpu] = gradientsOn(pair.cpu, c, v);
      expectAgree(describeTrainCase(c), cuda!, cpu!, BOUND.f32);
    });
  }

  it('gives the same gradients eagerly, when captured and when replayed', () => {
    const c = CASES[3]!;
    const [first, second, third] = gradientsOn(pair.cuda, c, trainValues(c, freshSeed()), 'f32', 'highest', 3);
    for (const [name, values] of first!) {
      expect(second!.get(name), name).toEqual(values);
      expect(third!.get(name), name).toEqual(values);
    }
  });

  for (const c of [
    { layers: 2, ensemble: 2, batch: 3, steps: 4, input: 3, hidden: 4, h0: true, returnSequences: true, grads: 'both' },
    { layers: 3, batch: 2, steps: 6, input: 2, hidden: 3, biases: [true, false, true], h0: false, returnSequences: false, dropout: { p: 0.3, seed: 4 }, grads: 'both' },
  ] satisfies TrainCase[]) {
    it(`${describeTrainCase(c)} vs float64 central differences`, () => {
      const v = trainValues(c, freshSeed());
      const masks = dropoutMasks(pair.cuda, c);
      const [got] = gradientsOn(pair.cuda, c, v);
      const fd = new Map(parameters(v).map(([name, array]) => [name, array.map((_, i) => centralDifference(c, v, masks, array, i, 1e-5))]));
      expectAgree(describeTrainCase(c), got!, fd, BOUND.f32);
    });
  }

  for (const dtype of ['f16', 'bf16'] as const) {
    it(`in ${dtype} vs the CPU backend`, () => {
      const c: TrainCase = { layers: 2, ensemble: 2, batch: 16, steps: 8, input: 24, hidden: 48, h0: true, returnSequences: true, grads: 'both' };
      const v = trainValues(c, freshSeed());
      const [cuda] = gradientsOn(pair.cuda, c, v, dtype);
      const [cpu] = gradientsOn(pair.cpu, c, v, dtype);
      expectAgree(`${describeTrainCase(c)} ${dtype}`, cuda!, cpu!, BOUND[dtype], dtype);
    });
  }

  it('under tf32 vs the CPU backend in full f32', () => {
    const c = CASES[0]!;
    const v = trainValues(c, freshSeed());
    const [cuda] = gradientsOn(pair.cuda, c, v, 'f32', 'tf32');
    const [cpu] = gradientsOn(pair.cpu, c, v);
    expectAgree(`${describeTrainCase(c)} tf32`, cuda!, cpu!, BOUND.tf32);
  });

  it.skipIf(!torchAvailable)('matches torch autograd through torch.nn.GRU with the same weights', () => {
    const cases: TrainCase[] = [
      { layers: 1, batch: 32, steps: 10, input: 128, hidden: 256, h0: true, returnSequences: true, grads: 'both' },
      { layers: 2, batch: 8, steps: 12, input: 16, hidden: 32, h0: true, returnSequences: true, grads: 'both' },
      { layers: 1, ensemble: 3, sharedInput: true, batch: 4, steps: 5, input: 8, hidden: 16, h0: true, returnSequences: true, grads: 'both' },
      { layers: 2, ensemble: 2, batch: 3, steps: 6, input: 5, hidden: 7, h0: true, returnSequences: true, grads: 'both' },
    ];
    const runs = cases.map((c, i) => {
      const v = trainValues(c, freshSeed());
      const [got] = gradientsOn(pair.cuda, c, v);
      const inputs: Record<string, number[]> = { x: v.x, h0: v.h0!, gout: v.gOut!, ghidden: v.gHidden! };
      v.layers.forEach((l, li) => Object.assign(inputs, { [`l${li}.wih`]: l.wIh, [`l${li}.whh`]: l.wHh, [`l${li}.bih`]: l.bIh!, [`l${li}.bhh`]: l.bHh! }));
      const parts = ['x', 'h0', ...v.layers.flatMap((_, li) => ['wih', 'whh', 'bih', 'bhh'].map((p) => `l${li}.${p}`))];
      const torchCase: TorchCase = {
        spec: { kind: 'gru', name: `gru${i}`, members: c.ensemble ?? 1, shared_input: c.ensemble === undefined || c.sharedInput === true, layers: c.layers, batch: c.batch, steps: c.steps, input: c.input, hidden: c.hidden },
        inputs,
        grads: parts,
      };
      return { c, got: got!, torchCase };
    });
    const torch = torchGradients(runs.map((r) => r.torchCase));
    const names: Record<string, string> = { wih: 'wIh', whh: 'wHh', bih: 'bIh', bhh: 'bHh' };
    for (const { c, got, torchCase } of runs) {
      const want = new Map([...torch.get(torchCase.spec.name)!].map(([part, values]) => {
        const m = /^l(\d+)\.(\w+)$/.exec(part);
        return [m ? `layers[${m[1]}].${names[m[2]!]}` : part, values] as const;
      }));
      expectAgree(`${describeTrainCase(c)} vs torch`, got, want, BOUND.f32);
    }
  });
});
