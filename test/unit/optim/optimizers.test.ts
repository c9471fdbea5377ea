/**
 * SGD and AdamW on the CPU backend (the composed step): bit for bit the update of
 * `core/optimizer-params.ts` over several steps (see `reference.ts`), with momentum, dampening,
 * Nesterov, weight decay, AMSGrad, 16-bit parameters and groups of their own options; close to the
 * same formulas in float64; parameters without a gradient left alone; the state saved to host
 * arrays and loaded back (round trip); learning-rate changes between steps; what they refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { AdamW } from '../../../src/compute/optim/adamw.js';
import type { OptimizerStateDict } from '../../../src/compute/optim/optimizer.js';
import { SGD } from '../../../src/compute/optim/sgd.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { CaptureError, DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { cpuCompute, freshSeed, randomValues, relError, roundTo } from '../compute/helpers.js';
import { adamwStep, sgdStep, type AdamWRef, type SgdRef } from './reference.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

const read = (t: Tensor) => Array.from(t.toArraySync());

/** A parameter of `n` values and a gradient source: gradients differ every step. */
function parameter(n: number, seed: number, dtype: 'f32' | 'f16' | 'bf16' = 'f32'): Tensor {
  return g.tensor(randomValues(n, seed), [n], dtype).requiresGrad_();
}

function setGrad(p: Tensor, values: readonly number[]): number[] {
  const stored = values.map(roundTo(p.dtype));
  p.grad = g.tensor(stored, [...p.shape], p.dtype);
  return stored;
}

describe('SGD', () => {
  const cases: [string, SgdRef][] = [
    ['plain', { lr: 0.1, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false }],
    ['momentum and dampening', { lr: 0.05, momentum: 0.9, dampening: 0.1, weightDecay: 0, nesterov: false }],
    ['Nesterov and weight decay', { lr: 0.01, momentum: 0.8, dampening: 0, weightDecay: 0.03, nesterov: true }],
  ];
  for (const [label, o] of cases) {
    for (const dtype of ['f32', 'bf16'] as const) {
      it(`${label}, ${dtype}: bit for bit the documented update over five steps`, () => {
        const seed = freshSeed();
        using p = parameter(37, seed, dtype);
        const w = read(p);
        let buffer: number[] | undefined;
        using opt = new SGD([p], o);
        for (let step = 0; step < 5; step++) {
          const grad = setGrad(p, randomValues(37, seed + 100 + step));
          opt.step();
          buffer = sgdStep(o, w, grad, buffer, dtype);
          expect(read(p), `step ${step + 1} (seed ${seed})`).toEqual(w);
        }
      });
    }
  }

  it('groups with options of their own; a parameter without a gradient is left alone', () => {
    const seed = freshSeed();
    using a = parameter(5, seed);
    using b = parameter(6, seed + 1);
    using c = parameter(4, seed + 2);
    using opt = new SGD([{ params: [a, b] }, { params: [c], lr: 0.5, momentum: 0.5 }], { lr: 0.1 });
    expect(opt.paramGroups.map((group) => group.options.lr)).toEqual([0.1, 0.5]);
    const wa = read(a);
    const wb = read(b);
    const wc = read(c);
    const ga = setGrad(a, randomValues(5, seed + 3));
    const gc = setGrad(c, randomValues(4, seed + 4));
    opt.step();
    sgdStep({ lr: 0.1, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false }, wa, ga, undefined);
    sgdStep({ lr: 0.5, momentum: 0.5, dampening: 0, weightDecay: 0, nesterov: false }, wc, gc, undefined);
    expect(read(a)).toEqual(wa);
    expect(read(b), 'no gradient: unchanged').toEqual(wb);
    expect(read(c)).toEqual(wc);
    const dict = opt.stateDict();
    expect(Object.keys(dict.state)).toEqual(['0', '2']);
    expect(dict.state[2]!.momentumBuffer).toBeInstanceOf(Float32Array);
  });
});

