/**
 * Adam with decoupled weight decay, optionally AMSGrad: PyTorch's `torch.optim.AdamW`, its options
 * in camelCase. The update and its order of f32 operations are in `core/optimizer-params.ts`; the
 * bias corrections of each parameter's step are computed in float64 on the host.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { AdamWStepParams } from '../core/optimizer-params.js';
import { checkFlag, checkOptions, describeValue, optionKeys, validateFinite } from '../core/validation.js';
import { Optimizer, type OptimizerParams, type StepEntry } from './optimizer.js';

/** Options of {@link AdamW}, for the optimizer or one parameter group. */
export interface AdamWOptions {
  /** Learning rate, ≥ 0 (default 1e-3). */
  lr?: number;
  /** [β1, β2], each in [0, 1): the moments' decay rates (default [0.9, 0.999]). */
  betas?: readonly [number, number];
  /** Added to the denominator, ≥ 0 (default 1e-8). */
  eps?: number;
  /** Decoupled weight decay, ≥ 0: the parameter is scaled by 1 − lr·weightDecay each step (default 1e-2). */
  weightDecay?: number;
  /** Divide by the running maximum of the second moment (AMSGrad; default false). */
  amsgrad?: boolean;
}

/** The keys {@link AdamWOptions} takes. */
export const ADAMW_OPTIONS = optionKeys<AdamWOptions>({ lr: true, betas: true, eps: true, weightDecay: true, amsgrad: true });

const DEFAULTS: Required<AdamWOptions> = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 1e-2, amsgrad: false };

function nonNegative(op: string, name: string, value: unknown): number {
  const v = validateFinite(op, name, value);
  if (v < 0) throw new InvalidArgumentError(`${op}: ${name} must be ≥ 0, got ${v}`);
  return v;
}

/** AdamW's options checked in the name of `op`, the rest from `base`. */
export function resolveAdamWOptions(op: string, options: unknown, base: Required<AdamWOptions> = DEFAULTS): Required<AdamWOptions> {
  const o = checkOptions<AdamWOptions>(op, options, ADAMW_OPTIONS);
  const betas = o.betas ?? base.betas;
  if (!Array.isArray(betas) || betas.length !== 2 || !betas.every((b) => typeof b === 'number' && b >= 0 && b < 1)) {
    throw new InvalidArgumentError(`${op}: betas must be [beta1, beta2], each in [0, 1), got ${describeValue(betas)}`);
  }
  return {
    lr: nonNegative(op, 'lr', o.lr ?? base.lr),
    betas: [betas[0], betas[1]],
    eps: nonNegative(op, 'eps', o.eps ?? base.eps),
    weightDecay: nonNegative(op, 'weightDecay', o.weightDecay ?? base.weightDecay),
    amsgrad: checkFlag(op, 'amsgrad', o.amsgrad, base.amsgrad),
  };
}

/**
 * AdamW over `params` (tensors, or groups `{ params, ...options }` whose options override these).
 *
 * ```ts
 * using opt = new AdamW([w, b], { lr: 3e-4, weightDecay: 0.01 });
 * loss.backward();
 * opt.step();
 * opt.zeroGrad();
 * ```
 */
export class AdamW extends Optimizer<Required<AdamWOptions>> {
  constructor(params: OptimizerParams<AdamWOptions>, options: AdamWOptions = {}) {
    super('AdamW', params, options, ADAMW_OPTIONS, resolveAdamWOptions);
  }

  protected stateNames(options: Required<AdamWOptions>): readonly string[] {
    return options.amsgrad ? ['expAvg', 'expAvgSq', 'maxExpAvgSq'] : ['expAvg', 'expAvgSq'];
  }

  protected optionsDict(options: Required<AdamWOptions>): Record<string, number | boolean | number[]> {
    return { ...options, betas: [...options.betas] };
  }

  protected stepParams(o: Required<AdamWOptions>, entries: readonly StepEntry[]): AdamWStepParams {
    const [beta1, beta2] = o.betas;
    return {
      rule: 'adamw',
      tensors: entries.map((e) => ({
        param: e.param.view,
        grad: e.grad.view,
        state: e.state.map((t) => t.view),
        first: e.fresh,
        stepSize: Math.fround(o.lr / (1 - beta1 ** e.t)),
        biasCorrection2Sqrt: Math.fround(Math.sqrt(1 - beta2 ** e.t)),
      })),
      decay: Math.fround(1 - o.lr * o.weightDecay),
      beta1Complement: Math.fround(1 - beta1),
      beta2: Math.fround(beta2),
      beta2Complement: Math.fround(1 - beta2),
      eps: Math.fround(o.eps),
      amsgrad: o.amsgrad,
    };
  }
}
