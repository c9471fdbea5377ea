/**
 * The optimizer step on every backend (natively or composed): SGD with momentum, Nesterov and
 * weight decay, and AdamW with AMSGrad, over three steps on f32 and bf16 parameters in two groups,
 * against the documented order of f32 operations written out on the host (`test/unit/optim/
 * reference.ts`) and against the CPU backend. The CPU and the fused CUDA/HIP kernel agree bit for
 * bit (the GPU tests hold CUDA to that); here every backend is held to f32 elementwise accuracy
 * (WGSL's division and square root are within a few ulp, not correctly rounded).
 */
import { describe, it } from 'vitest';
import { AdamW } from '../../../src/compute/optim/adamw.js';
import { SGD } from '../../../src/compute/optim/sgd.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { adamwStep, sgdStep, type AdamWRef, type SgdRef } from '../../unit/optim/reference.js';
import { expectRun, TOLERANCE } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host, type Values } from '../host.js';
import { Case } from '../seeds.js';

const STEPS = 3;
const SGD_OPTIONS: SgdRef = { lr: 0.05, momentum: 0.9, dampening: 0, weightDecay: 0.01, nesterov: true };
const ADAMW_OPTIONS: AdamWRef = { lr: 0.01, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1, amsgrad: true };

export function describeOptimizers(ctx: ConformanceContext): void {
  describe('optimizers', () => {
    for (const rule of ['SGD', 'AdamW'] as const) {
      it(`${rule}: three steps on f32 and bf16 parameters in two groups`, () => {
        const c = new Case(`optimizer ${rule}`);
        const inputs: Values[] = [
          host(c.normal(70), [7, 10], 'f32'),
          host(c.normal(70), [7, 10], 'f32'),
          host(c.normal(33), [33], 'bf16'),
          host(c.normal(33), [33], 'bf16'),
        ];
        const runs = ctx.run(inputs, (g, [p32, g32, p16, g16]) => {
          const params = [p32!.requiresGrad_(), p16!.requiresGrad_()];
          const grads = [g32!, g16!];
          using opt =
            rule === 'SGD'
              ? new SGD([{ params: [params[0]!] }, { params: [params[1]!], lr: 0.1 }], SGD_OPTIONS)
              : new AdamW([{ params: [params[0]!] }, { params: [params[1]!], lr: 0.02 }], ADAMW_OPTIONS);
          for (let step = 1; step <= STEPS; step++) {
            params.forEach((p, i) => (p.grad = g.mul(grads[i]!, step)));
            opt.step();
          }
          const state = opt.stateDict().state[0]!;
          const buffers = Object.entries(state).filter(([name]) => name !== 'step').map(([, v]) => g.tensor(v as Float32Array, [7, 10]));
          return [g.copy(params[0]! as Tensor), g.copy(params[1]! as Tensor), ...buffers];
        });
        const want = reference(rule, inputs);
        expectRun(c, runs, want, [TOLERANCE.f32, TOLERANCE.bf16, ...want.slice(2).map(() => TOLERANCE.f32)]);
      });
    }
  });
}

/** The parameters after the steps and the first group's state, on the host. */
function reference(rule: 'SGD' | 'AdamW', [p32, g32, p16, g16]: Values[]): Values[] {
  const w = [[...p32!.values], [...p16!.values]];
  const grads = [g32!.values, g16!.values];
  const dtypes = ['f32', 'bf16'] as const;
  const lrs = rule === 'SGD' ? [SGD_OPTIONS.lr, 0.1] : [ADAMW_OPTIONS.lr, 0.02];
  const buffers: (number[] | undefined)[] = [undefined, undefined];
  const moments = w.map((v) => [0, 1, 2].map(() => new Array<number>(v.length).fill(0)) as [number[], number[], number[]]);
  for (let step = 1; step <= STEPS; step++) {
    w.forEach((values, i) => {
      const grad = grads[i]!.map((v) => host([v * step], [1], dtypes[i]!).values[0]!);
      if (rule === 'SGD') buffers[i] = sgdStep({ ...SGD_OPTIONS, lr: lrs[i]! }, values, grad, buffers[i], dtypes[i]);
      else adamwStep({ ...ADAMW_OPTIONS, lr: lrs[i]! }, step, values, grad, ...moments[i]!, dtypes[i]);
    });
  }
  const state = rule === 'SGD' ? [buffers[0]!] : moments[0]!;
  return [
    { ...p32!, values: w[0]! },
    { ...p16!, values: w[1]! },
    ...state.map((values) => ({ shape: [7, 10], dtype: 'f32' as const, values })),
  ];
}
