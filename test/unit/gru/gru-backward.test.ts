/**
 * GRU training on the CPU backend: gruTraining's forward, and gruBackward's gradients of x, h0
 * and every layer's weights and biases against central finite differences of a float64 forward
 * (`backward-cases.ts`, PyTorch's equations), for 1–3 layers, ensembles (shared and per-member
 * input), batch 1–33, 1–12 steps, with and without h0, biases, dropout and returnSequences.
 *
 * Tolerances. The differences are taken in float64 with a step of 1e-5 on values of order 1:
 * truncation ε²/6·|L'''| ≈ 1e-11, rounding 2^-53·|L|/ε ≈ 1e-10, so the reference gradient is good
 * to about 1e-9. The library's gradients are f32: the forward stores each state in f32 and the
 * products (x·W_ihᵀ, h·W_hhᵀ, dGh·W_hh, the weight gradients) are f32 sums of up to B·T terms, with
 * the gates in f64; their error is of order T·√(B·T)·2^-24 ≲ 1e-5 relative to the gradient's norm
 * for these sizes. Each gradient is held to 1e-4 of its norm (norm-wise) and each element to 1e-4
 * of the largest: ten times the expected error, while a missing or wrong term moves some element
 * by a sizeable fraction of the typical one. Directional derivatives (the large case, where one
 * difference per coordinate would take too long) are held to 1e-4·‖∇L‖·‖u‖.
 * f16/bf16 round every stored state to 8 or 11 bits (and the inputs already are): their
 * gradients differ from the float64 ones by a few units of that rounding per step, so 1e-2 (f16)
 * and 6e-2 (bf16) norm-wise on a 4-step case.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { gruBackward, gruTraining, type GruGradients } from '../../../src/compute/ops/gru-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { DisposedError, InvalidArgumentError, UnsupportedOperationError } from '../../../src/errors.js';
import { cpuCompute, freshSeed, prng, relError } from '../compute/helpers.js';
import {
  centralDifference,
  describeTrainCase,
  dropoutMasks,
  forward64,
  loss64,
  parameters,
  trainShapes,
  trainTensors,
  trainValues,
  type TrainCase,
} from './backward-cases.js';

let gpu: GpuCompute;
let other: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
  other = await cpuCompute();
});
afterAll(() => {
  gpu.dispose();
  other.dispose();
});

const EPS = 1e-5;

/** Cases small enough for a central difference at every coordinate of every input. */
const SMALL: TrainCase[] = [
  { layers: 1, batch: 1, steps: 1, input: 3, hidden: 4, h0: true, returnSequences: true, grads: 'output' },
  { layers: 2, batch: 3, steps: 5, input: 4, hidden: 5, h0: true, returnSequences: true, grads: 'both' },
  { layers: 3, batch: 2, steps: 4, input: 3, hidden: 3, biases: [true, false, true], h0: false, returnSequences: false, dropout: { p: 0.3, seed: 7 }, grads: 'both' },
  { layers: 1, ensemble: 3, sharedInput: true, batch: 2, steps: 3, input: 2, hidden: 4, h0: true, returnSequences: true, grads: 'both' },
  { layers: 2, ensemble: 2, batch: 5, steps: 6, input: 3, hidden: 6, h0: true, returnSequences: true, dropout: { p: 0.5, seed: 11 }, grads: 'output' },
  { layers: 3, ensemble: 2, sharedInput: true, batch: 1, steps: 12, input: 2, hidden: 3, h0: true, returnSequences: false, grads: 'hidden' },
  { layers: 2, batch: 4, steps: 2, input: 1, hidden: 2, biases: [false, false], h0: false, returnSequences: true, grads: 'hidden' },
];

/** A case too large for every coordinate: batch 33, 12 steps. */
const LARGE: TrainCase = { layers: 2, ensemble: 2, batch: 33, steps: 12, input: 8, hidden: 16, h0: true, returnSequences: true, dropout: { p: 0.2, seed: 3 }, grads: 'both' };

function optionsOf(c: TrainCase) {
  return { returnSequences: c.returnSequences, ...(c.dropout ? { dropout: c.dropout } : {}) };
}

/** The library's gradient of a named input (see `parameters`). */
function gradientOf(grads: GruGradients, name: string): Float32Array {
  if (name === 'x') return grads.x.toArraySync() as Float32Array;
  if (name === 'h0') return grads.h0!.toArraySync() as Float32Array;
  const [, l, key] = /^layers\[(\d+)\]\.(\w+)$/.exec(name)!;
  return grads.layers[Number(l)]![key as 'wIh']!.toArraySync() as Float32Array;
}

