/**
 * The front-end of `gpu.gru`, `gpu.gruCell` and `gpu.gruRollout`: weights in PyTorch's layout and
 * gate order (W_ih [3H, in], W_hh [3H, H], b_ih, b_hh [3H]; rows r, z, n), multi-layer stacks,
 * ensembles of E independent GRUs (every weight with a leading [E] dim), an optional layer norm
 * of the carried state and seeded dropout on what a layer emits.
 *
 * Each layer is one GEMM for the input projections of all timesteps (`gpu.matmul`, so any
 * backend) and one {@link Backend.gruRecurrence} call for the recurrence. Everything is checked
 * here first, so every backend reports bad input with the same {@link InvalidArgumentError}.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import type { GruPath, GruRecurrenceParams } from '../core/gru-params.js';
import type { Session } from '../tensor/session.js';
import { full } from './creation.js';
import { binary } from './elementwise.js';
import { linear, matmul } from './matmul.js';
import { dropout as dropoutOp } from './random.js';
import type { Tensor } from '../tensor/tensor.js';
import type { TensorView } from '../core/view.js';
import { formatShape } from '../core/shape.js';
import { validateSeed } from '../core/validation.js';

/** Layer norm of one layer's hidden state after every step (the normalised state is carried on). */
export interface GruLayerNorm {
  /** Scale [H] (or [E, H] for an ensemble); default 1. */
  weight?: Tensor;
  /** Shift [H] (or [E, H]); default 0. */
  bias?: Tensor;
  /** Default 1e-5. */
  eps?: number;
}

/**
 * One GRU layer in PyTorch's layout (`weight_ih_l0` etc.): wIh [3H, in], wHh [3H, H], bIh and bHh
 * [3H], gate rows in the order r, z, n. For an ensemble of E GRUs each has a leading [E] dim.
 */
export interface GruLayerWeights {
  wIh: Tensor;
  wHh: Tensor;
  bIh?: Tensor;
  bHh?: Tensor;
  /** Normalise the hidden state after each step (as LayerNorm over H). */
  layerNorm?: GruLayerNorm;
}

/** One layer, or a stack (layer 0 first; every layer of a stack has the same hidden size). */
export type GruWeights = GruLayerWeights | readonly GruLayerWeights[];

/** Options shared by `gpu.gru`, `gpu.gruCell` and `gpu.gruRollout`. */
export interface GruCommonOptions {
  /**
   * 'highest' (default): f32 in full f32. 'tf32': the products may use TF32 tensor cores
   * (10-bit mantissa products, f32 accumulation), as torch's default for cuDNN RNNs.
   */
  precision?: 'highest' | 'tf32';
  /**
   * How a CUDA backend runs the recurrence (other backends have one path and ignore it):
   * - 'auto' (default): the faster path for the shape, as measured on an H200: 'fused' for small
   *   products (ensemble·batch·hidden² up to 2^23 in f32, 2^22 under 'tf32') where it applies,
   *   else 'steps'.
   * - 'fused': one kernel per step doing both the product h·W_hhᵀ (SIMT f32, also under 'tf32')
   *   and the gates, captured in a CUDA graph when the same call comes back. Applies to hidden
   *   sizes up to 512 without layer norm; elsewhere a CUDA backend throws InvalidArgumentError.
   * - 'steps': per step one product h·W_hhᵀ (the matmul engine, TF32 where allowed) and a fused
   *   gates kernel, captured in a CUDA graph when the same call comes back.
   * - 'persistent': one cooperative launch for all steps, each block keeping its slice of W_hh
   *   on chip, SIMT f32 products (also under 'tf32'). Applies without layer norm and where the
   *   slices fit with every block resident; elsewhere a CUDA backend throws InvalidArgumentError.
   */
  path?: GruPath;
}

/** Options of `gpu.gru`. */
export interface GruOptions extends GruCommonOptions {
  /** Return every step's output [.., B, T, H] (default true) or only the last [.., B, H]. */
  returnSequences?: boolean;
  /**
   * Dropout on each layer's emitted states (what feeds the next layer, and the returned output);
   * the carried recurrent state and the returned hidden state are not dropped. Seeded Philox, as
   * `gpu.dropout`: layer l uses seed + l (seed default 0, so a run is reproducible).
   */
  dropout?: { p: number; seed?: number };
}

