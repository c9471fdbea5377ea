/**
 * One optimizer step as a backend runs it (`OptionalOps.optimizerStep`): many parameters updated
 * in place, each from its gradient and its f32 state, by the rule's formula in a fixed order of
 * f32 operations, so every backend gives the same numbers (the CPU's composed step and the CUDA
 * kernel agree bit for bit). Every scalar arrives rounded to f32; each operation below is one
 * IEEE f32 operation, rounded on its own (no fused multiply-add); p, g are read into f32 and p is
 * rounded to its dtype once at the end.
 *
 * SGD (PyTorch's `torch.optim.SGD`), with lr, wd, μ (momentum), 1 − τ (dampening):
 * ```
 * d = g
 * if wd ≠ 0:  d = d + (wd·p)
 * if μ ≠ 0:   b = first ? d : (μ·b) + ((1−τ)·d)          (b: the momentum buffer)
 *             d = nesterov ? d + (μ·b) : b
 * p = p − (lr·d)
 * ```
 * AdamW (PyTorch's `torch.optim.AdamW`), with decay = 1 − lr·wd, 1 − β1, β2, 1 − β2, ε, and per
 * tensor, for its step t, s = lr/(1 − β1^t) and c = √(1 − β2^t) (both computed in float64 on the
 * host, then rounded):
 * ```
 * p = p·decay
 * m = m + ((1−β1)·(g − m))
 * v = (β2·v) + (((1−β2)·g)·g)
 * if amsgrad: v̂ = max(v̂, v) (NaN propagates), else v̂ = v
 * p = p − (s·(m / ((√v̂ / c) + ε)))
 * ```
 */
import type { TensorView } from './view.js';

/** One parameter of an optimizer step. */
export interface OptimizerTensor {
  /** Updated in place (f32, f16 or bf16). */
  readonly param: TensorView;
  /** The parameter's gradient: its dtype and size. */
  readonly grad: TensorView;
  /**
   * f32 state of the parameter's size, updated in place. SGD: the momentum buffer (when momentum
   * is not 0). AdamW: the first and second moments, then the maximum second moment (amsgrad).
   */
  readonly state: readonly TensorView[];
  /** SGD: the momentum buffer starts from this step's direction (the parameter's first step). */
  readonly first: boolean;
  /** AdamW: lr/(1 − β1^t), in f32. */
  readonly stepSize: number;
  /** AdamW: √(1 − β2^t), in f32. */
  readonly biasCorrection2Sqrt: number;
}

/** An SGD step over tensors of one dtype. */
export interface SgdStepParams {
  readonly rule: 'sgd';
  readonly tensors: readonly OptimizerTensor[];
  readonly lr: number;
  readonly weightDecay: number;
  readonly momentum: number;
  /** 1 − dampening. */
  readonly dampeningComplement: number;
  readonly nesterov: boolean;
}

/** An AdamW step over tensors of one dtype. */
export interface AdamWStepParams {
  readonly rule: 'adamw';
  readonly tensors: readonly OptimizerTensor[];
  /** 1 − lr·weightDecay. */
  readonly decay: number;
  /** 1 − β1. */
  readonly beta1Complement: number;
  readonly beta2: number;
  /** 1 − β2. */
  readonly beta2Complement: number;
  readonly eps: number;
  readonly amsgrad: boolean;
}

/** What `OptionalOps.optimizerStep` takes. */
export type OptimizerStepParams = SgdStepParams | AdamWStepParams;
