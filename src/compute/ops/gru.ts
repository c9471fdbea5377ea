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
import type { GruPath, GruRecurrenceParams, GruRolloutParams } from '../core/gru-params.js';
import type { Session } from '../tensor/session.js';
import { full } from './creation.js';
import { binary } from './elementwise.js';
import { linear, matmul } from './matmul.js';
import { dropout as dropoutOp } from './random.js';
import type { Tensor } from '../tensor/tensor.js';
import type { TensorView } from '../core/view.js';
import { formatShape, sameShape } from '../core/shape.js';
import { checkChoice, checkFlag, checkInteger, checkOptions, describeValue, optionKeys, validateSeed } from '../core/validation.js';

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
   * - 'auto' (default): the faster path for the shape, as measured on an H200: 'sequence' for f32
   *   layers where it applies and ensemble·batch·hidden² is at most 5·2^22 (2^22 under 'tf32'),
   *   else 'fused' for products up to 2^23 in f32 (2^22 under 'tf32') where it applies, else
   *   'steps'. A `gpu.gruRollout` of one layer without layer norm runs in one launch (every
   *   step's gates and projection, SIMT f32 also under 'tf32') where hidden and state sizes are
   *   at most 256 and the batch at most 256: from sm_90 a thread-block cluster per member where
   *   every member's cluster is resident at once, else one cooperative kernel; the other paths
   *   run it step by step.
   * - 'sequence': one launch for all steps of a layer: each block runs the whole sequence of a
   *   few batch rows of one member, with W_hh on chip (registers; a quarter in shared memory at
   *   hidden > 64; SIMT f32, also under 'tf32') and the state in shared memory, two block
   *   barriers per step and no grid-wide one. Applies to hidden sizes up to 128 without layer
   *   norm; elsewhere a CUDA backend throws InvalidArgumentError.
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

/** The keys {@link GruOptions} takes. */
export const GRU_OPTIONS = optionKeys<GruOptions>({ precision: true, path: true, returnSequences: true, dropout: true });
/** The keys {@link GruCommonOptions} (`gpu.gruCell`'s options) takes. */
export const GRU_CELL_OPTIONS = optionKeys<GruCommonOptions>({ precision: true, path: true });
/** The keys {@link GruRolloutOptions} takes. */
export const GRU_ROLLOUT_OPTIONS = optionKeys<GruRolloutOptions>({ precision: true, path: true, steps: true, outputProjection: true });
/** The keys of one layer's {@link GruLayerWeights}. */
export const GRU_LAYER_KEYS = optionKeys<GruLayerWeights>({ wIh: true, wHh: true, bIh: true, bHh: true, layerNorm: true });
/** The keys of a {@link GruLayerNorm}. */
export const GRU_LAYER_NORM_KEYS = optionKeys<GruLayerNorm>({ weight: true, bias: true, eps: true });
/** The keys of {@link GruOptions.dropout}. */
export const GRU_DROPOUT_KEYS = optionKeys<NonNullable<GruOptions['dropout']>>({ p: true, seed: true });
/** The keys of a {@link GruOutputProjection}. */
export const GRU_PROJECTION_KEYS = optionKeys<GruOutputProjection>({ weight: true, bias: true });

const GRU_DTYPES: readonly DType[] = ['f32', 'f16', 'bf16'];
/** The call's tensors besides the weights, by name, as each op passes them to checkWeights. */
const GRU_TENSORS = ['x', 'h0'];
const CELL_TENSORS = ['x', 'h'];
const ROLLOUT_TENSORS = ['state', 'h0', 'outputProjection.weight', 'outputProjection.bias'];
const PRECISIONS: readonly ('highest' | 'tf32')[] = ['highest', 'tf32'];
/** The recurrence paths `path` takes. */
export const GRU_PATHS: readonly GruPath[] = ['auto', 'sequence', 'fused', 'steps', 'persistent'];
const DEFAULT_LN_EPS = 1e-5;

/** A layer's weights after validation. */
export interface CheckedLayer {
  wIh: Tensor;
  wHh: Tensor;
  bIh: Tensor | undefined;
  bHh: Tensor | undefined;
  input: number;
  layerNorm: { gamma: Tensor | undefined; beta: Tensor | undefined; eps: number } | undefined;
}

/** A validated stack: E (undefined when not an ensemble), H and the layers. */
export interface CheckedStack {
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
export function gru(s: Session, x: Tensor, h0: Tensor | null | undefined, weights: GruWeights, opts?: unknown): GruResult {
  const { stack, returnSequences, precision, path, dropout, B, T, init } = prepareGru(s, 'gru', x, h0, weights, opts);
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
    // The hidden state first: the output stays owned by `input` (disposed on failure) until it is handed out.
    const hidden = stackFinals(s, finals, stack, init.shape);
    const output = input;
    input = x;
    return { output, hidden };
  } finally {
    if (input !== x) input.dispose();
    for (const f of finals) f.dispose();
    for (const t of init.layers) t.dispose();
  }
}

/** A gru call's checked options, stack and extents, and its initial states (which the caller disposes). */
export interface PreparedGru {
  stack: CheckedStack;
  returnSequences: boolean;
  precision: 'highest' | 'tf32';
  path: GruPath;
  dropout: { p: number; seed: number } | undefined;
  B: number;
  T: number;
  init: { shape: number[]; layers: Tensor[] };
}

/**
 * Checks a gru call in the name of `op` (gpu.gru, or the training forward) and makes its initial
 * states; `checkStack` adds the caller's own checks of the stack before anything is allocated.
 */
export function prepareGru(
  s: Session,
  op: string,
  x: Tensor,
  h0: Tensor | null | undefined,
  weights: GruWeights,
  opts: unknown,
  checkStack?: (stack: CheckedStack) => void,
): PreparedGru {
  const options = checkOptions<GruOptions>(op, opts, GRU_OPTIONS);
  const returnSequences = checkFlag(op, 'returnSequences', options.returnSequences, true);
  const precision = checkPrecision(op, options.precision);
  const path = checkChoice(op, 'path', options.path, GRU_PATHS, 'auto');
  const dropout = checkDropout(op, options.dropout);
  s.checkTensor(op, x, 'x');
  const stack = checkWeights(s, op, weights, GRU_TENSORS, [x, h0]);
  checkStack?.(stack);
  const E = stack.ensemble;
  checkInput(op, x, 'x', stack, 3);
  const [B, T] = E !== undefined && x.rank === 4 ? [x.shape[1]!, x.shape[2]!] : [x.shape[0]!, x.shape[1]!];
  if (T < 1) throw new InvalidArgumentError(`${op}: x ${formatShape(x.shape)} has no timesteps`);
  const init = initialStates(s, op, h0, 'h0', stack, B);
  return { stack, returnSequences, precision, path, dropout, B, T, init };
}

/**
 * One step of one GRU layer (torch.nn.GRUCell): x [B, in] and h [B, H] (an ensemble: x [B, in]
 * or [E, B, in], h [E, B, H]) give the new state, shaped like h.
 */
export function gruCell(s: Session, x: Tensor, h: Tensor, weights: GruLayerWeights, opts?: unknown): Tensor {
  const op = 'gruCell';
  const options = checkOptions<GruCommonOptions>(op, opts, GRU_CELL_OPTIONS);
  if (Array.isArray(weights)) throw new InvalidArgumentError(`${op}: takes one layer's weights, not a stack`);
  const precision = checkPrecision(op, options.precision);
  const path = checkChoice(op, 'path', options.path, GRU_PATHS, 'auto');
  s.checkTensor(op, x, 'x');
  s.checkTensor(op, h, 'h');
  const stack = checkWeights(s, op, weights, CELL_TENSORS, [x, h]);
  checkInput(op, x, 'x', stack, 2);
  const B = stack.ensemble !== undefined && x.rank === 3 ? x.shape[1]! : x.shape[0]!;
  const init = initialStates(s, op, h, 'h', stack, B);
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
  h0: Tensor | null | undefined,
  weights: GruWeights,
  options: GruRolloutOptions | undefined,
): GruRolloutResult {
  const op = 'gruRollout';
  if (options === undefined) throw new InvalidArgumentError(`${op}: options { steps, outputProjection } are required`);
  const o = checkOptions<GruRolloutOptions>(op, options, GRU_ROLLOUT_OPTIONS);
  const precision = checkPrecision(op, o.precision);
  const path = checkChoice(op, 'path', o.path, GRU_PATHS, 'auto');
  const steps = checkInteger(op, 'steps', o.steps, 1);
  s.checkTensor(op, state, 'state');
  const given = o.outputProjection as Partial<GruOutputProjection> | undefined;
  const stack = checkWeights(s, op, weights, ROLLOUT_TENSORS, [state, h0, given?.weight, given?.bias]);
  checkInput(op, state, 'state', stack, 2);
  const E = stack.ensemble;
  const S = stack.layers[0]!.input;
  const B = E !== undefined && state.rank === 3 ? state.shape[1]! : state.shape[0]!;
  const projection = checkProjection(op, o.outputProjection, stack, S);
  const L = stack.layers.length;
  const oneGo = path === 'auto' && L === 1 && !stack.layers[0]!.layerNorm;
  // The one-go path starts from zeros without them being written out first.
  const init = initialStates(s, op, h0, 'h0', stack, B, !oneGo);
  const H = stack.hidden;
  const rows = E !== undefined ? [E, B] : [B];
  if (oneGo) {
    let whole: GruRolloutResult | undefined;
    try {
      whole = rolloutInOneGo(s, stack, state, init, projection, B, S, steps, precision);
      if (!whole && init.layers.length === 0) init.layers.push(zeroStates(s, op, stack, B));
    } catch (err) {
      // A failed one-go rollout leaves the initial states with us: nothing may stay allocated.
      for (const t of init.layers) t.dispose();
      throw err;
    }
    if (whole) return whole;
  }
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
        // The hidden state first, so a failure there leaves no view of the states behind.
        const finalHidden = stackFinals(s, hidden, stack, init.shape);
        return { states: projected.reshape([...rows, steps, S]), hidden: finalHidden };
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

// ------------------------------------------------------------------ internals (shared with gru-backward.ts)

/**
 * The rollout of one layer without layer norm by the backend's one-go path (`Backend.gruRollout`),
 * or undefined, with nothing allocated, where the backend has none or declines the shape. A result
 * replaces `init`'s states (none: zeros), which it disposes; otherwise they stay with the caller.
 */
function rolloutInOneGo(
  s: Session,
  stack: CheckedStack,
  state: Tensor,
  init: { shape: number[]; layers: Tensor[] },
  projection: { weight: Tensor; bias: Tensor | undefined },
  B: number,
  S: number,
  steps: number,
  precision: 'highest' | 'tf32',
): GruRolloutResult | undefined {
  if (s.backend.gruRollout === undefined) return undefined;
  const layer = stack.layers[0]!;
  const E = stack.ensemble ?? 1;
  const H = stack.hidden;
  const states = s.empty(stack.op, stack.ensemble !== undefined ? [E, B, steps, S] : [B, steps, S], stack.dtype);
  let hN: Tensor | undefined;
  try {
    hN = s.empty(stack.op, [E, B, H], stack.dtype);
    const params: GruRolloutParams = {
      state: state.view,
      stateShared: stack.ensemble === undefined || state.rank === 2,
      wIh: layer.wIh.view,
      wHh: layer.wHh.view,
      outWeight: projection.weight.view,
      projectionShared: projection.weight.rank === 2,
      states: states.view,
      hN: hN.view,
      ensemble: E,
      batch: B,
      steps,
      hidden: H,
      input: S,
      precision,
    };
    if (init.layers[0]) params.h0 = init.layers[0].view;
    if (layer.bIh) params.bIh = layer.bIh.view;
    if (layer.bHh) params.bHh = layer.bHh.view;
    if (projection.bias) params.outBias = projection.bias.view;
    if (!s.backend.gruRollout(params)) {
      states.dispose();
      hN.dispose();
      return undefined;
    }
  } catch (err) {
    states.dispose();
    hN?.dispose();
    throw err;
  }
  for (const t of init.layers) t.dispose();
  const hidden = hN.reshape(init.shape);
  hN.dispose();
  return { states, hidden };
}

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
export function runLayer(
  s: Session,
  stack: CheckedStack,
  l: number,
  input: Tensor,
  h0: Tensor,
  B: number,
  T: number,
  sequence: boolean,
  { precision, path, keepProjection = false }: { precision: 'highest' | 'tf32'; path: GruPath; keepProjection?: boolean },
  target?: SequenceTarget,
): { seq: Tensor; hN: Tensor; projection?: Tensor } {
  const layer = stack.layers[l]!;
  const E = stack.ensemble ?? 1;
  const H = stack.hidden;
  const G = 3 * H;
  const perMember = stack.ensemble !== undefined && input.rank === 4;
  let gx: Tensor | undefined;
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
    // The input projection as the backward lays it out, [E, B·T, 3H] in f32: per member, or one member.
    if (keepProjection && gx.dtype === 'f32' && (perMember || E === 1)) {
      const projection = gx;
      gx = undefined;
      return { seq, hN, projection };
    }
    return { seq, hN };
  } catch (err) {
    seq?.dispose();
    hN?.dispose();
    throw err;
  } finally {
    gx?.dispose();
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
 * omitted; none at all then without `zeros`), and the shape of h0 (which the returned hidden state
 * takes). `name` is h0's name in `op`'s messages. Nothing stays allocated when it throws.
 */
export function initialStates(
  s: Session,
  op: string,
  h0: Tensor | null | undefined,
  name: string,
  stack: CheckedStack,
  B: number,
  zeros = true,
): { shape: number[]; layers: Tensor[] } {
  const L = stack.layers.length;
  const E = stack.ensemble;
  const H = stack.hidden;
  const perLayer = E !== undefined ? [E, B, H] : [B, H];
  const shape = L === 1 ? perLayer : [L, ...perLayer];
  const size = (E ?? 1) * B * H;
  if (h0 === undefined || h0 === null) return { shape, layers: zeros ? each(L, () => zeroStates(s, op, stack, B)) : [] };
  if (!sameShape(h0.shape, shape)) {
    throw new InvalidArgumentError(
      `${op}: ${name} must be ${formatShape(shape)} (${L > 1 ? 'layers, ' : ''}${E !== undefined ? 'members, ' : ''}batch, hidden), got ${formatShape(h0.shape)}`,
    );
  }
  if (L === 1) return { shape, layers: [h0.reshape([size])] };
  return { shape, layers: each(L, (l) => sliceLayer(s, op, h0, l, size)) };
}

/** One layer's zero state, dense [(E ·) B · H]. */
function zeroStates(s: Session, op: string, stack: CheckedStack, B: number): Tensor {
  return full(s, op, [(stack.ensemble ?? 1) * B * stack.hidden], 0, stack.dtype);
}

/** `make(0..count-1)`; what was made is disposed again when one fails. */
export function each(count: number, make: (i: number) => Tensor): Tensor[] {
  const made: Tensor[] = [];
  try {
    for (let i = 0; i < count; i++) made.push(make(i));
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  }
  return made;
}

/** Layer l of a stacked [L, ...] state as its own dense tensor. */
export function sliceLayer(s: Session, op: string, h0: Tensor, l: number, size: number): Tensor {
  const src = h0.view;
  return s.produce(op, [size], h0.dtype, (out) => s.backend.copy(out.view, { ...src, shape: [size], offset: src.offset + l * size, size }));
}

/** The final states of every layer (dense, of the stack's dtype) in the shape of h0. */
export function stackFinals(s: Session, finals: readonly Tensor[], stack: Pick<CheckedStack, 'op' | 'dtype'>, shape: readonly number[]): Tensor {
  if (finals.length === 1) return finals[0]!.reshape(shape);
  return s.produce(stack.op, shape, stack.dtype, (out) => {
    const dst = out.view;
    let offset = 0;
    for (const f of finals) {
      s.backend.copy({ ...dst, shape: [f.size], offset: dst.offset + offset, size: f.size }, f.view);
      offset += f.size;
    }
  });
}

/** The tensors of a call by name, as {@link checkWeights} collects them for the dtype vote and its messages. */
interface NamedTensors {
  readonly names: string[];
  readonly tensors: Tensor[];
}

/**
 * Checks the layers (objects with known keys, live tensors of this session) and the call's other
 * tensors (`tensors[i]` named `names[i]`: x, h0, ...; absent ones undefined or null), and infers
 * the stack's dtype, ensemble size E and hidden size H from what most of them agree on, so a
 * message blames the one tensor that disagrees rather than whichever was read first.
 */
export function checkWeights(s: Session, op: string, weights: unknown, names: readonly string[], tensors: readonly unknown[]): CheckedStack {
  if (weights === undefined || weights === null) throw new InvalidArgumentError(`${op}: weights { wIh, wHh, bIh?, bHh?, layerNorm? } are required, got ${describeValue(weights)}`);
  const list: readonly unknown[] = Array.isArray(weights) ? weights : [weights];
  if (list.length === 0) throw new InvalidArgumentError(`${op}: weights must hold at least one layer`);
  const named: NamedTensors = { names: [], tensors: [] };
  for (let i = 0; i < names.length; i++) if (tensors[i] !== null) given(s, op, named, names[i]!, tensors[i]);
  const raw: { w: GruLayerWeights; ln: GruLayerNorm | undefined; where: string }[] = [];
  for (let l = 0; l < list.length; l++) {
    const entry = list[l];
    const where = list.length > 1 ? `layer ${l} ` : '';
    if (typeof entry !== 'object' || entry === null) {
      throw new InvalidArgumentError(`${op}: ${where}weights must be an object { wIh, wHh, bIh?, bHh?, layerNorm? }, got ${describeValue(entry)}`);
    }
    const w = checkOptions<GruLayerWeights>(op, entry, GRU_LAYER_KEYS, list.length > 1 ? `weights[${l}]` : 'weights');
    // Required: undefined is refused as "wIh must be a Tensor, got undefined".
    s.checkTensor(op, w.wIh, `${where}wIh`);
    named.names.push(`${where}wIh`);
    named.tensors.push(w.wIh);
    s.checkTensor(op, w.wHh, `${where}wHh`);
    named.names.push(`${where}wHh`);
    named.tensors.push(w.wHh);
    given(s, op, named, `${where}bIh`, w.bIh);
    given(s, op, named, `${where}bHh`, w.bHh);
    const ln = w.layerNorm === undefined ? undefined : checkOptions<GruLayerNorm>(op, w.layerNorm, GRU_LAYER_NORM_KEYS, `${where}layerNorm`);
    if (ln) {
      given(s, op, named, `${where}layerNorm.weight`, ln.weight);
      given(s, op, named, `${where}layerNorm.bias`, ln.bias);
    }
    raw.push({ w: w as GruLayerWeights, ln, where });
  }
  const dtype = majorityDType(named.tensors);
  if (!GRU_DTYPES.includes(dtype)) throw new InvalidArgumentError(`${op}: the GRU's tensors must be f32, f16 or bf16, got ${dtype}; cast them first, e.g. gpu.cast(x, 'f32')`);
  for (let i = 0; i < named.tensors.length; i++) if (named.tensors[i]!.dtype !== dtype) throw mismatch(op, named.names[i]!, named.tensors[i]!, dtype);

  const first = raw[0]!.w;
  const { ensemble, hidden } = inferSizes(op, first.wIh, first.wHh);
  const E = ensemble;
  const H = hidden;
  const layers: CheckedLayer[] = [];
  for (let l = 0; l < raw.length; l++) {
    const { w, ln, where } = raw[l]!;
    if (!isStacked(w.wHh.shape, E, 3 * H, H)) {
      throw new InvalidArgumentError(`${op}: ${where}wHh must be ${formatShape(stacked(E, 3 * H, H))} (${E !== undefined ? 'E, ' : ''}3H, H with H = ${H}), got ${formatShape(w.wHh.shape)}`);
    }
    const input = w.wIh.shape[w.wIh.rank - 1]!;
    if (!isStacked(w.wIh.shape, E, 3 * H, input) || input === 0) {
      throw new InvalidArgumentError(`${op}: ${where}wIh must be ${formatShape(stacked(E, 3 * H))} + [in], got ${formatShape(w.wIh.shape)}`);
    }
    if (l > 0 && input !== H) {
      throw new InvalidArgumentError(`${op}: layer ${l} takes the previous layer's ${H} states, but its wIh is ${formatShape(w.wIh.shape)}`);
    }
    let layerNorm: CheckedLayer['layerNorm'];
    if (ln) {
      const eps = ln.eps ?? DEFAULT_LN_EPS;
      // As gpu.layerNorm: eps ≥ 0 (0 divides a constant state by zero, as it would there).
      if (typeof eps !== 'number' || !(eps >= 0) || !Number.isFinite(eps)) {
        throw new InvalidArgumentError(`${op}: ${where}layerNorm.eps must be a finite number ≥ 0, got ${describeValue(eps)}`);
      }
      layerNorm = {
        gamma: checkVector(op, where, 'layerNorm.weight', ln.weight, E, H),
        beta: checkVector(op, where, 'layerNorm.bias', ln.bias, E, H),
        eps,
      };
    }
    layers.push({
      wIh: w.wIh,
      wHh: w.wHh,
      bIh: checkVector(op, where, 'bIh', w.bIh, E, 3 * H),
      bHh: checkVector(op, where, 'bHh', w.bHh, E, 3 * H),
      input,
      layerNorm,
    });
  }
  s.assertSupports(op, 'matmul', 'gruRecurrence');
  return { op, ensemble, hidden, dtype, layers };
}

/** Checks `t` as the call's tensor `name` and adds it to `named`; nothing when it is undefined (not given). */
function given(s: Session, op: string, named: NamedTensors, name: string, t: unknown): void {
  if (t === undefined) return;
  s.checkTensor(op, t, name);
  named.names.push(name);
  named.tensors.push(t);
}

/** `t` (when given) after checking that it is [n], or [E, n] for an ensemble. */
function checkVector(op: string, where: string, name: string, t: Tensor | undefined, E: number | undefined, n: number): Tensor | undefined {
  if (t !== undefined && !isStacked(t.shape, E, n)) {
    throw new InvalidArgumentError(`${op}: ${where}${name} must be ${formatShape(stacked(E, n))}, got ${formatShape(t.shape)}`);
  }
  return t;
}

/** Whether `shape` is [d0] or [d0, d1], behind a leading [E] when E is given (an ensemble). */
function isStacked(shape: readonly number[], E: number | undefined, d0: number, d1?: number): boolean {
  const at = E === undefined ? 0 : 1;
  if (E !== undefined && shape[0] !== E) return false;
  return shape.length === at + (d1 === undefined ? 1 : 2) && shape[at] === d0 && (d1 === undefined || shape[at + 1] === d1);
}

/** The shape `dims` behind a leading [E] when E is given: what {@link isStacked} accepts, for messages. */
function stacked(E: number | undefined, ...dims: number[]): number[] {
  return E === undefined ? dims : [E, ...dims];
}

/** The dtype most tensors have; a tie goes to the one seen first (x, the call's input, leads). */
function majorityDType(tensors: readonly Tensor[]): DType {
  let best = tensors[0]!.dtype;
  let agreed = 1;
  while (agreed < tensors.length && tensors[agreed]!.dtype === best) agreed++;
  if (agreed === tensors.length) return best; // all agree: the common case, without counting
  let bestCount = 0;
  for (const t of tensors) {
    let count = 0;
    for (const u of tensors) if (u.dtype === t.dtype) count++;
    if (count > bestCount) [best, bestCount] = [t.dtype, count];
  }
  return best;
}

/**
 * E and H of layer 0. H is what at least two of wIh's rows / 3, wHh's rows / 3 and wHh's
 * columns say (a single wrong dim then shows against the others); E is wHh's leading dim.
 */
function inferSizes(op: string, wIh: Tensor, wHh: Tensor): { ensemble: number | undefined; hidden: number } {
  if (wHh.rank !== 2 && wHh.rank !== 3) {
    throw new InvalidArgumentError(`${op}: wHh must be [3H, H] (or [E, 3H, H] for an ensemble), got ${formatShape(wHh.shape)}`);
  }
  const ensemble = wHh.rank === 3 ? wHh.shape[0]! : undefined;
  const rows = wHh.shape[wHh.rank - 2]!;
  const cols = wHh.shape[wHh.rank - 1]!;
  const byIh = wIh.rank >= 2 ? wIh.shape[wIh.rank - 2]! / 3 : NaN;
  const byRows = rows / 3;
  // Of three votes at most one size has two; each vote counts only as a positive integer.
  const agreed = isSize(byIh) && byIh === byRows ? byIh : isSize(cols) && (byIh === cols || byRows === cols) ? cols : undefined;
  const hidden = agreed ?? (Number.isInteger(byRows) ? byRows : cols);
  if (ensemble === 0 || hidden === 0) throw new InvalidArgumentError(`${op}: wHh ${formatShape(wHh.shape)} is empty`);
  return { ensemble, hidden };
}

function isSize(h: number): boolean {
  return Number.isInteger(h) && h > 0;
}

/** x [B, T, in] ([B, in] for a cell) or, for an ensemble, also with a leading [E]; already a checked tensor of the stack's dtype. */
export function checkInput(op: string, x: Tensor, name: string, stack: CheckedStack, rank: number): void {
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

/** The rollout's output projection; its tensors were checked (alive, dtype) with the weights. */
function checkProjection(op: string, p: unknown, stack: CheckedStack, S: number): { weight: Tensor; bias: Tensor | undefined } {
  if (p === undefined || p === null) throw new InvalidArgumentError(`${op}: outputProjection { weight, bias? } is required`);
  const { weight, bias } = checkOptions<GruOutputProjection>(op, p, GRU_PROJECTION_KEYS, 'outputProjection');
  const E = stack.ensemble;
  const H = stack.hidden;
  if (weight === undefined) {
    throw new InvalidArgumentError(`${op}: outputProjection.weight must be a Tensor ${formatShape([S, H])} (hidden → the ${S} inputs of layer 0), got undefined`);
  }
  const shared = isStacked(weight.shape, undefined, S, H);
  if (!shared && !isStacked(weight.shape, E, S, H)) {
    throw new InvalidArgumentError(
      `${op}: outputProjection.weight must be ${formatShape(stacked(E, S, H))} (hidden → the ${S} inputs of layer 0), got ${formatShape(weight.shape)}`,
    );
  }
  if (bias !== undefined && !isStacked(bias.shape, shared ? undefined : E, S)) {
    throw new InvalidArgumentError(`${op}: outputProjection.bias must be ${formatShape(stacked(shared ? undefined : E, S))}, got ${formatShape(bias.shape)}`);
  }
  return { weight, bias };
}

/** The `precision` option: 'highest' (default) or 'tf32'. */
export function checkPrecision(op: string, precision: unknown): 'highest' | 'tf32' {
  return checkChoice(op, 'precision', precision, PRECISIONS, 'highest');
}

/** The `dropout` option: undefined for none (or p = 0), else p and the seed (default 0). */
export function checkDropout(op: string, dropout: unknown): { p: number; seed: number } | undefined {
  if (dropout === undefined) return undefined;
  const { p, seed } = checkOptions<NonNullable<GruOptions['dropout']>>(op, dropout, GRU_DROPOUT_KEYS, 'dropout');
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new InvalidArgumentError(`${op}: dropout.p must be in [0, 1], got ${describeValue(p)}`);
  const key = validateSeed(op, seed ?? 0);
  return p === 0 ? undefined : { p, seed: key };
}

function mismatch(op: string, name: string, t: Tensor, dtype: DType): InvalidArgumentError {
  const variable = name.split(' ').at(-1)!;
  return new InvalidArgumentError(
    `${op}: dtype mismatch: ${name} is ${t.dtype} but the GRU's other tensors are ${dtype}; there is no implicit promotion, cast it with gpu.cast(${variable}, '${dtype}')`,
  );
}
