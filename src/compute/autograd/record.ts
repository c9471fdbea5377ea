/**
 * How an op becomes differentiable: the API every differentiable front-end in `autograd/ops/`
 * uses, and the one a new op uses to join them. The pattern, for an op `foo(s, x, w)`:
 *
 * ```ts
 * export function foo(s: Session, x: Tensor, w: Tensor): Tensor {
 *   if (!recording(s, 'foo', x, w)) return rawFoo(s, x, w);     // the no-grad path: no closure, no allocation
 *   const out = rawFoo(s, x, w);                                 // the forward validates and computes
 *   return record('foo', [x, w], out, [x, w], ([g], [sx, sw], needs) => [
 *     needs[0] ? rawFooGradX(s, g!, sw!) : undefined,            // one gradient per recorded input
 *     needs[1] ? rawFooGradW(s, g!, sx!) : undefined,
 *   ]);
 * }
 * ```
 *
 * then call `foo` from the GpuCompute and Tensor methods instead of `rawFoo`. `record` holds the
 * saved tensors' storages (the caller may dispose the tensors at once: an extra output computed
 * only for the backward, such as attention's log-sum-exp, is saved and then disposed) and
 * attaches the node to the outputs; the backward runs later, with recording off, from the ops of
 * `ops/`. A backward reads tensors only from `saved`: the tensors the closure could capture may be
 * disposed by then (shapes, dtypes and options are safe to capture). An op with several outputs
 * passes them as an array (a GRU's sequence and final states); its backward gets one gradient per
 * output, undefined where none arrived (zero). Gradients must come back in each input's shape and
 * dtype (the engine checks): reduce a broadcast gradient with `sumToShape`.
 */
import { CaptureError } from '../../errors.js';
import { isFloatDType } from '../core/dtype.js';
import { gradRequested } from '../tensor/grad-mode.js';
import type { Session } from '../tensor/session.js';
import { Tensor } from '../tensor/tensor.js';
import { GradNode, OutputOrigin, type BackwardFn, type Edge } from './grad-node.js';
import { SavedTensor } from './saved-tensor.js';

export type { BackwardFn } from './grad-node.js';

function requires(t: unknown): boolean {
  return t instanceof Tensor && t.requiresGrad;
}

/**
 * Whether the op `op` must be recorded: grad mode is on and one of its inputs requires grad
 * (anything that is not a tensor, a number or bad input alike, does not). Up to five inputs,
 * without allocating; before any tensor was marked to require grad, without looking at them.
 * Refuses, inside a captured function, an op it would record.
 */
export function recording(s: Session, op: string, a: unknown, b?: unknown, c?: unknown, d?: unknown, e?: unknown): boolean {
  if (!gradRequested || !s.gradMode.enabled || !(requires(a) || requires(b) || requires(c) || requires(d) || requires(e))) return false;
  if (s.gradMode.capturing) throw recordingInCapture(op);
  return true;
}

/**
 * Whether an op may record at all (grad mode on, and some tensor was marked to require grad):
 * false lets an op skip building the input list {@link recordingAny} takes.
 */
export function mayRecord(s: Session): boolean {
  return gradRequested && s.gradMode.enabled;
}

/** {@link recording} for any number of inputs. */
export function recordingAny(s: Session, op: string, inputs: readonly unknown[]): boolean {
  if (!gradRequested || !s.gradMode.enabled || !inputs.some(requires)) return false;
  if (s.gradMode.capturing) throw recordingInCapture(op);
  return true;
}

function recordingInCapture(op: string): CaptureError {
  return new CaptureError(
    `capture: ${op} would be recorded for autograd (an input requires grad), which a captured function cannot hold; ` +
      `run the training step outside gpu.capture, or capture under gpu.noGrad (or on detach()ed inputs)`,
  );
}

/**
 * Records `outputs`, computed by `op` from `inputs`, so gradients flow back through them; returns
 * `outputs`. `inputs` are in the order the backward returns gradients: each tensor that requires
 * grad gets one, anything else (a number, a constant tensor, undefined) none. Float outputs become
 * non-leaves that require grad; non-float ones (indices) are left alone. `save` lists the tensors
 * the backward reads (undefined entries stay undefined). On a failure the outputs are disposed.
 */
export function record<O extends Tensor | readonly Tensor[]>(
  op: string,
  inputs: readonly unknown[],
  outputs: O,
  save: readonly (Tensor | undefined)[],
  backward: BackwardFn,
): O {
  const outs: readonly Tensor[] = outputs instanceof Tensor ? [outputs] : (outputs as readonly Tensor[]);
  const saved: (SavedTensor | undefined)[] = [];
  try {
    for (const t of save) saved.push(t === undefined ? undefined : new SavedTensor(t));
  } catch (err) {
    for (const t of saved) t?.release();
    for (const out of outs) out.dispose();
    throw err;
  }
  const edges = inputs.map((t): Edge | undefined => {
    if (!requires(t)) return undefined;
    const origin = (t as Tensor).origin as OutputOrigin | undefined;
    return origin === undefined ? { leaf: t as Tensor } : { node: origin.node, output: origin.output };
  });
  const node = new GradNode(op, edges, outs, saved, backward);
  node.retain();
  outs.forEach((out, i) => {
    if (isFloatDType(out.dtype)) out.origin = new OutputOrigin(node, i, out);
  });
  // The outputs hold the node now; when none can (they are all indices), it goes at once.
  node.release();
  return outputs;
}
