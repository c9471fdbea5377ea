/**
 * GRU training cases for the backward tests (CPU unit tests, conformance, GPU): the values of a
 * case (x, h0, every layer's weights, and the gradients arriving at the output and the hidden
 * state), a float64 forward of the whole stack written from PyTorch's equations (layer by layer,
 * member by member, with the dropout masks the library draws), and the float64 loss
 * L = Σ gOut ∘ output + Σ gHidden ∘ hidden whose gradient the backward computes.
 */
import type { DType } from '../../../src/compute/core/dtype.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { GruLayerWeights } from '../../../src/compute/ops/gru.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { randomValues } from '../compute/helpers.js';
import { refCell, type RefLayer } from './reference.js';

export interface TrainCase {
  layers: number;
  /** Members of an ensemble (weights get a leading [E]); absent: one GRU. */
  ensemble?: number;
  /** With an ensemble: one x [B, T, in] for every member instead of [E, B, T, in]. */
  sharedInput?: boolean;
  batch: number;
  steps: number;
  input: number;
  hidden: number;
  /** Per layer, whether it has biases (default: all do). */
  biases?: readonly boolean[];
  /** Whether h0 is given (else zeros, and no gradient for it). */
  h0: boolean;
  returnSequences: boolean;
  dropout?: { p: number; seed: number };
  /** Which results a gradient arrives at. */
  grads: 'output' | 'hidden' | 'both';
}

/** One layer's values (every member's, concatenated as the tensors hold them). */
export interface LayerValues {
  wIh: number[];
  wHh: number[];
  bIh?: number[];
  bHh?: number[];
}

/** The inputs of a case and the gradients arriving at its results. */
export interface TrainValues {
  x: number[];
  h0?: number[];
  layers: LayerValues[];
  gOut?: number[];
  gHidden?: number[];
}

export function describeTrainCase(c: TrainCase): string {
  const ens = c.ensemble === undefined ? '' : ` E${c.ensemble}${c.sharedInput ? ' shared x' : ''}`;
  const flags = [
    c.h0 ? 'h0' : 'no h0',
    c.returnSequences ? 'sequence' : 'last state',
    c.biases?.includes(false) ? 'some layers without bias' : '',
    c.dropout ? `dropout ${c.dropout.p}` : '',
    `grad of ${c.grads}`,
  ].filter(Boolean);
  return `L${c.layers}${ens} B${c.batch} T${c.steps} in${c.input} H${c.hidden} (${flags.join(', ')})`;
}

/** Shapes of a case's tensors, as the library takes and returns them. */
export function trainShapes(c: TrainCase) {
  const lead = c.ensemble === undefined ? [] : [c.ensemble];
  const H = c.hidden;
  const xShape = c.ensemble !== undefined && !c.sharedInput ? [c.ensemble, c.batch, c.steps, c.input] : [c.batch, c.steps, c.input];
  const state = [...lead, c.batch, H];
  const hidden = c.layers === 1 ? state : [c.layers, ...state];
  const output = c.returnSequences ? [...lead, c.batch, c.steps, H] : state;
  const layer = (l: number) => ({ wIh: [...lead, 3 * H, l === 0 ? c.input : H], wHh: [...lead, 3 * H, H], b: [...lead, 3 * H] });
  return { x: xShape, h0: hidden, hidden, output, layer };
}

const size = (shape: readonly number[]) => shape.reduce((a, d) => a * d, 1);

/** Fresh values for a case (f32-representable, so tensors hold them exactly); weights at PyTorch's scale 1/√H. */
export function trainValues(c: TrainCase, seed: number): TrainValues {
  const shapes = trainShapes(c);
  let next = seed;
  const values = (shape: readonly number[], scale = 1) => randomValues(size(shape), next++, scale).map(Math.fround);
  const w = 1 / Math.sqrt(c.hidden);
  const v: TrainValues = {
    x: values(shapes.x),
    layers: Array.from({ length: c.layers }, (_, l) => {
      const s = shapes.layer(l);
      const layer: LayerValues = { wIh: values(s.wIh, w), wHh: values(s.wHh, w) };
      if (c.biases?.[l] !== false) {
        layer.bIh = values(s.b, w);
        layer.bHh = values(s.b, w);
      }
      return layer;
    }),
  };
  if (c.h0) v.h0 = values(shapes.h0, 0.5);
  if (c.grads !== 'hidden') v.gOut = values(shapes.output);
  if (c.grads !== 'output') v.gHidden = values(shapes.hidden);
  return v;
}

/** The case's tensors on `gpu` in `dtype` (the caller disposes them). */
export function trainTensors(gpu: GpuCompute, c: TrainCase, v: TrainValues, dtype: Exclude<DType, 'i32'> = 'f32') {
  const shapes = trainShapes(c);
  const all: Tensor[] = [];
  const make = (values: readonly number[], shape: readonly number[]) => {
    const t = gpu.tensor(Float32Array.from(values), [...shape], dtype);
    all.push(t);
    return t;
  };
  const layers: GruLayerWeights[] = v.layers.map((layer, l) => {
    const s = shapes.layer(l);
    const w: GruLayerWeights = { wIh: make(layer.wIh, s.wIh), wHh: make(layer.wHh, s.wHh) };
    if (layer.bIh) w.bIh = make(layer.bIh, s.b);
    if (layer.bHh) w.bHh = make(layer.bHh, s.b);
    return w;
  });
  return {
    x: make(v.x, shapes.x),
    h0: v.h0 ? make(v.h0, shapes.h0) : undefined,
    weights: c.layers === 1 ? layers[0]! : layers,
    gOut: v.gOut ? make(v.gOut, shapes.output) : undefined,
    gHidden: v.gHidden ? make(v.gHidden, shapes.hidden) : undefined,
    dispose: () => all.forEach((t) => t.dispose()),
  };
}