/** Result of `gpu.gru`. */
export interface GruResult<D extends DType = DType> {
  /** The last layer's states: [B, T, H] ([E, B, T, H]), or [B, H] ([E, B, H]) without returnSequences. */
  output: Tensor<D>;
  /** Final state of each layer, shaped like h0: [B, H] / [E, B, H] for one layer, [L, B, H] / [L, E, B, H] for a stack. */
  hidden: Tensor<D>;
}

/** The output layer of `gpu.gruRollout`: state = h·weightᵀ + bias. */
export interface GruOutputProjection {
  /** [S, H] (or [E, S, H]). */
  weight: Tensor;
  /** [S] (or [E, S]). */
  bias?: Tensor;
}

/** Options of `gpu.gruRollout`. */
export interface GruRolloutOptions extends GruCommonOptions {
  /** Steps to predict (≥ 1). */
  steps: number;
  /** Maps the last layer's hidden state to the next input (S = the first layer's input size). */
  outputProjection: GruOutputProjection;
}

/** Result of `gpu.gruRollout`. */
export interface GruRolloutResult<D extends DType = DType> {
  /** Predicted states [B, steps, S] ([E, B, steps, S]). */
  states: Tensor<D>;
  /** Final hidden state, shaped like h0. */
  hidden: Tensor<D>;
}

const GRU_DTYPES: readonly DType[] = ['f32', 'f16', 'bf16'];
const DEFAULT_LN_EPS = 1e-5;

/** A layer's weights after validation. */
interface CheckedLayer {
  wIh: Tensor;
  wHh: Tensor;
  bIh: Tensor | undefined;
  bHh: Tensor | undefined;
  input: number;
  layerNorm: { gamma: Tensor | undefined; beta: Tensor | undefined; eps: number } | undefined;
}

/** A validated stack: E (undefined when not an ensemble), H and the layers. */
interface CheckedStack {
  /** The public op, for messages. */
  op: string;
  ensemble: number | undefined;
  hidden: number;
  dtype: DType;
  layers: CheckedLayer[];
}

/**
 * Runs a (multi-layer, optionally ensemble) GRU over x [B, T, in] (an ensemble also takes
 * [E, B, T, in]) from h0 ([B, H] / [E, B, H] for one layer, [L, B, H] / [L, E, B, H] for a stack;
 * omitted: zeros). Matches torch.nn.GRU(batch_first=True) given the same weights.
 */
export function gru(s: Session, x: Tensor, h0: Tensor | undefined, weights: GruWeights, options: GruOptions = {}): GruResult {
  const op = 'gru';
  const stack = checkWeights(s, op, weights);
  const returnSequences = flag(op, 'returnSequences', options.returnSequences, true);
  const precision = checkPrecision(op, options.precision);
  const path = checkPath(op, options.path);
  const dropout = checkDropout(op, options.dropout);
  const E = stack.ensemble;
  checkInput(s, op, x, 'x', stack, 3);
  const [B, T] = E !== undefined && x.rank === 4 ? [x.shape[1]!, x.shape[2]!] : [x.shape[0]!, x.shape[1]!];
  if (T < 1) throw new InvalidArgumentError(`${op}: x ${formatShape(x.shape)} has no timesteps`);
  const init = initialStates(s, op, h0, stack, B);
  const finals: Tensor[] = [];
  let input = x;
  try {
    for (let l = 0; l < stack.layers.length; l++) {
      const last = l === stack.layers.length - 1;
      const { seq, hN } = runLayer(s, stack, l, input, init.layers[l]!, B, T, !last || returnSequences, { precision, path });
      finals.push(hN);
      let emitted = seq;
      if (dropout) {
        try {
          emitted = dropoutOp(s, seq, dropout.p, dropout.seed + l);
        } finally {
          seq.dispose();
        }
      }
      if (input !== x) input.dispose();
      input = emitted;
    }
    const output = input;
    input = x;
    return { output, hidden: stackFinals(s, finals, stack, init.shape) };
  } finally {
    if (input !== x) input.dispose();
    for (const f of finals) f.dispose();
    for (const t of init.layers) t.dispose();
  }
}