describe('AdamW', () => {
  const cases: [string, AdamWRef][] = [
    ['the defaults', { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 1e-2, amsgrad: false }],
    ['AMSGrad', { lr: 3e-2, betas: [0.8, 0.99], eps: 1e-6, weightDecay: 0.1, amsgrad: true }],
    ['no decay, β1 = 0', { lr: 1e-2, betas: [0, 0.9], eps: 1e-8, weightDecay: 0, amsgrad: false }],
  ];
  for (const [label, o] of cases) {
    for (const dtype of ['f32', 'f16'] as const) {
      it(`${label}, ${dtype}: bit for bit the documented update over six steps, close to float64`, () => {
        const seed = freshSeed();
        using p = parameter(41, seed, dtype);
        const w = read(p);
        const exact = w.slice();
        const [m, v, vmax] = [0, 1, 2].map(() => new Array<number>(41).fill(0)) as [number[], number[], number[]];
        const [m64, v64, vmax64] = [0, 1, 2].map(() => new Array<number>(41).fill(0)) as [number[], number[], number[]];
        using opt = new AdamW([p], o);
        for (let t = 1; t <= 6; t++) {
          const grad = setGrad(p, randomValues(41, seed + 100 + t));
          opt.step();
          adamwStep(o, t, w, grad, m, v, vmax, dtype);
          expect(read(p), `step ${t} (seed ${seed})`).toEqual(w);
          // The same formulas in float64 (PyTorch's), for the meaning.
          for (let i = 0; i < 41; i++) {
            exact[i] = exact[i]! * (1 - o.lr * o.weightDecay);
            m64[i] = o.betas[0] * m64[i]! + (1 - o.betas[0]) * grad[i]!;
            v64[i] = o.betas[1] * v64[i]! + (1 - o.betas[1]) * grad[i]! ** 2;
            vmax64[i] = Math.max(vmax64[i]!, v64[i]!);
            const denom = Math.sqrt(o.amsgrad ? vmax64[i]! : v64[i]!) / Math.sqrt(1 - o.betas[1] ** t) + o.eps;
            exact[i] = exact[i]! - (o.lr / (1 - o.betas[0] ** t)) * (m64[i]! / denom);
          }
        }
        if (dtype === 'f32') expect(relError(read(p), exact)).toBeLessThan(1e-6);
        const state = opt.stateDict().state[0]!;
        expect(Array.from(state.expAvg as Float32Array)).toEqual(m);
        expect(Array.from(state.expAvgSq as Float32Array)).toEqual(v);
        expect(state.step).toBe(6);
        if (o.amsgrad) expect(Array.from(state.maxExpAvgSq as Float32Array)).toEqual(vmax);
      });
    }
  }

  it('takes learning-rate changes between steps, and checks them', () => {
    const seed = freshSeed();
    using p = parameter(8, seed);
    const o: AdamWRef = { lr: 1e-2, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, amsgrad: false };
    using opt = new AdamW([p], o);
    const w = read(p);
    const [m, v, vmax] = [0, 1, 2].map(() => new Array<number>(8).fill(0)) as [number[], number[], number[]];
    for (let t = 1; t <= 3; t++) {
      opt.paramGroups[0]!.options.lr = o.lr / t;
      const grad = setGrad(p, randomValues(8, seed + t));
      opt.step();
      adamwStep({ ...o, lr: o.lr / t }, t, w, grad, m, v, vmax);
    }
    expect(read(p)).toEqual(w);
    opt.paramGroups[0]!.options.lr = -1;
    expect(() => opt.step()).toThrow(/^AdamW.step: paramGroups\[0\].options: lr must be ≥ 0, got -1/);
  });
});