/**
 * The dropout masks the library applies to each layer's emitted states, as multipliers (0 or
 * f32(1/(1 − p))): `gpu.dropout` of ones with the forward's seed for the layer. Undefined without dropout.
 */
export function dropoutMasks(gpu: GpuCompute, c: TrainCase): Float64Array[] | undefined {
  if (!c.dropout) return undefined;
  const shapes = trainShapes(c);
  const lead = c.ensemble === undefined ? [] : [c.ensemble];
  return Array.from({ length: c.layers }, (_, l) => {
    const shape = l === c.layers - 1 ? shapes.output : [...lead, c.batch, c.steps, c.hidden];
    using ones = gpu.ones(shape);
    using dropped = gpu.dropout(ones, c.dropout!.p, c.dropout!.seed + l);
    return Float64Array.from(dropped.toArraySync() as Float32Array);
  });
}

/** output and hidden of the case in float64, shaped (flat) as the library returns them. */
export function forward64(c: TrainCase, v: TrainValues, masks: Float64Array[] | undefined): { output: Float64Array; hidden: Float64Array } {
  const { batch: B, steps: T, hidden: H, layers: L } = c;
  const E = c.ensemble ?? 1;
  const shapes = trainShapes(c);
  const output = new Float64Array(size(shapes.output));
  const hidden = new Float64Array(size(shapes.hidden));
  for (let e = 0; e < E; e++) {
    // inputs[b][t]: what the current layer reads.
    let inputs: number[][][] = Array.from({ length: B }, (_, b) =>
      Array.from({ length: T }, (_, t) => {
        const I = c.input;
        const at = (((c.sharedInput || c.ensemble === undefined ? 0 : e) * B + b) * T + t) * I;
        return v.x.slice(at, at + I);
      }),
    );
    for (let l = 0; l < L; l++) {
      const I = l === 0 ? c.input : H;
      const lv = v.layers[l]!;
      const member = (values: readonly number[] | undefined, n: number) => values?.slice(e * n, (e + 1) * n);
      const ref: RefLayer = {
        wIh: member(lv.wIh, 3 * H * I)!,
        wHh: member(lv.wHh, 3 * H * H)!,
        input: I,
        hidden: H,
        ...(lv.bIh ? { bIh: member(lv.bIh, 3 * H)! } : {}),
        ...(lv.bHh ? { bHh: member(lv.bHh, 3 * H)! } : {}),
      };
      const last = l === L - 1;
      const next: number[][][] = [];
      for (let b = 0; b < B; b++) {
        const stateAt = ((l * E + e) * B + b) * H;
        let h = v.h0 ? v.h0.slice(stateAt, stateAt + H) : new Array<number>(H).fill(0);
        const row: number[][] = [];
        for (let t = 0; t < T; t++) {
          h = refCell(ref, inputs[b]![t]!, h);
          // The emitted state, through the layer's dropout mask: the next layer's input, or the output.
          const at = ((e * B + b) * T + t) * H;
          if (!last) row.push(h.map((value, j) => value * (masks ? masks[l]![at + j]! : 1)));
          else if (c.returnSequences) for (let j = 0; j < H; j++) output[at + j] = h[j]! * (masks ? masks[l]![at + j]! : 1);
        }
        for (let j = 0; j < H; j++) hidden[stateAt + j] = h[j]!;
        if (last && !c.returnSequences) {
          const at = (e * B + b) * H;
          for (let j = 0; j < H; j++) output[at + j] = h[j]! * (masks ? masks[l]![at + j]! : 1);
        }
        next.push(row);
      }
      inputs = next;
    }
  }
  return { output, hidden };
}

/** L = Σ gOut ∘ output + Σ gHidden ∘ hidden, in float64. */
export function loss64(c: TrainCase, v: TrainValues, masks: Float64Array[] | undefined): number {
  const { output, hidden } = forward64(c, v, masks);
  let sum = 0;
  if (v.gOut) for (let i = 0; i < output.length; i++) sum += v.gOut[i]! * output[i]!;
  if (v.gHidden) for (let i = 0; i < hidden.length; i++) sum += v.gHidden[i]! * hidden[i]!;
  return sum;
}

/** Every differentiable input of a case, by name, as the arrays of `v` (x, h0, and each layer's weights). */
export function parameters(v: TrainValues): [string, number[]][] {
  const list: [string, number[]][] = [['x', v.x]];
  if (v.h0) list.push(['h0', v.h0]);
  v.layers.forEach((layer, l) => {
    for (const key of ['wIh', 'wHh', 'bIh', 'bHh'] as const) if (layer[key]) list.push([`layers[${l}].${key}`, layer[key]!]);
  });
  return list;
}

/** The central difference of the float64 loss at index `i` of `array` (one of `v`'s). */
export function centralDifference(c: TrainCase, v: TrainValues, masks: Float64Array[] | undefined, array: number[], i: number, eps: number): number {
  const original = array[i]!;
  array[i] = original + eps;
  const up = loss64(c, v, masks);
  array[i] = original - eps;
  const down = loss64(c, v, masks);
  array[i] = original;
  return (up - down) / (2 * eps);
}
