/**
 * Training a GRU: {@link gruTraining}, the forward of `gpu.gru` that also keeps what the backward
 * needs, and {@link gruBackward}, backpropagation through time over it: the gradients of x, h0 and
 * every layer's W_ih, W_hh, b_ih and b_hh, for stacks and ensembles, from the gradient of the
 * output sequence and/or of the final states.
 *
 * What is kept: every layer's state sequence h_1 … h_T (the forward writes it anyway), and views
 * of x, h0 and the weights (views hold their storage, so the caller may dispose its own tensors).
 * The gates are not kept but recomputed: per layer, the input projections x·W_ihᵀ and the
 * recurrent ones h_t·W_hhᵀ of all steps are two large products, which cost less than storing
 * four gate tensors per layer in memory and are not sequential.
 *
 * Per layer, from the last: those two products; the backend's {@link Backend.gruBackwardRecurrence},
 * the only sequential part (per step one product dGh·W_hh and the gate gradients, fused where
 * the backend has a kernel for it); then the weight gradients as products over all steps
 * (dW_ih = dGxᵀ·x, dW_hh = dGhᵀ·h), the bias gradients as sums, and dx = dGx·W_ih, which is the
 * gradient of the layer below's output. Dropout between layers is undone with the same seeded
 * mask (`dropout` of the gradient with the forward's p and seed). Everything runs in f32 (16-bit
 * tensors are widened once and the gradients rounded once to their dtype).
 */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import type { GruBackwardParams } from '../core/gru-backward-params.js';
import { formatShape, sameShape } from '../core/shape.js';
import { checkOptions, describeValue, optionKeys } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { binary, cast } from './elementwise.js';
import { prepareGru, runLayer, sliceLayer, stackFinals, type GruWeights } from './gru.js';
import { matmul } from './matmul.js';
import { dropout as dropoutOp } from './random.js';
import { reduce } from './reduce.js';

/** One layer's saved weights (views of the caller's). */
interface SavedLayer {
  wIh: Tensor;
  wHh: Tensor;
  bIh: Tensor | undefined;
  bHh: Tensor | undefined;
  input: number;
}

/**
 * What {@link gruBackward} needs of a {@link gruTraining} forward. It owns its tensors (the
 * state sequences, and views of x, h0 and the weights): dispose it once the backward has run.
 */
export class GruSaved {
  /** @internal */ readonly session: Session;
  /** @internal */ readonly layers: readonly SavedLayer[];
  /** @internal */ readonly x: Tensor;
  /** @internal Each layer's state before step 0, dense [E·B·H] (zeros when h0 was omitted). */
  readonly initial: readonly Tensor[];
  /** @internal Each layer's states h_1 … h_T, [E?, B, T, H], before dropout. */
  readonly sequences: readonly Tensor[];
  /**
   * @internal Each layer's input projection x·W_ihᵀ from the forward, in the backward's layout
   * ([E, B·T, 3H] f32), so the backward need not compute it again; undefined where the forward's
   * differs (16-bit storage, or several members sharing one input) and the backward recomputes it.
   */
  readonly projections: readonly (Tensor | undefined)[];
  /** @internal */ readonly ensemble: number | undefined;
  /** @internal */ readonly hidden: number;
  /** @internal */ readonly dtype: DType;
  /** @internal */ readonly batch: number;
  /** @internal */ readonly steps: number;
  /** @internal The shape of h0 and of the returned hidden state. */
  readonly stateShape: readonly number[];
  /** @internal The shape of the returned output. */
  readonly outputShape: readonly number[];
  /** @internal Whether h0 was given (its gradient is returned then). */
  readonly hasH0: boolean;
  /** @internal */ readonly returnSequences: boolean;
  /** @internal */ readonly dropout: { p: number; seed: number } | undefined;
  /** @internal */ readonly precision: 'highest' | 'tf32';
  #disposed = false;

  /** @internal Built by {@link gruTraining}; takes ownership of every tensor in `parts`. */
  constructor(parts: Omit<GruSaved, 'dispose' | 'disposed' | 'tensors' | 'withTensors' | typeof Symbol.dispose>) {
    this.session = parts.session;
    this.layers = parts.layers;
    this.x = parts.x;
    this.initial = parts.initial;
    this.sequences = parts.sequences;
    this.projections = parts.projections;
    this.ensemble = parts.ensemble;
    this.hidden = parts.hidden;
    this.dtype = parts.dtype;
    this.batch = parts.batch;
    this.steps = parts.steps;
    this.stateShape = parts.stateShape;
    this.outputShape = parts.outputShape;
    this.hasH0 = parts.hasH0;
    this.returnSequences = parts.returnSequences;
    this.dropout = parts.dropout;
    this.precision = parts.precision;
  }

