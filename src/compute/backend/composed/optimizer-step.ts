/**
 * An optimizer step composed from the core ops, for a backend without its own: per tensor, the
 * formula of `core/optimizer-params.ts` as one core op per f32 operation, in its order, on f32
 * temporaries (16-bit parameters and gradients are cast up first, and the parameter is rounded
 * back once), so it gives the bits the fused kernels give. The new state and parameter are copied
 * over the old at the end of each tensor's update.
 */
import { planBroadcast } from '../../core/broadcast.js';
import type { AdamWStepParams, OptimizerStepParams, OptimizerTensor, SgdStepParams } from '../../core/optimizer-params.js';
import type { BinaryOp } from '../../core/elementwise-ops.js';
import type { TensorView } from '../../core/view.js';
import type { BackendCore, OptionalOps } from '../backend.js';
import { Temporaries } from './temporaries.js';

type Ops = BackendCore & Pick<OptionalOps, 'binaryScalar'>;

export function composedOptimizerStep(backend: Ops, params: OptimizerStepParams): void {
  for (const t of params.tensors) {
    using temps = new Temporaries(backend);
    const step = new TensorStep(backend, temps, t.param.shape);
    if (params.rule === 'sgd') sgd(step, t, params);
    else adamw(step, t, params);
  }
}

/** The f32 operations of one tensor's update, each into a new temporary. */
class TensorStep {
  readonly #backend: Ops;
  readonly #temps: Temporaries;
  readonly #shape: readonly number[];

  constructor(backend: Ops, temps: Temporaries, shape: readonly number[]) {
    this.#backend = backend;
    this.#temps = temps;
    this.#shape = shape;
  }

  f32(x: TensorView): TensorView {
    return this.#temps.f32(x);
  }

  /** a op b, both tensors of the step's shape. */
  op(op: BinaryOp, a: TensorView, b: TensorView): TensorView {
    const out = this.#temps.view('f32', this.#shape);
    this.#backend.binary(op, a, b, out, planBroadcast('optimizerStep', this.#shape, this.#shape));
    return out;
  }

  /** x op s for an f32 number s. */
  scalar(op: BinaryOp, x: TensorView, s: number): TensorView {
    const out = this.#temps.view('f32', this.#shape);
    this.#backend.binaryScalar(op, x, s, false, out);
    return out;
  }

  sqrt(x: TensorView): TensorView {
    const out = this.#temps.view('f32', this.#shape);
    this.#backend.unary('sqrt', x, out);
    return out;
  }

  /** Writes `value` (f32) over `target`, rounding to its dtype. */
  store(target: TensorView, value: TensorView): void {
    if (target.dtype === 'f32') this.#backend.copy(target, value);
    else this.#backend.cast(value, target);
  }
}

function sgd(step: TensorStep, t: OptimizerTensor, p: SgdStepParams): void {
  const w = step.f32(t.param);
  let d = step.f32(t.grad);
  if (p.weightDecay !== 0) d = step.op('add', d, step.scalar('mul', w, p.weightDecay));
  if (p.momentum !== 0) {
    const buffer = t.state[0]!;
    const b = t.first ? d : step.op('add', step.scalar('mul', buffer, p.momentum), step.scalar('mul', d, p.dampeningComplement));
    step.store(buffer, b);
    d = p.nesterov ? step.op('add', d, step.scalar('mul', b, p.momentum)) : b;
  }
  step.store(t.param, step.op('sub', w, step.scalar('mul', d, p.lr)));
}

function adamw(step: TensorStep, t: OptimizerTensor, p: AdamWStepParams): void {
  const [m0, v0, vmax0] = t.state as [TensorView, TensorView, TensorView | undefined];
  const g = step.f32(t.grad);
  const w = step.scalar('mul', step.f32(t.param), p.decay);
  const m = step.op('add', m0, step.scalar('mul', step.op('sub', g, m0), p.beta1Complement));
  const v = step.op('add', step.scalar('mul', v0, p.beta2), step.op('mul', step.scalar('mul', g, p.beta2Complement), g));
  const vhat = p.amsgrad ? step.op('max', vmax0!, v) : v;
  const denom = step.scalar('add', step.scalar('div', step.sqrt(vhat), t.biasCorrection2Sqrt), p.eps);
  const update = step.scalar('mul', step.op('div', m, denom), t.stepSize);
  step.store(m0, m);
  step.store(v0, v);
  if (p.amsgrad) step.store(vmax0!, vhat);
  step.store(t.param, step.op('sub', w, update));
}