/**
 * One step of one GRU layer (torch.nn.GRUCell): x [B, in] and h [B, H] (an ensemble: x [B, in]
 * or [E, B, in], h [E, B, H]) give the new state, shaped like h.
 */
export function gruCell(s: Session, x: Tensor, h: Tensor, weights: GruLayerWeights, options: GruCommonOptions = {}): Tensor {
  const op = 'gruCell';
  if (Array.isArray(weights)) throw new InvalidArgumentError(`${op}: takes one layer's weights, not a stack`);
  const stack = checkWeights(s, op, weights);
  const precision = checkPrecision(op, options.precision);
  const path = checkPath(op, options.path);
  checkInput(s, op, x, 'x', stack, 2);
  const B = stack.ensemble !== undefined && x.rank === 3 ? x.shape[1]! : x.shape[0]!;
  const init = initialStates(s, op, h, stack, B);
  const xs = x.reshape(stack.ensemble !== undefined && x.rank === 3 ? [x.shape[0]!, B, 1, x.shape[2]!] : [B, 1, x.shape[x.rank - 1]!]);
  try {
    const { seq, hN } = runLayer(s, stack, 0, xs, init.layers[0]!, B, 1, false, { precision, path });
    seq.dispose();
    try {
      return hN.reshape(h.shape);
    } finally {
      hN.dispose();
    }
  } finally {
    xs.dispose();
    for (const t of init.layers) t.dispose();
  }
}

/**
 * Autoregressive prediction: from `state` [B, S] ([E, B, S] or [B, S] for an ensemble) and h0,
 * each step runs the stack on the current input, maps the last layer's hidden state through
 * `outputProjection` and feeds that prediction back as the next input.
 */
export function gruRollout(
  s: Session,
  state: Tensor,
  h0: Tensor | undefined,
  weights: GruWeights,
  options: GruRolloutOptions,
): GruRolloutResult {
  const op = 'gruRollout';
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`${op}: options with steps and outputProjection are required`);
  const stack = checkWeights(s, op, weights);
  const precision = checkPrecision(op, options.precision);
  const path = checkPath(op, options.path);
  const steps = options.steps;
  if (!Number.isSafeInteger(steps) || steps < 1) throw new InvalidArgumentError(`${op}: steps must be an integer ≥ 1, got ${String(steps)}`);
  checkInput(s, op, state, 'state', stack, 2);
  const E = stack.ensemble;
  const S = stack.layers[0]!.input;
  const B = E !== undefined && state.rank === 3 ? state.shape[1]! : state.shape[0]!;
  const projection = checkProjection(s, op, options.outputProjection, stack, S);
  const init = initialStates(s, op, h0, stack, B);
  const L = stack.layers.length;
  const H = stack.hidden;
  const rows = E !== undefined ? [E, B] : [B];
  // The last layer's states of every step, [E, B, steps, H]: projected in one product at the end.
  let top: Tensor;
  try {
    top = s.empty(op, [E ?? 1, B, steps, H], stack.dtype);
  } catch (err) {
    for (const t of init.layers) t.dispose();
    throw err;
  }
  const hidden = [...init.layers];
  let input = state.reshape(E !== undefined && state.rank === 3 ? [E, B, 1, S] : [B, 1, S]);
  try {
    for (let t = 0; t < steps; t++) {
      for (let l = 0; l < L; l++) {
        const last = l === L - 1;
        const { seq, hN } = runLayer(s, stack, l, input, hidden[l]!, B, 1, !last, { precision, path }, last ? { tensor: top, step: t, steps } : undefined);
        hidden[l]!.dispose();
        hidden[l] = hN;
        input.dispose();
        input = seq;
      }
      if (t + 1 < steps) {
        const h = hidden[L - 1]!.reshape([...rows, H]);
        try {
          const y = project(s, h, projection, precision);
          input.dispose();
          input = y.reshape(E !== undefined ? [E, B, 1, S] : [B, 1, S]);
          y.dispose();
        } finally {
          h.dispose();
        }
      }
    }
    const topRows = top.reshape(E !== undefined ? [E, B * steps, H] : [B * steps, H]);
    try {
      const projected = project(s, topRows, projection, precision);
      try {
        return { states: projected.reshape([...rows, steps, S]), hidden: stackFinals(s, hidden, stack, init.shape) };
      } finally {
        projected.dispose();
      }
    } finally {
      topRows.dispose();
    }
  } finally {
    input.dispose();
    top.dispose();
    for (const t of hidden) t.dispose();
  }
}