  /** True after {@link GruSaved.dispose}. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** Releases the saved tensors. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const t of ownedBy(this)) t.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** @internal The tensors it owns, in the order {@link GruSaved.withTensors} takes them. */
  tensors(): Tensor[] {
    return ownedBy(this);
  }

  /**
   * @internal The same record over `tensors` (as {@link GruSaved.tensors} lists them, each over the
   * same storage; this takes ownership): how autograd, which keeps saved tensors by storage,
   * hands a backward its record back.
   */
  withTensors(tensors: readonly Tensor[]): GruSaved {
    let at = 0;
    const next = () => tensors[at++]!;
    const x = next();
    const layers = this.layers.map((l) => ({ wIh: next(), wHh: next(), bIh: l.bIh ? next() : undefined, bHh: l.bHh ? next() : undefined, input: l.input }));
    const initial = this.initial.map(next);
    const sequences = this.sequences.map(next);
    const projections = this.projections.map((p) => (p ? next() : undefined));
    return new GruSaved({ ...this, session: this.session, layers, x, initial, sequences, projections });
  }
}

function ownedBy(saved: Pick<GruSaved, 'layers' | 'x' | 'initial' | 'sequences' | 'projections'>): Tensor[] {
  const weights = saved.layers.flatMap((l) => [l.wIh, l.wHh, l.bIh, l.bHh].filter((t): t is Tensor => t !== undefined));
  return [saved.x, ...weights, ...saved.initial, ...saved.sequences, ...saved.projections.filter((t): t is Tensor => t !== undefined)];
}

/** Result of {@link gruTraining}: `gpu.gru`'s, and what the backward needs. */
export interface GruTrainingResult<D extends DType = DType> {
  output: Tensor<D>;
  hidden: Tensor<D>;
  saved: GruSaved;
}

/** The gradients a GRU layer's parameters get, shaped like them (a bias's only where the layer has it). */
export interface GruLayerGradients {
  wIh: Tensor;
  wHh: Tensor;
  bIh?: Tensor;
  bHh?: Tensor;
}

/** Result of {@link gruBackward}, in the stack's dtype. */
export interface GruGradients {
  /** Shaped like x. */
  x: Tensor;
  /** Shaped like h0; undefined when the forward had no h0 (zeros, not an input). */
  h0: Tensor | undefined;
  /** Layer 0 first. */
  layers: GruLayerGradients[];
}

/** Gradients arriving at a {@link gruTraining} forward's results (at least one). */
export interface GruOutputGradients {
  /** Shaped like `output`. */
  output?: Tensor | null;
  /** Shaped like `hidden`. */
  hidden?: Tensor | null;
}

/** The keys {@link GruOutputGradients} takes. */
export const GRU_OUTPUT_GRADIENT_KEYS = optionKeys<GruOutputGradients>({ output: true, hidden: true });

/**
 * `gpu.gru`'s forward (same arguments, options and results; no layer norm) that also returns what
 * {@link gruBackward} needs, as {@link GruSaved}.
 */
export function gruTraining(s: Session, x: Tensor, h0: Tensor | null | undefined, weights: GruWeights, opts?: unknown): GruTrainingResult {
  const op = 'gruTraining';
  const { stack, returnSequences, precision, path, dropout, B, T, init } = prepareGru(s, op, x, h0, weights, opts, (checked) => {
    const normed = checked.layers.findIndex((l) => l.layerNorm !== undefined);
    if (normed >= 0) {
      throw new InvalidArgumentError(`${op}: ${checked.layers.length > 1 ? `layer ${normed} has` : 'the layer has'} a layer norm, which gruBackward does not differentiate; train without layerNorm`);
    }
    s.assertSupports(op, 'gruBackwardRecurrence');
  });
  const E = stack.ensemble;
  const L = stack.layers.length;
  const sequences: Tensor[] = [];
  const projections: (Tensor | undefined)[] = [];
  const finals: Tensor[] = [];
  const kept: Tensor[] = [];
  let input = x;
  let output: Tensor | undefined;
  let hidden: Tensor | undefined;
  try {
    for (let l = 0; l < L; l++) {
      // Every layer keeps its whole sequence, the last one too: the backward reads it.
      const { seq, hN, projection } = runLayer(s, stack, l, input, init.layers[l]!, B, T, true, { precision, path, keepProjection: true });
      sequences.push(seq);
      projections.push(projection);
      finals.push(hN);
      const last = l === L - 1;
      const emitted = last && !returnSequences ? hN : seq;
      const next = dropout ? dropoutOp(s, emitted, dropout.p, dropout.seed + l) : emitted.reshape(emitted.shape);
      if (input !== x) input.dispose();
      input = next;
    }
    hidden = stackFinals(s, finals, stack, init.shape);
    output = input;
    input = x;
    for (const l of stack.layers) kept.push(...[l.wIh, l.wHh, l.bIh, l.bHh].filter((t): t is Tensor => t !== undefined).map((t) => t.reshape(t.shape)));
    const xView = x.reshape(x.shape);
    let at = 0;
    const saved = new GruSaved({
      session: s,
      layers: stack.layers.map((l) => ({
        wIh: kept[at++]!,
        wHh: kept[at++]!,
        bIh: l.bIh ? kept[at++] : undefined,
        bHh: l.bHh ? kept[at++] : undefined,
        input: l.input,
      })),
      x: xView,
      initial: init.layers,
      sequences,
      projections,
      ensemble: E,
      hidden: stack.hidden,
      dtype: stack.dtype,
      batch: B,
      steps: T,
      stateShape: init.shape,
      outputShape: output.shape,
      hasH0: h0 !== undefined && h0 !== null,
      returnSequences,
      dropout,
      precision,
    });
    return { output, hidden, saved };
  } catch (err) {
    for (const t of [...sequences, ...projections, ...init.layers, ...kept]) t?.dispose();
    output?.dispose();
    hidden?.dispose();
    throw err;
  } finally {
    if (input !== x) input.dispose();
    for (const f of finals) f.dispose();
  }
}

