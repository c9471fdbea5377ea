/**
 * gruTraining + gruBackward: the gradients of x, h0 and every layer's weights and biases against
 * central finite differences of the float64 forward (`test/unit/gru/backward-cases.ts`, every
 * coordinate; the tensors' values and the library's dropout masks, so the difference quotient
 * is that of the computation the backend runs), and against the CPU backend on the same inputs:
 * a stack, ensembles with shared and per-member input, the last state only, dropout between
 * layers, layers without bias, no h0, gradients at the output, the hidden state or both, bf16.
 *
 * Bounds (see test/unit/gru/gru-backward.test.ts): f32 gradients within 1e-4 of their norm (the
 * f32 products and stored states give about 1e-6 on these sizes); bf16 ones within 6e-2, its
 * states being rounded to 8 bits at every step. No check of the bytes left in use: a CUDA
 * backend keeps the forward's captured graphs, scratch included, by design.
 */
import { expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { gruBackward, gruTraining, type GruGradients } from '../../../src/compute/ops/gru-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { relError } from '../../unit/compute/helpers.js';
import { centralDifference, dropoutMasks, parameters, trainTensors, trainValues, type TrainCase, type TrainValues } from '../../unit/gru/backward-cases.js';
import type { ConformanceContext } from '../context.js';
import { Case } from '../seeds.js';

type Dtype = 'f32' | 'bf16';

const CASES: [string, TrainCase, Dtype][] = [
  ['two-layer stack, both gradients', { layers: 2, batch: 3, steps: 4, input: 3, hidden: 5, h0: true, returnSequences: true, grads: 'both' }, 'f32'],
  ['ensemble of 3 sharing x', { layers: 1, ensemble: 3, sharedInput: true, batch: 2, steps: 3, input: 4, hidden: 4, h0: true, returnSequences: true, grads: 'both' }, 'f32'],
  [
    'ensemble of 2, per-member x, 2 layers, dropout',
    { layers: 2, ensemble: 2, batch: 4, steps: 5, input: 3, hidden: 6, h0: true, returnSequences: true, dropout: { p: 0.4, seed: 5 }, grads: 'output' },
    'f32',
  ],
  [
    'three layers, last state only, a layer without bias, no h0',
    { layers: 3, batch: 2, steps: 6, input: 2, hidden: 3, biases: [true, false, true], h0: false, returnSequences: false, grads: 'both' },
    'f32',
  ],
  ['one step, gradient of the hidden state only', { layers: 1, batch: 5, steps: 1, input: 3, hidden: 4, h0: true, returnSequences: true, grads: 'hidden' }, 'f32'],
  ['bf16, ensemble of 2, 2 layers', { layers: 2, ensemble: 2, batch: 3, steps: 4, input: 3, hidden: 4, h0: true, returnSequences: true, grads: 'both' }, 'bf16'],
];

const BOUND: Record<Dtype, number> = { f32: 1e-4, bf16: 6e-2 };

/** Every gradient of a training step of `c` on `g`, by input name (see `parameters`). */
function gradientsOn(g: GpuCompute, c: TrainCase, v: TrainValues, dtype: Dtype): Map<string, number[]> {
  const t = trainTensors(g, c, v, dtype);
  let grads: GruGradients | undefined;
  try {
    const { output, hidden, saved } = gruTraining(g.session, t.x, t.h0, t.weights, { returnSequences: c.returnSequences, ...(c.dropout ? { dropout: c.dropout } : {}) });
    try {
      grads = gruBackward(g.session, saved, { output: t.gOut, hidden: t.gHidden });
    } finally {
      saved.dispose();
      output.dispose();
      hidden.dispose();
    }
    const read = (x: Tensor) => Array.from(x.toArraySync() as Float32Array);
    const out = new Map<string, number[]>([['x', read(grads.x)]]);
    if (grads.h0) out.set('h0', read(grads.h0));
    grads.layers.forEach((layer, l) => {
      for (const key of ['wIh', 'wHh', 'bIh', 'bHh'] as const) if (layer[key]) out.set(`layers[${l}].${key}`, read(layer[key]!));
    });
    return out;
  } finally {
    if (grads) for (const x of [grads.x, grads.h0, ...grads.layers.flatMap((l) => Object.values(l) as Tensor[])]) x?.dispose();
    t.dispose();
  }
}

/** The values as a tensor of `dtype` holds them. */
function held(v: TrainValues, dtype: Dtype, g: GpuCompute, c: TrainCase): TrainValues {
  if (dtype === 'f32') return v;
  const t = trainTensors(g, c, v, dtype);
  try {
    const read = (x: Tensor | undefined) => (x ? Array.from(x.toArraySync() as Float32Array) : undefined);
    const weights = Array.isArray(t.weights) ? t.weights : [t.weights];
    const w: TrainValues = { x: read(t.x)!, layers: weights.map((l) => ({ wIh: read(l.wIh)!, wHh: read(l.wHh)!, ...(l.bIh ? { bIh: read(l.bIh)!, bHh: read(l.bHh)! } : {}) })) };
    if (t.h0) w.h0 = read(t.h0)!;
    if (t.gOut) w.gOut = read(t.gOut)!;
    if (t.gHidden) w.gHidden = read(t.gHidden)!;
    return w;
  } finally {
    t.dispose();
  }
}

export function describeGruBackward(ctx: ConformanceContext): void {
  ctx.describeOps('gruTraining and gruBackward', ['gruTraining'], () => {
    for (const [name, tc, dtype] of CASES) {
      if (!ctx.dtypes.includes(dtype)) continue;
      it(name, () => {
        const c = new Case(`gruBackward ${name}`);
        const v = held(trainValues(tc, c.seed), dtype, ctx.gpu, tc);
        const masks = dropoutMasks(ctx.gpu, tc);
        const got = gradientsOn(ctx.gpu, tc, v, dtype);
        const cpu = ctx.cpu && gradientsOn(ctx.cpu, tc, v, dtype);
        for (const [param, array] of parameters(v)) {
          const fd = array.map((_, i) => centralDifference(tc, v, masks, array, i, 1e-5));
          expect(relError(got.get(param)!, fd), c.msg(`${param} vs float64 finite differences`)).toBeLessThanOrEqual(BOUND[dtype]);
          if (cpu) expect(relError(got.get(param)!, cpu.get(param)!), c.msg(`${param} vs the CPU backend`)).toBeLessThanOrEqual(BOUND[dtype]);
        }
      });
    }
  });
}