// ------------------------------------------------------------------ internals

/** Where a layer writes its states instead of a fresh sequence: step `step` of `tensor` [E, B, steps, H]. */
interface SequenceTarget {
  tensor: Tensor;
  step: number;
  steps: number;
}

/**
 * One layer over `input` ([B, T, in] shared by every member, or [E, B, T, in]) from `h0`
 * ([E, B, H] dense, E = 1 when not an ensemble). Returns the state sequence [E?, B, T, H] (when
 * `sequence`; otherwise a two-slot ring, returned too so the caller disposes it) and the final state.
 */
function runLayer(
  s: Session,
  stack: CheckedStack,
  l: number,
  input: Tensor,
  h0: Tensor,
  B: number,
  T: number,
  sequence: boolean,
  { precision, path }: { precision: 'highest' | 'tf32'; path: GruPath },
  target?: SequenceTarget,
): { seq: Tensor; hN: Tensor } {
  const layer = stack.layers[l]!;
  const E = stack.ensemble ?? 1;
  const H = stack.hidden;
  const G = 3 * H;
  const perMember = stack.ensemble !== undefined && input.rank === 4;
  let gx: Tensor;
  let gxStrides: [number, number, number];
  if (perMember) {
    const xs = input.reshape([E, B * T, layer.input]);
    try {
      gx = matmul(s, xs, layer.wIh, { transB: true, precision });
    } finally {
      xs.dispose();
    }
    gxStrides = [B * T * G, T * G, G];
  } else {
    // One product for every member: [B·T, in] · [E·3H, in]ᵀ.
    const xs = input.reshape([B * T, layer.input]);
    const w = layer.wIh.reshape([E * G, layer.input]);
    try {
      gx = matmul(s, xs, w, { transB: true, precision });
    } finally {
      xs.dispose();
      w.dispose();
    }
    gxStrides = [G, T * E * G, E * G];
  }
  const shapeOf = (dims: number[]) => (stack.ensemble !== undefined ? [E, ...dims] : dims);
  let seq: Tensor | undefined;
  let hN: Tensor | undefined;
  try {
    let seqView: TensorView;
    let seqStrides: [number, number, number];
    let slots: number;
    if (target) {
      seq = s.empty(stack.op, [0], stack.dtype);
      const base = target.tensor.view;
      seqView = { ...base, offset: base.offset + target.step * H, size: base.size - target.step * H };
      seqStrides = [B * target.steps * H, target.steps * H, H];
      slots = 1;
    } else if (sequence) {
      seq = s.empty(stack.op, shapeOf([B, T, H]), stack.dtype);
      seqView = seq.view;
      seqStrides = [B * T * H, T * H, H];
      slots = T;
    } else {
      seq = s.empty(stack.op, [2, E, B, H], stack.dtype);
      seqView = seq.view;
      seqStrides = [B * H, H, E * B * H];
      slots = 2;
    }
    hN = s.empty(stack.op, shapeOf([B, H]), stack.dtype);
    const params: GruRecurrenceParams = {
      gx: gx.view,
      gxStrides,
      wHh: layer.wHh.view,
      h0: h0.view,
      hSeq: seqView,
      seqStrides,
      slots,
      hN: hN.view,
      ensemble: E,
      batch: B,
      steps: T,
      hidden: H,
      precision,
      path,
    };
    if (layer.bIh) params.bIh = layer.bIh.view;
    if (layer.bHh) params.bHh = layer.bHh.view;
    if (layer.layerNorm) {
      const ln: NonNullable<GruRecurrenceParams['layerNorm']> = { eps: layer.layerNorm.eps };
      if (layer.layerNorm.gamma) ln.gamma = layer.layerNorm.gamma.view;
      if (layer.layerNorm.beta) ln.beta = layer.layerNorm.beta.view;
      params.layerNorm = ln;
    }
    s.backend.gruRecurrence!(params);
    if (!sequence && !target) {
      // Only the final state is wanted: hand it out as the "sequence" too.
      seq.dispose();
      seq = hN.reshape(hN.shape);
    }
    return { seq, hN };
  } catch (err) {
    seq?.dispose();
    hN?.dispose();
    throw err;
  } finally {
    gx.dispose();
  }
}

