/**
 * Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay:
 * PyTorch's `torch.optim.SGD`, its options in camelCase. The update and its order of f32
 * operations are in `core/optimizer-params.ts`.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { SgdStepParams } from '../core/optimizer-params.js';
import { checkFlag, checkOptions, optionKeys, validateFinite } from '../core/validation.js';
import { Optimizer, type OptimizerParams, type StepEntry } from './optimizer.js';

/** Options of {@link SGD}, for the optimizer or one parameter group. */
export interface SgdOptions {
  /** Learning rate, ≥ 0 (default 1e-3). */
  lr?: number;
  /** Momentum factor μ, ≥ 0 (default 0: no momentum buffer). */
  momentum?: number;
  /** Dampening τ of the momentum (default 0). */
  dampening?: number;
  /** L2 penalty added to the gradient, ≥ 0 (default 0). */
  weightDecay?: number;
  /** Nesterov momentum (default false; needs momentum > 0 and dampening 0). */
  nesterov?: boolean;
}

/** The keys {@link SgdOptions} takes. */
export const SGD_OPTIONS = optionKeys<SgdOptions>({ lr: true, momentum: true, dampening: true, weightDecay: true, nesterov: true });

const DEFAULTS: Required<SgdOptions> = { lr: 1e-3, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false };

function nonNegative(op: string, name: string, value: unknown): number {
  const v = validateFinite(op, name, value);
  if (v < 0) throw new InvalidArgumentError(`${op}: ${name} must be ≥ 0, got ${v}`);
  return v;
}

/** SGD's options checked in the name of `op`, the rest from `base`. */
export function resolveSgdOptions(op: string, options: unknown, base: Required<SgdOptions> = DEFAULTS): Required<SgdOptions> {
  const o = checkOptions<SgdOptions>(op, options, SGD_OPTIONS);
  const resolved: Required<SgdOptions> = {
    lr: nonNegative(op, 'lr', o.lr ?? base.lr),
    momentum: nonNegative(op, 'momentum', o.momentum ?? base.momentum),
    dampening: validateFinite(op, 'dampening', o.dampening ?? base.dampening),
    weightDecay: nonNegative(op, 'weightDecay', o.weightDecay ?? base.weightDecay),
    nesterov: checkFlag(op, 'nesterov', o.nesterov, base.nesterov),
  };
  if (resolved.nesterov && (resolved.momentum <= 0 || resolved.dampening !== 0)) {
    throw new InvalidArgumentError(`${op}: nesterov needs momentum > 0 and dampening 0, got momentum ${resolved.momentum} and dampening ${resolved.dampening}`);
  }
  return resolved;
}

/**
 * SGD over `params` (tensors, or groups `{ params, ...options }` whose options override these).
 *
 * ```ts
 * using opt = new SGD([w, b], { lr: 0.1, momentum: 0.9 });
 * loss.backward();
 * opt.step();
 * opt.zeroGrad();
 * ```
 */
export class SGD extends Optimizer<Required<SgdOptions>> {
  constructor(params: OptimizerParams<SgdOptions>, options: SgdOptions = {}) {
    super('SGD', params, options, SGD_OPTIONS, resolveSgdOptions);
  }

  protected stateNames(options: Required<SgdOptions>): readonly string[] {
    return options.momentum === 0 ? [] : ['momentumBuffer'];
  }

  protected optionsDict(options: Required<SgdOptions>): Record<string, number | boolean> {
    return { ...options };
  }

  protected stepParams(o: Required<SgdOptions>, entries: readonly StepEntry[]): SgdStepParams {
    return {
      rule: 'sgd',
      tensors: entries.map((e) => ({ param: e.param.view, grad: e.grad.view, state: e.state.map((t) => t.view), first: e.fresh, stepSize: 0, biasCorrection2Sqrt: 0 })),
      lr: Math.fround(o.lr),
      weightDecay: Math.fround(o.weightDecay),
      momentum: Math.fround(o.momentum),
      dampeningComplement: Math.fround(1 - o.dampening),
      nesterov: o.nesterov,
    };
  }
}