describe('the state on the host', () => {
  /** Five steps: three, a save, two more; against three, a load into a new optimizer over copies, two more. */
  function roundTrip(make: (params: Tensor[]) => SGD | AdamW): void {
    const seed = freshSeed();
    const grads = [0, 1, 2, 3, 4].map((step) => [randomValues(9, seed + 10 * step), randomValues(3, seed + 10 * step + 1)]);
    using a = parameter(9, seed);
    using b = parameter(3, seed + 1);
    using opt = make([a, b]);
    const run = (params: Tensor[], optimizer: SGD | AdamW, steps: number[]) => {
      for (const step of steps) {
        params.forEach((p, i) => setGrad(p, grads[step]![i]!));
        optimizer.step();
      }
    };
    run([a, b], opt, [0, 1, 2]);
    const dict: OptimizerStateDict = opt.stateDict();
    for (const entry of Object.values(dict.state)) {
      for (const value of Object.values(entry)) expect(typeof value === 'number' || value instanceof Float32Array).toBe(true);
    }
    using a2 = g.tensor(a.toArraySync() as Float32Array).requiresGrad_();
    using b2 = g.tensor(b.toArraySync() as Float32Array).requiresGrad_();
    run([a, b], opt, [3, 4]);
    using loaded = make([a2, b2]);
    loaded.paramGroups[0]!.options.lr = 123;
    loaded.loadStateDict(structuredClone(dict));
    expect(loaded.paramGroups[0]!.options.lr, 'the options come back too').toBe(opt.paramGroups[0]!.options.lr);
    run([a2, b2], loaded, [3, 4]);
    expect(read(a2)).toEqual(read(a));
    expect(read(b2)).toEqual(read(b));
    expect(loaded.stateDict()).toEqual(opt.stateDict());
  }

  it('SGD with momentum: saved and loaded, the next steps are the same', () => roundTrip((p) => new SGD(p, { lr: 0.1, momentum: 0.9, nesterov: true })));
  it('AdamW with AMSGrad: saved and loaded, the next steps are the same', () => roundTrip((p) => new AdamW(p, { lr: 0.01, amsgrad: true })));

  it('refuses a dict that does not fit, and changes nothing then', () => {
    using p = parameter(4, 1);
    using opt = new AdamW([p]);
    setGrad(p, [1, 2, 3, 4]);
    opt.step();
    const good = opt.stateDict();
    const bad: [string, unknown, RegExp][] = [
      ['not an object', 5, /^AdamW.loadStateDict: dict must be an object \{ state, paramGroups \}, got 5/],
      ['an unknown key', { ...good, extra: 1 }, /^AdamW.loadStateDict: unknown key extra/],
      ['two groups', { ...good, paramGroups: [good.paramGroups[0], good.paramGroups[0]] }, /^AdamW.loadStateDict: paramGroups must be an array of 1 group\(s\)/],
      ['other parameters', { ...good, paramGroups: [{ ...good.paramGroups[0], params: [1] }] }, /^AdamW.loadStateDict: paramGroups\[0\].params must be \[0\]/],
      ['a bad option', { ...good, paramGroups: [{ ...good.paramGroups[0], eps: -1 }] }, /^AdamW.loadStateDict: paramGroups\[0\]: eps must be ≥ 0, got -1/],
      ['a parameter that does not exist', { ...good, state: { 3: good.state[0] } }, /^AdamW.loadStateDict: state\[3\] names no parameter \(there are 1\)/],
      ['a buffer of the wrong size', { ...good, state: { 0: { ...good.state[0], expAvg: new Float32Array(3) } } }, /^AdamW.loadStateDict: state\[0\].expAvg must be a Float32Array of 4 values/],
      ['a buffer of another rule', { ...good, state: { 0: { ...good.state[0], momentumBuffer: new Float32Array(4) } } }, /^AdamW.loadStateDict: state\[0\].momentumBuffer is not a buffer of this rule \(expAvg, expAvgSq\)/],
      ['a fractional step', { ...good, state: { 0: { ...good.state[0], step: 1.5 } } }, /^AdamW.loadStateDict: state\[0\].step must be an integer ≥ 0, got 1.5/],
    ];
    const before = g.memoryStats();
    for (const [label, dict, message] of bad) {
      expect(() => opt.loadStateDict(dict), label).toThrow(InvalidArgumentError);
      expect(() => opt.loadStateDict(dict), label).toThrow(message);
      expect(g.memoryStats().inUseBytes, `${label}: nothing allocated`).toBe(before.inUseBytes);
    }
    expect(opt.stateDict()).toEqual(good);
  });
});