/** The output projection of a rollout: h [.., rows, H] → [.., rows, S]. */
function project(s: Session, h: Tensor, p: { weight: Tensor; bias: Tensor | undefined }, precision: 'highest' | 'tf32'): Tensor {
  if (p.weight.rank === 2) return linear(s, h, p.weight, p.bias, 'none', { precision });
  const y = matmul(s, h, p.weight, { transB: true, precision });
  if (!p.bias) return y;
  const b = p.bias.reshape([p.bias.shape[0]!, 1, p.bias.shape[1]!]);
  try {
    return binary(s, 'add', y, b, 'gruRollout');
  } finally {
    b.dispose();
    y.dispose();
  }
}

/**
 * Initial states per layer as dense [E·B·H] tensors the caller disposes (zeros when h0 is
 * omitted), and the shape of h0 (which the returned hidden state takes).
 */
function initialStates(s: Session, op: string, h0: Tensor | undefined, stack: CheckedStack, B: number): { shape: number[]; layers: Tensor[] } {
  const L = stack.layers.length;
  const E = stack.ensemble;
  const H = stack.hidden;
  const perLayer = E !== undefined ? [E, B, H] : [B, H];
  const shape = L === 1 ? perLayer : [L, ...perLayer];
  const size = (E ?? 1) * B * H;
  if (h0 === undefined) return { shape, layers: stack.layers.map(() => full(s, op, [size], 0, stack.dtype)) };
  s.checkTensor(op, h0, 'h0');
  if (h0.dtype !== stack.dtype) throw mismatch(op, 'h0', h0, stack.dtype);
  if (!sameShape(h0.shape, shape)) {
    throw new InvalidArgumentError(
      `${op}: h0 must be ${formatShape(shape)} (${L > 1 ? 'layers, ' : ''}${E !== undefined ? 'members, ' : ''}batch, hidden), got ${formatShape(h0.shape)}`,
    );
  }
  if (L === 1) return { shape, layers: [h0.reshape([size])] };
  return { shape, layers: stack.layers.map((_, l) => sliceLayer(s, op, h0, l, size)) };
}

/** Layer l of a stacked [L, ...] state as its own dense tensor. */
function sliceLayer(s: Session, op: string, h0: Tensor, l: number, size: number): Tensor {
  const out = s.empty(op, [size], h0.dtype);
  const src = h0.view;
  s.backend.copy(out.view, { ...src, shape: [size], offset: src.offset + l * size, size });
  return out;
}

/** The final states of every layer in the shape of h0. */
function stackFinals(s: Session, finals: readonly Tensor[], stack: CheckedStack, shape: readonly number[]): Tensor {
  if (finals.length === 1) return finals[0]!.reshape(shape);
  const out = s.empty(stack.op, shape, stack.dtype);
  const dst = out.view;
  let offset = 0;
  for (const f of finals) {
    s.backend.copy({ ...dst, shape: [f.size], offset: dst.offset + offset, size: f.size }, f.view);
    offset += f.size;
  }
  return out;
}