function disposeGradients(grads: GruGradients): void {
  grads.x.dispose();
  grads.h0?.dispose();
  for (const layer of grads.layers) for (const t of Object.values(layer) as Tensor[]) t.dispose();
}

/** Forward and backward of a case through the front-ends; returns the gradients and the forward's output and hidden. */
function train(g: GpuCompute, c: TrainCase, t: ReturnType<typeof trainTensors>) {
  const { output, hidden, saved } = gruTraining(g.session, t.x, t.h0, t.weights, optionsOf(c));
  try {
    const grads = gruBackward(g.session, saved, { output: t.gOut, hidden: t.gHidden });
    return { grads, output, hidden };
  } finally {
    saved.dispose();
  }
}

function maxAbs(x: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]!));
  return m;
}

describe('GRU backward: CPU gradients against float64 central differences at every coordinate', () => {
  for (const c of SMALL) {
    it(describeTrainCase(c), () => {
      const seed = freshSeed();
      const v = trainValues(c, seed);
      const t = trainTensors(gpu, c, v);
      const masks = dropoutMasks(gpu, c);
      const { grads, output, hidden } = train(gpu, c, t);
      try {
        const ref = forward64(c, v, masks);
        expect(relError(output.toArraySync() as Float32Array, ref.output), `output (seed ${seed})`).toBeLessThan(1e-5);
        expect(relError(hidden.toArraySync() as Float32Array, ref.hidden), `hidden (seed ${seed})`).toBeLessThan(1e-5);
        expect(grads.h0 === undefined).toBe(!c.h0);
        for (const [name, array] of parameters(v)) {
          const fd = array.map((_, i) => centralDifference(c, v, masks, array, i, EPS));
          const got = gradientOf(grads, name);
          expect(got.length, name).toBe(fd.length);
          expect(relError(got, fd), `${name} norm-wise (seed ${seed})`).toBeLessThan(1e-4);
          const bound = 1e-4 * maxAbs(fd) + 1e-7;
          for (let i = 0; i < fd.length; i++) expect(Math.abs(got[i]! - fd[i]!), `${name}[${i}]: ${got[i]} vs ${fd[i]} (seed ${seed})`).toBeLessThanOrEqual(bound);
        }
      } finally {
        disposeGradients(grads);
        output.dispose();
        hidden.dispose();
        t.dispose();
      }
    });
  }

  it(`${describeTrainCase(LARGE)}: directional derivatives and sampled coordinates`, () => {
    const c = LARGE;
    const seed = freshSeed();
    const v = trainValues(c, seed);
    const t = trainTensors(gpu, c, v);
    const masks = dropoutMasks(gpu, c);
    const { grads, output, hidden } = train(gpu, c, t);
    try {
      const params = parameters(v);
      const got = new Map(params.map(([name]) => [name, gradientOf(grads, name)]));
      const gradNorm = Math.sqrt(params.reduce((a, [name]) => a + Array.from(got.get(name)!).reduce((b, x) => b + x * x, 0), 0));
      const random = prng(seed + 99);
      for (let trial = 0; trial < 3; trial++) {
        const dirs = params.map(([, array]) => array.map(() => random() - 0.5));
        const length = Math.sqrt(dirs.reduce((a, d) => a + d.reduce((b, x) => b + x * x, 0), 0));
        const saved = params.map(([, array]) => [...array]);
        const at = (sign: number) => {
          params.forEach(([, array], p) => array.forEach((_, i) => (array[i] = saved[p]![i]! + (sign * EPS * dirs[p]![i]!) / length)));
          return loss64(c, v, masks);
        };
        const fd = (at(1) - at(-1)) / (2 * EPS);
        params.forEach(([, array], p) => array.forEach((_, i) => (array[i] = saved[p]![i]!)));
        let analytic = 0;
        params.forEach(([name], p) => dirs[p]!.forEach((d, i) => (analytic += (got.get(name)![i]! * d) / length)));
        expect(Math.abs(fd - analytic), `direction ${trial}: ${fd} vs ${analytic} (seed ${seed})`).toBeLessThanOrEqual(1e-4 * gradNorm);
      }
      for (const [name, array] of params) {
        const g = got.get(name)!;
        const bound = 1e-4 * maxAbs(g) + 1e-7;
        for (let k = 0; k < 3; k++) {
          const i = Math.floor(random() * array.length);
          const fd = centralDifference(c, v, masks, array, i, EPS);
          expect(Math.abs(g[i]! - fd), `${name}[${i}]: ${g[i]} vs ${fd} (seed ${seed})`).toBeLessThanOrEqual(bound);
        }
      }
    } finally {
      disposeGradients(grads);
      output.dispose();
      hidden.dispose();
      t.dispose();
    }
  });

  for (const [dtype, tolerance] of [['f16', 1e-2], ['bf16', 6e-2]] as const) {
    it(`in ${dtype}, against float64 on the values the tensors hold`, () => {
      const c: TrainCase = { layers: 2, ensemble: 2, batch: 3, steps: 4, input: 3, hidden: 4, h0: true, returnSequences: true, grads: 'both' };
      const seed = freshSeed();
      const v = trainValues(c, seed);
      const t = trainTensors(gpu, c, v, dtype);
      // The float64 reference sees what the tensors hold.
      const held = (x: Tensor | undefined) => (x ? Array.from(x.toArraySync() as Float32Array) : undefined);
      const weights = Array.isArray(t.weights) ? t.weights : [t.weights];
      const w = { x: held(t.x)!, h0: held(t.h0), gOut: held(t.gOut), gHidden: held(t.gHidden), layers: weights.map((l) => ({ wIh: held(l.wIh)!, wHh: held(l.wHh)!, bIh: held(l.bIh), bHh: held(l.bHh) })) };
      const { grads, output, hidden } = train(gpu, c, t);
      try {
        expect(grads.x.dtype).toBe(dtype);
        for (const [name, array] of parameters(w)) {
          const fd = array.map((_, i) => centralDifference(c, w, undefined, array, i, EPS));
          expect(relError(gradientOf(grads, name), fd), `${name} (seed ${seed})`).toBeLessThan(tolerance);
        }
      } finally {
        disposeGradients(grads);
        output.dispose();
        hidden.dispose();
        t.dispose();
      }
    });
  }
});