describe('what the optimizers refuse', () => {
  it('params that are not leaves of float tensors of one GpuCompute, given once', async () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    using i = g.tensor(Int32Array.from([1]));
    using y = g.mul(x, 2);
    const other = await cpuCompute();
    using foreign = other.tensor([1]);
    const cases: [unknown, RegExp][] = [
      [[], /^SGD: params must be a non-empty array of tensors or of parameter groups/],
      [x, /^SGD: params must be a non-empty array/],
      [[i], /^SGD: params\[0\] must be a float tensor/],
      [[y], /^SGD: params\[0\] Tensor\(f32 \[2\]\) is the result of a recorded op, not a leaf/],
      [[x, x], /^SGD: params\[1\] Tensor\(f32 \[2\]\) is given twice/],
      [[x, foreign], /^SGD: params\[1\] Tensor\(f32 \[1\]\) belongs to another GpuCompute/],
      [[{ params: [x] }, { params: [] }], /^SGD: params\[1\].params must be a non-empty array of tensors, got \[\]/],
      [[{ params: [x], rate: 1 }], /^SGD: unknown option params\[0\].rate/],
      [[{ params: [x], lr: NaN }], /^SGD: params\[0\]: lr must be a finite number, got NaN/],
      [['w'], /^SGD: params must hold tensors of a GpuCompute/],
    ];
    for (const [params, message] of cases) expect(() => new SGD(params as never), String(message)).toThrow(message);
    other.dispose();
  });

  it('options out of their range', () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    expect(() => new SGD([x], { lr: -1 })).toThrow(/^SGD: lr must be ≥ 0, got -1/);
    expect(() => new SGD([x], { nesterov: true })).toThrow(/^SGD: nesterov needs momentum > 0 and dampening 0, got momentum 0 and dampening 0/);
    expect(() => new SGD([x], { lrr: 1 } as never)).toThrow(/^SGD: unknown option lrr; did you mean 'lr'\?/);
    expect(() => new AdamW([x], { betas: [0.9, 1] })).toThrow(/^AdamW: betas must be \[beta1, beta2\], each in \[0, 1\), got \[0.9, 1\]/);
    expect(() => new AdamW([x], { amsgrad: 1 } as never)).toThrow(/^AdamW: amsgrad must be a boolean, got 1/);
    expect(() => new AdamW([x], { weightDecay: -0.1 })).toThrow(/^AdamW: weightDecay must be ≥ 0, got -0.1/);
  });

  it('a step inside a captured function, and any call once disposed; a disposed parameter at a step', () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    const opt = new SGD([x], { lr: 0.1 });
    using input = g.tensor([1]);
    using captured = g.capture((a: Tensor) => {
      opt.step();
      return g.copy(a);
    }, [input]);
    expect(() => captured(input)).toThrow(CaptureError);
    expect(() => captured(input)).toThrow(/^capture: SGD.step cannot be recorded in a graph/);
    opt.dispose();
    expect(() => opt.step()).toThrow(DisposedError);
    expect(() => opt.stateDict()).toThrow(/^SGD.stateDict: the SGD optimizer has been disposed/);
    const gone = g.tensor([1]).requiresGrad_();
    using opt2 = new SGD([gone]);
    gone.dispose();
    expect(() => opt2.step()).toThrow(/^SGD.step: paramGroups\[0\].params\[0\] Tensor\(f32 \[1\]\) has been disposed/);
  });
});

describe('with autograd', () => {
  it('a step between a forward and its backward makes the backward refuse the stale saved parameter', () => {
    using w = g.tensor([1, 2]).requiresGrad_();
    using opt = new SGD([w], { lr: 0.1 });
    using first = g.scope(() => g.sum(g.mul(w, w)));
    first.backward();
    using second = g.scope(() => g.sum(g.mul(w, w)));
    opt.step();
    expect(() => second.backward()).toThrow(/that mul saved for its gradient was modified in place \(by an optimizer step\) after the forward/);
  });

  it('state memory comes and goes with the optimizer; zeroGrad disposes the gradients', () => {
    using w = g.tensor(new Float32Array(100)).requiresGrad_();
    const base = g.memoryStats().inUseBytes;
    const opt = new AdamW([w]);
    setGrad(w, new Array<number>(100).fill(1));
    opt.step();
    expect(g.memoryStats().inUseBytes - base, 'the gradient and two moments').toBe(3 * 400);
    opt.zeroGrad();
    expect(w.grad).toBeUndefined();
    opt.dispose();
    expect(g.memoryStats().inUseBytes).toBe(base);
  });

  it('fits a linear regression: the loss falls by 100x in 200 steps', () => {
    using x = g.randn([64, 3], { seed: 1 });
    using trueW = g.tensor([1.5, -2, 0.5], [1, 3]);
    using y = g.linear(x, trueW, g.scope(() => g.full([1], 0.3)));
    using w = g.zeros([1, 3]).requiresGrad_();
    using b = g.zeros([1]).requiresGrad_();
    using opt = new AdamW([w, b], { lr: 0.1, weightDecay: 0 });
    const losses: number[] = [];
    for (let step = 0; step < 200; step++) {
      g.scope(() => {
        const loss = g.mseLoss(g.linear(x, w, b), y);
        losses.push(loss.toArraySync()[0]!);
        loss.backward();
        opt.step();
        opt.zeroGrad();
      });
    }
    expect(losses.at(-1)! * 100).toBeLessThan(losses[0]!);
  });
});