function checkWeights(s: Session, op: string, weights: GruWeights): CheckedStack {
  const list: readonly GruLayerWeights[] = Array.isArray(weights) ? weights : [weights as GruLayerWeights];
  if (list.length === 0) throw new InvalidArgumentError(`${op}: weights must hold at least one layer`);
  let ensemble: number | undefined;
  let hidden = 0;
  let dtype: DType = 'f32';
  const layers = list.map((w, l) => {
    const where = list.length > 1 ? `layer ${l} ` : '';
    if (typeof w !== 'object' || w === null) throw new InvalidArgumentError(`${op}: ${where}weights must be an object { wIh, wHh, bIh?, bHh? }`);
    s.checkTensor(op, w.wIh, `${where}wIh`);
    s.checkTensor(op, w.wHh, `${where}wHh`);
    if (l === 0) {
      dtype = w.wIh.dtype;
      if (!GRU_DTYPES.includes(dtype)) {
        throw new InvalidArgumentError(`${op}: weights must be f32, f16 or bf16, got ${w.wIh.toString()}`);
      }
      if (w.wHh.rank !== 2 && w.wHh.rank !== 3) {
        throw new InvalidArgumentError(`${op}: wHh must be [3H, H] (or [E, 3H, H] for an ensemble), got ${formatShape(w.wHh.shape)}`);
      }
      ensemble = w.wHh.rank === 3 ? w.wHh.shape[0]! : undefined;
      hidden = w.wHh.shape[w.wHh.rank - 1]!;
      if (ensemble === 0 || hidden === 0) throw new InvalidArgumentError(`${op}: wHh ${formatShape(w.wHh.shape)} is empty`);
    }
    const lead = ensemble !== undefined ? [ensemble] : [];
    const H = hidden;
    for (const [name, t] of [['wIh', w.wIh], ['wHh', w.wHh]] as const) {
      if (t.dtype !== dtype) throw mismatch(op, `${where}${name}`, t, dtype);
    }
    if (!sameShape(w.wHh.shape, [...lead, 3 * H, H])) {
      throw new InvalidArgumentError(`${op}: ${where}wHh must be ${formatShape([...lead, 3 * H, H])}, got ${formatShape(w.wHh.shape)}`);
    }
    const input = w.wIh.shape[w.wIh.rank - 1]!;
    if (w.wIh.rank !== lead.length + 2 || !sameShape(w.wIh.shape, [...lead, 3 * H, input]) || input === 0) {
      throw new InvalidArgumentError(`${op}: ${where}wIh must be ${formatShape([...lead, 3 * H])} + [in], got ${formatShape(w.wIh.shape)}`);
    }
    if (l > 0 && input !== H) {
      throw new InvalidArgumentError(`${op}: layer ${l} takes the previous layer's ${H} states, but its wIh is ${formatShape(w.wIh.shape)}`);
    }
    const bias = (name: string, t: Tensor | undefined, n: number): Tensor | undefined => {
      if (t === undefined) return undefined;
      s.checkTensor(op, t, `${where}${name}`);
      if (t.dtype !== dtype) throw mismatch(op, `${where}${name}`, t, dtype);
      if (!sameShape(t.shape, [...lead, n])) throw new InvalidArgumentError(`${op}: ${where}${name} must be ${formatShape([...lead, n])}, got ${formatShape(t.shape)}`);
      return t;
    };
    let layerNorm: CheckedLayer['layerNorm'];
    if (w.layerNorm !== undefined) {
      const ln = w.layerNorm;
      if (typeof ln !== 'object' || ln === null) throw new InvalidArgumentError(`${op}: ${where}layerNorm must be an object { weight?, bias?, eps? }`);
      const eps = ln.eps ?? DEFAULT_LN_EPS;
      if (typeof eps !== 'number' || !(eps > 0) || !Number.isFinite(eps)) throw new InvalidArgumentError(`${op}: ${where}layerNorm.eps must be a positive number, got ${String(eps)}`);
      layerNorm = { gamma: bias('layerNorm.weight', ln.weight, H), beta: bias('layerNorm.bias', ln.bias, H), eps };
    }
    return { wIh: w.wIh, wHh: w.wHh, bIh: bias('bIh', w.bIh, 3 * H), bHh: bias('bHh', w.bHh, 3 * H), input, layerNorm };
  });
  s.assertSupports(op, 'matmul', 'gruRecurrence');
  return { op, ensemble, hidden, dtype, layers };
}