/** Tensors made during a backward that go when it ends. */
class Scratch {
  readonly #tensors: Tensor[] = [];

  add<T extends Tensor>(t: T): T {
    this.#tensors.push(t);
    return t;
  }

  [Symbol.dispose](): void {
    for (const t of this.#tensors) t.dispose();
  }
}

/**
 * Backpropagation through time over a {@link gruTraining} forward: the gradients of x, h0 (when it
 * was given) and every layer's parameters, from the gradient of the output and/or of the final
 * states. The saved record stays valid (it may serve another backward) until disposed.
 */
export function gruBackward(s: Session, saved: GruSaved, gradients: GruOutputGradients): GruGradients {
  const op = 'gruBackward';
  s.assertLive();
  if (!(saved instanceof GruSaved)) throw new InvalidArgumentError(`${op}: saved must be the GruSaved of a gruTraining forward, got ${describeValue(saved)}`);
  if (saved.session !== s) throw new InvalidArgumentError(`${op}: saved comes from another GpuCompute`);
  if (saved.disposed) throw new InvalidArgumentError(`${op}: saved was disposed; run gruTraining again (a GruSaved serves until it is disposed)`);
  const g = checkOptions<GruOutputGradients>(op, gradients, GRU_OUTPUT_GRADIENT_KEYS, 'gradients');
  const dOutput = checkGradient(s, op, 'output', g.output, saved.outputShape, saved.dtype);
  const dHidden = checkGradient(s, op, 'hidden', g.hidden, saved.stateShape, saved.dtype);
  if (!dOutput && !dHidden) throw new InvalidArgumentError(`${op}: gradients needs output, hidden or both`);
  s.assertSupports(op, 'matmul', 'gruBackwardRecurrence');

  const { ensemble, hidden: H, batch: B, steps: T, precision, dropout } = saved;
  const E = ensemble ?? 1;
  const L = saved.layers.length;
  const G = 3 * H;
  const made: Tensor[] = [];
  const result = <T extends Tensor>(t: T): T => {
    made.push(t);
    return t;
  };
  try {
    // Tensors that outlive a layer (what passes to the layer below, dh0); each layer's own go with it.
    using kept = new Scratch();
    const f32 = (into: Scratch, t: Tensor, shape: readonly number[]) => into.add((t.dtype === 'f32' ? t : into.add(cast(s, t, 'f32'))).reshape(shape));
    const finish = (into: Scratch, t32: Tensor, shape: readonly number[]) =>
      result(saved.dtype === 'f32' ? t32.reshape(shape) : cast(s, into.add(t32.reshape(shape)), saved.dtype));
    const dropped = (into: Scratch, t: Tensor, l: number) => (dropout ? into.add(dropoutOp(s, t, dropout.p, dropout.seed + l)) : t);

    // What arrives at the last layer: its emitted sequence's gradient, or its final state's.
    let dSeq: Tensor | undefined;
    let dLastState: Tensor | undefined;
    if (dOutput) {
      const through = dropped(kept, dOutput, L - 1);
      if (saved.returnSequences) dSeq = through;
      else dLastState = through;
    }
    const layers: GruLayerGradients[] = new Array(L);
    const dh0: Tensor[] = new Array(L);
    let dx: Tensor | undefined;
    for (let l = L - 1; l >= 0; l--) {
      using local = new Scratch();
      const layer = saved.layers[l]!;
      const I = layer.input;
      const shared = ensemble !== undefined && l === 0 && saved.x.rank === 3;
      const input = l === 0 ? saved.x : dropped(local, saved.sequences[l - 1]!, l - 1);
      const x32 = f32(local, input, shared ? [B * T, I] : [E, B * T, I]);
      const wIh = f32(local, layer.wIh, [E, G, I]);
      const wHh = f32(local, layer.wHh, [E, G, H]);
      const seq = f32(local, saved.sequences[l]!, [E, B * T, H]);
      const h0 = f32(local, saved.initial[l]!, [E, B, H]);
      const projection = saved.projections[l];
      const gx = local.add(projection ? projection.reshape([E, B * T, G]) : matmul(s, x32, wIh, { transB: true, precision }));
      const hW = local.add(matmul(s, seq, wHh, { transB: true, precision }));
      const h0W = local.add(matmul(s, h0, wHh, { transB: true, precision }));
      let dhN: Tensor | undefined;
      if (dHidden) dhN = L === 1 ? dHidden : local.add(sliceLayer(s, op, dHidden, l, E * B * H));
      if (l === L - 1 && dLastState) dhN = dhN ? local.add(binary(s, 'add', local.add(dhN.reshape(dLastState.shape)), dLastState, op)) : dLastState;
      const dGx = local.add(s.empty<'f32'>(op, [E, B * T, G], 'f32'));
      const dHW = local.add(s.empty<'f32'>(op, [E, B * T, G], 'f32'));
      const dH0W = local.add(s.empty<'f32'>(op, [E, B, G], 'f32'));
      const dh0Layer = kept.add(s.empty<'f32'>(op, [E, B, H], 'f32'));
      const params: GruBackwardParams = {
        gx: gx.view,
        hW: hW.view,
        h0W: h0W.view,
        hSeq: seq.view,
        h0: h0.view,
        wHh: wHh.view,
        dGx: dGx.view,
        dHW: dHW.view,
        dH0W: dH0W.view,
        dh0: dh0Layer.view,
        ensemble: E,
        batch: B,
        steps: T,
        hidden: H,
        precision,
      };
      if (layer.bIh) params.bIh = f32(local, layer.bIh, [E, G]).view;
      if (layer.bHh) params.bHh = f32(local, layer.bHh, [E, G]).view;
      if (dSeq) params.dhSeq = f32(local, dSeq, [E, B, T, H]).view;
      if (dhN) params.dhN = f32(local, dhN, [E, B, H]).view;
      s.backend.gruBackwardRecurrence!(params);

      const dWih = local.add(matmul(s, dGx, x32, { transA: true, precision }));
      const hh = local.add(matmul(s, dHW, seq, { transA: true, precision }));
      const dWhh = local.add(matmul(s, dH0W, h0, { transA: true, c: hh, beta: 1, precision }));
      const grads: GruLayerGradients = { wIh: finish(local, dWih, layer.wIh.shape), wHh: finish(local, dWhh, layer.wHh.shape) };
      if (layer.bIh) grads.bIh = finish(local, local.add(reduce(s, 'sum', dGx, 1)), layer.bIh.shape);
      if (layer.bHh) {
        const fromSeq = local.add(reduce(s, 'sum', dHW, 1));
        const fromH0 = local.add(reduce(s, 'sum', dH0W, 1));
        grads.bHh = finish(local, local.add(binary(s, 'add', fromSeq, fromH0, op)), layer.bHh.shape);
      }
      layers[l] = grads;
      dh0[l] = dh0Layer;
      // The gradient of this layer's input: the layer below's emitted sequence, or x.
      let dInput = local.add(matmul(s, dGx, wIh, { precision }));
      if (shared) dInput = local.add(reduce(s, 'sum', dInput, 0));
      if (l > 0) dSeq = dropped(kept, kept.add(dInput.reshape(saved.sequences[l - 1]!.shape)), l - 1);
      else dx = finish(local, dInput, saved.x.shape);
      dLastState = undefined;
    }
    let dInitial: Tensor | undefined;
    if (saved.hasH0) {
      const perLayer = dh0.map((t) => kept.add((saved.dtype === 'f32' ? t : kept.add(cast(s, t, saved.dtype))).reshape([E * B * H])));
      dInitial = result(stackFinals(s, perLayer, { op, dtype: saved.dtype }, saved.stateShape));
    }
    return { x: dx!, h0: dInitial, layers };
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  }
}

/** A gradient argument: absent (undefined or null), or a live tensor of the result's shape and dtype. */
function checkGradient(s: Session, op: string, name: string, t: unknown, shape: readonly number[], dtype: DType): Tensor | undefined {
  if (t === undefined || t === null) return undefined;
  s.checkTensor(op, t, `gradients.${name}`);
  if (!sameShape(t.shape, shape) || t.dtype !== dtype) {
    throw new InvalidArgumentError(`${op}: gradients.${name} must be ${dtype} ${formatShape(shape)} (the forward's ${name}), got ${t.toString()}`);
  }
  return t;
}