describe('gruTraining and gruBackward', () => {
  it('gives the forward of gpu.gru, and a saved record that outlives the caller\'s tensors and leaves nothing behind', () => {
    const c: TrainCase = { layers: 2, ensemble: 2, batch: 3, steps: 4, input: 3, hidden: 5, h0: true, returnSequences: true, grads: 'both' };
    const v = trainValues(c, freshSeed());
    const before = gpu.memoryStats().inUseBytes;
    const t = trainTensors(gpu, c, v);
    const plain = gpu.gru(t.x, t.h0, t.weights);
    const { output, hidden, saved } = gruTraining(gpu.session, t.x, t.h0, t.weights);
    expect(Array.from(output.toArraySync())).toEqual(Array.from(plain.output.toArraySync()));
    expect(Array.from(hidden.toArraySync())).toEqual(Array.from(plain.hidden.toArraySync()));
    const first = gruBackward(gpu.session, saved, { output: t.gOut, hidden: t.gHidden });
    const gOut = gpu.copy(t.gOut!);
    const gHidden = gpu.copy(t.gHidden!);
    // The caller's inputs may go: the record holds views of them.
    t.dispose();
    const second = gruBackward(gpu.session, saved, { output: gOut, hidden: gHidden });
    for (const [a, b] of [[first.x, second.x], [first.h0!, second.h0!], [first.layers[1]!.wHh, second.layers[1]!.wHh]] as const) {
      expect(Array.from(b.toArraySync())).toEqual(Array.from(a.toArraySync()));
    }
    expect(first.layers.map((l) => l.wIh.shape)).toEqual([trainShapes(c).layer(0).wIh, trainShapes(c).layer(1).wIh]);
    saved.dispose();
    saved.dispose();
    for (const x of [output, hidden, plain.output, plain.hidden, gOut, gHidden]) x.dispose();
    disposeGradients(first);
    disposeGradients(second);
    expect(gpu.memoryStats().inUseBytes).toBe(before);
  });

  it('keeps each f32 layer\'s input projection for the backward where its layout is the backward\'s', () => {
    const kept = (c: TrainCase, dtype: 'f32' | 'bf16' = 'f32') => {
      const t = trainTensors(gpu, c, trainValues(c, freshSeed()), dtype);
      const { output, hidden, saved } = gruTraining(gpu.session, t.x, t.h0, t.weights);
      const first = saved.projections[0];
      if (first) {
        // The kept projection is x·W_ihᵀ, as the backward would compute it again.
        const E = c.ensemble ?? 1;
        const layer0 = Array.isArray(t.weights) ? t.weights[0]! : t.weights;
        using x = t.x.reshape([E, c.batch * c.steps, c.input]);
        using wIh = layer0.wIh.reshape([E, 3 * c.hidden, c.input]);
        using again = gpu.matmul(x, wIh, { transB: true });
        expect(Array.from(first.toArraySync())).toEqual(Array.from(again.toArraySync()));
      }
      const flags = saved.projections.map((p) => p !== undefined);
      for (const x of [output, hidden, saved]) x.dispose();
      t.dispose();
      return flags;
    };
    const base = { batch: 2, steps: 3, input: 3, hidden: 4, h0: true, returnSequences: true, grads: 'both' } as const;
    expect(kept({ ...base, layers: 2 })).toEqual([true, true]);
    expect(kept({ ...base, layers: 1, ensemble: 2 })).toEqual([true]);
    // Members sharing one input: the forward's single product is laid out [B·T, E, 3H].
    expect(kept({ ...base, layers: 2, ensemble: 2, sharedInput: true })).toEqual([false, true]);
    expect(kept({ ...base, layers: 1 }, 'bf16')).toEqual([false]);
  });

  it('refuses bad input with typed errors, allocating nothing', () => {
    const c: TrainCase = { layers: 1, batch: 2, steps: 3, input: 2, hidden: 3, h0: true, returnSequences: true, grads: 'both' };
    const t = trainTensors(gpu, c, trainValues(c, freshSeed()));
    const { output, hidden, saved } = gruTraining(gpu.session, t.x, t.h0, t.weights);
    const wrong = { shape: gpu.ones([2, 3, 4]), dtype: gpu.ones([2, 3, 3], 'f16'), foreign: other.ones([2, 3, 3]), gone: gpu.ones([2, 3, 3]) };
    wrong.gone.dispose();
    const norm = { weight: gpu.ones([3]) };
    const otherRun = gruTraining(gpu.session, t.x, t.h0, t.weights);
    otherRun.saved.dispose();
    const s = gpu.session;
    const alloc = vi.spyOn(gpu.backend, 'alloc');
    try {
      const bad = (f: () => unknown, error: RegExp | (new (...args: never[]) => Error)) => expect(f).toThrow(error);
      bad(() => gruBackward(s, saved, {}), /gruBackward: gradients needs output, hidden or both/);
      bad(() => gruBackward(s, saved, { output: wrong.shape }), /gruBackward: gradients.output must be f32 \[2, 3, 3\] \(the forward's output\), got/);
      bad(() => gruBackward(s, saved, { output: wrong.dtype }), /gradients.output must be f32/);
      bad(() => gruBackward(s, saved, { hidden: output }), /gradients.hidden must be f32 \[2, 3\]/);
      bad(() => gruBackward(s, saved, { output: wrong.foreign }), InvalidArgumentError);
      bad(() => gruBackward(s, saved, { output: wrong.gone }), DisposedError);
      bad(() => gruBackward(s, saved, { outputs: output } as never), /gruBackward: .*outputs/);
      bad(() => gruBackward(s, otherRun.saved, { output }), /gruBackward: saved was disposed/);
      bad(() => gruBackward(s, {} as never, { output }), /gruBackward: saved must be the GruSaved of a gruTraining forward/);
      bad(() => gruBackward(other.session, saved, { output }), /gruBackward: saved comes from another GpuCompute/);
      bad(() => gruTraining(s, t.x, t.h0, { ...(t.weights as object), layerNorm: norm } as never), /gruTraining: the layer has a layer norm, which gruBackward does not differentiate/);
      bad(() => gruTraining(s, t.x, t.h0, t.weights, { returnSequence: false }), /gruTraining: .*returnSequence/);
      bad(() => gruTraining(s, wrong.shape, t.h0, t.weights), /gruTraining: x must be \[batch, time, input\] with input 2/);
      expect(alloc).not.toHaveBeenCalled();
    } finally {
      alloc.mockRestore();
    }
    saved.dispose();
    for (const x of [output, hidden, otherRun.output, otherRun.hidden, norm.weight, ...Object.values(wrong)]) x.dispose();
    t.dispose();
  });

  it('refuses a backend without gruBackwardRecurrence with UnsupportedOperationError, allocating nothing', async () => {
    const bare = await cpuCompute();
    try {
      const c: TrainCase = { layers: 1, batch: 1, steps: 2, input: 2, hidden: 2, h0: false, returnSequences: true, grads: 'output' };
      const t = trainTensors(bare, c, trainValues(c, freshSeed()));
      Object.defineProperty(bare.backend, 'gruBackwardRecurrence', { value: undefined, configurable: true });
      const alloc = vi.spyOn(bare.backend, 'alloc');
      expect(() => gruTraining(bare.session, t.x, t.h0, t.weights)).toThrow(UnsupportedOperationError);
      expect(alloc).not.toHaveBeenCalled();
      alloc.mockRestore();
      t.dispose();
    } finally {
      bare.dispose();
    }
  });
});