/** x [B, T, in] ([B, in] for a cell) or, for an ensemble, also with a leading [E]. */
function checkInput(s: Session, op: string, x: Tensor, name: string, stack: CheckedStack, rank: number): void {
  s.checkTensor(op, x, name);
  if (x.dtype !== stack.dtype) throw mismatch(op, name, x, stack.dtype);
  const E = stack.ensemble;
  const input = stack.layers[0]!.input;
  const dims = rank === 3 ? 'batch, time, input' : 'batch, input';
  const ok =
    (x.rank === rank || (E !== undefined && x.rank === rank + 1 && x.shape[0] === E)) && x.shape[x.rank - 1] === input;
  if (!ok) {
    const alt = E !== undefined ? ` or [${E}, ${dims}]` : '';
    throw new InvalidArgumentError(`${op}: ${name} must be [${dims}] with input ${input}${alt}, got ${formatShape(x.shape)}`);
  }
  if (x.shape[x.rank - rank]! === 0) throw new InvalidArgumentError(`${op}: ${name} ${formatShape(x.shape)} has an empty batch`);
}

function checkProjection(
  s: Session,
  op: string,
  p: GruOutputProjection,
  stack: CheckedStack,
  S: number,
): { weight: Tensor; bias: Tensor | undefined } {
  if (typeof p !== 'object' || p === null) throw new InvalidArgumentError(`${op}: outputProjection { weight, bias? } is required`);
  const lead = stack.ensemble !== undefined ? [stack.ensemble] : [];
  s.checkTensor(op, p.weight, 'outputProjection.weight');
  if (p.weight.dtype !== stack.dtype) throw mismatch(op, 'outputProjection.weight', p.weight, stack.dtype);
  const shared = sameShape(p.weight.shape, [S, stack.hidden]);
  if (!shared && !sameShape(p.weight.shape, [...lead, S, stack.hidden])) {
    throw new InvalidArgumentError(
      `${op}: outputProjection.weight must be ${formatShape([...lead, S, stack.hidden])} (hidden → the ${S} inputs of layer 0), got ${formatShape(p.weight.shape)}`,
    );
  }
  if (p.bias !== undefined) {
    s.checkTensor(op, p.bias, 'outputProjection.bias');
    if (p.bias.dtype !== stack.dtype) throw mismatch(op, 'outputProjection.bias', p.bias, stack.dtype);
    const want = shared ? [S] : [...lead, S];
    if (!sameShape(p.bias.shape, want)) throw new InvalidArgumentError(`${op}: outputProjection.bias must be ${formatShape(want)}, got ${formatShape(p.bias.shape)}`);
  }
  return { weight: p.weight, bias: p.bias };
}

function checkPrecision(op: string, precision: unknown): 'highest' | 'tf32' {
  const p = precision ?? 'highest';
  if (p !== 'highest' && p !== 'tf32') throw new InvalidArgumentError(`${op}: precision must be 'highest' or 'tf32', got ${String(p)}`);
  return p;
}

function checkPath(op: string, path: unknown): GruPath {
  const p = path ?? 'auto';
  if (p !== 'auto' && p !== 'fused' && p !== 'steps' && p !== 'persistent') {
    throw new InvalidArgumentError(`${op}: path must be 'auto', 'fused', 'steps' or 'persistent', got ${String(p)}`);
  }
  return p;
}

function checkDropout(op: string, dropout: GruOptions['dropout']): { p: number; seed: number } | undefined {
  if (dropout === undefined) return undefined;
  if (typeof dropout !== 'object' || dropout === null) throw new InvalidArgumentError(`${op}: dropout must be { p, seed? }`);
  const { p } = dropout;
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new InvalidArgumentError(`${op}: dropout.p must be in [0, 1], got ${String(p)}`);
  if (p === 0) return undefined;
  return { p, seed: validateSeed(op, dropout.seed ?? 0) };
}

function flag(op: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`${op}: ${name} must be a boolean, got ${String(value)}`);
  return value;
}

function mismatch(op: string, name: string, t: Tensor, dtype: DType): InvalidArgumentError {
  return new InvalidArgumentError(
    `${op}: dtype mismatch: ${name} is ${t.dtype} but the weights are ${dtype}; there is no implicit promotion, cast with gpu.cast(x, '${dtype}')`,
  );
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
