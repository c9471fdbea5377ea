/**
 * GRU checks against the float64 reference, written once for any backend: the CPU unit tests,
 * the GPU tests and the conformance suite run the same functions at different sizes. Each
 * returns the norm-wise error and the values it read (inputs depend only on the seed, so two
 * backends given the same case can be compared with each other).
 */
import type { DType } from '../../../src/compute/core/dtype.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { GruPath } from '../../../src/compute/core/gru-params.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { relError, roundTo } from '../compute/helpers.js';
import { flat, nest3, randomLayer, randomTensor, type LayerFixture } from './fixtures.js';
import { refCell, refGru } from './reference.js';

/** Norm-wise bounds on GPU backends (f32 over chained steps: f32 dot products of length H, states rounded each step). */
export const GRU_BOUND = { f32: 2e-5, tf32: 5e-3, f16: 2e-3, bf16: 1.6e-2 } as const;

export interface GruCase {
  batch: number;
  steps: number;
  input: number;
  hidden: number;
  layers?: number;
  ensemble?: number;
  /** Ensemble input [E, B, T, in] instead of one x shared by every member. */
  perMemberInput?: boolean;
  layerNorm?: boolean;
  /** Layers without b_ih and b_hh (default: with). */
  biases?: boolean;
  returnSequences?: boolean;
  dtype?: DType;
  precision?: 'highest' | 'tf32';
  path?: GruPath;
  seed: number;
}

/** Values of a tensor as numbers. */
export function read(t: Tensor): number[] {
  return Array.from(t.toArraySync() as ArrayLike<number>);
}

function disposeAll(fixtures: LayerFixture[], extra: (Tensor | undefined)[]): void {
  for (const f of fixtures) for (const t of f.tensors) t.dispose();
  for (const t of extra) t?.dispose();
}

/** gpu.gru on fresh inputs vs the reference: errors of the output and of the final hidden state. */
export function checkGru(gpu: GpuCompute, c: GruCase): { output: number; hidden: number; got: { output: number[]; hidden: number[] } } {
  const dtype = c.dtype ?? 'f32';
  const L = c.layers ?? 1;
  const E = c.ensemble;
  const members = E ?? 1;
  const { batch: B, steps: T, input: I, hidden: H } = c;
  const layers = Array.from({ length: L }, (_, l) =>
    randomLayer(gpu, l === 0 ? I : H, H, c.seed + 10 * l, dtype, {
      ...(E === undefined ? {} : { ensemble: E }),
      layerNorm: c.layerNorm ?? false,
      biases: c.biases ?? true,
    }),
  );
  const xShape = c.perMemberInput ? [members, B, T, I] : [B, T, I];
  const x = randomTensor(gpu, xShape, c.seed + 100, dtype);
  const hLead = [...(L > 1 ? [L] : []), ...(E === undefined ? [] : [E])];
  const h0 = randomTensor(gpu, [...hLead, B, H], c.seed + 200, dtype, 0.5);
  const returnSequences = c.returnSequences ?? true;
  const result = gpu.gru(x.tensor, h0.tensor, L === 1 ? layers[0]!.weights : layers.map((l) => l.weights), {
    returnSequences,
    precision: c.precision ?? 'highest',
    path: c.path ?? 'auto',
  });
  try {
    const gotOut = read(result.output);
    const gotHidden = read(result.hidden);
    const wantOut: number[] = [];
    const hiddenByMember: number[][][][] = [];
    for (let e = 0; e < members; e++) {
      const xs = nest3(c.perMemberInput ? x.values.slice(e * B * T * I, (e + 1) * B * T * I) : x.values, B, T, I);
      const h0s = Array.from({ length: L }, (_, l) => nest3(h0.values.slice((l * members + e) * B * H, (l * members + e + 1) * B * H), 1, B, H)[0]!);
      const ref = refGru(layers.map((l) => l.members[e]!), xs, h0s, dtype === 'f32' ? (v) => v : roundTo(dtype));
      for (const v of returnSequences ? flat(ref.output) : ref.output.flatMap((steps) => steps[T - 1]!)) wantOut.push(v);
      hiddenByMember.push(ref.hidden);
    }
    // hidden is [L?, E?, B, H]: layer-major.
    const wantHidden: number[] = [];
    for (let l = 0; l < L; l++) for (let e = 0; e < members; e++) for (const v of hiddenByMember[e]![l]!.flat()) wantHidden.push(v);
    const outShape = [...(E === undefined ? [] : [E]), B, ...(returnSequences ? [T] : []), H];
    if (result.output.shape.join() !== outShape.join()) throw new Error(`output shape ${result.output.shape} != ${outShape}`);
    if (result.hidden.shape.join() !== h0.tensor.shape.join()) throw new Error(`hidden shape ${result.hidden.shape} != ${h0.tensor.shape}`);
    return { output: relError(gotOut, wantOut, dtype), hidden: relError(gotHidden, wantHidden, dtype), got: { output: gotOut, hidden: gotHidden } };
  } finally {
    disposeAll(layers, [x.tensor, h0.tensor, result.output, result.hidden]);
  }
}

/** gpu.gruCell vs one reference step (ensemble with a shared x when `ensemble` is set). */
export function checkCell(
  gpu: GpuCompute,
  c: { batch: number; input: number; hidden: number; ensemble?: number; seed: number; dtype?: DType; path?: GruPath },
): { error: number; got: number[] } {
  const dtype = c.dtype ?? 'f32';
  const { batch: B, input: I, hidden: H } = c;
  const members = c.ensemble ?? 1;
  const layer = randomLayer(gpu, I, H, c.seed, dtype, c.ensemble === undefined ? {} : { ensemble: c.ensemble });
  const x = randomTensor(gpu, [B, I], c.seed + 1, dtype);
  const h = randomTensor(gpu, [...(c.ensemble === undefined ? [] : [members]), B, H], c.seed + 2, dtype);
  const out = gpu.gruCell(x.tensor, h.tensor, layer.weights, { path: c.path ?? 'auto' });
  try {
    const want: number[] = [];
    const round = dtype === 'f32' ? (v: number) => v : roundTo(dtype);
    for (let e = 0; e < members; e++) {
      for (let b = 0; b < B; b++) {
        for (const v of refCell(layer.members[e]!, x.values.slice(b * I, (b + 1) * I), h.values.slice((e * B + b) * H, (e * B + b + 1) * H), round)) want.push(v);
      }
    }
    if (out.shape.join() !== h.tensor.shape.join()) throw new Error(`cell shape ${out.shape} != ${h.tensor.shape}`);
    const got = read(out);
    return { error: relError(got, want, dtype), got };
  } finally {
    disposeAll([layer], [x.tensor, h.tensor, out]);
  }
}

/** gpu.gruRollout vs a reference loop (cell, projection, feed back). */
export function checkRollout(
  gpu: GpuCompute,
  c: { batch: number; state: number; hidden: number; steps: number; ensemble?: number; layers?: number; seed: number; path?: GruPath },
): { states: number; hidden: number; got: { states: number[]; hidden: number[] } } {
  const { batch: B, state: S, hidden: H, steps } = c;
  const L = c.layers ?? 1;
  const E = c.ensemble;
  const members = E ?? 1;
  const lead = E === undefined ? [] : [E];
  const layers = Array.from({ length: L }, (_, l) => randomLayer(gpu, l === 0 ? S : H, H, c.seed + 10 * l, 'f32', E === undefined ? {} : { ensemble: E }));
  const state = randomTensor(gpu, [B, S], c.seed + 100, 'f32');
  const h0 = randomTensor(gpu, [...(L > 1 ? [L] : []), ...lead, B, H], c.seed + 200, 'f32', 0.5);
  const pw = randomTensor(gpu, [...lead, S, H], c.seed + 300, 'f32', 1 / Math.sqrt(H));
  const pb = randomTensor(gpu, [...lead, S], c.seed + 301, 'f32', 0.1);
  const result = gpu.gruRollout(state.tensor, h0.tensor, L === 1 ? layers[0]!.weights : layers.map((l) => l.weights), {
    steps,
    outputProjection: { weight: pw.tensor, bias: pb.tensor },
    path: c.path ?? 'auto',
  });
  try {
    const wantStates: number[] = [];
    const finals: number[][][][] = [];
    for (let e = 0; e < members; e++) {
      const hs = Array.from({ length: L }, (_, l) => nest3(h0.values.slice((l * members + e) * B * H, (l * members + e + 1) * B * H), B, 1, H).map((r) => r[0]!));
      const perRow: number[][][] = [];
      for (let b = 0; b < B; b++) {
        let x = state.values.slice(b * S, (b + 1) * S);
        const rows: number[][] = [];
        for (let t = 0; t < steps; t++) {
          let input = x;
          for (let l = 0; l < L; l++) {
            hs[l]![b] = refCell(layers[l]!.members[e]!, input, hs[l]![b]!);
            input = hs[l]![b]!;
          }
          const y: number[] = [];
          for (let s = 0; s < S; s++) {
            let acc = pb.values[e * S + s]!;
            for (let k = 0; k < H; k++) acc += input[k]! * pw.values[(e * S + s) * H + k]!;
            y.push(acc);
          }
          rows.push(y);
          x = y;
        }
        perRow.push(rows);
      }
      for (const v of flat(perRow)) wantStates.push(v);
      finals.push(hs);
    }
    const wantHidden: number[] = [];
    for (let l = 0; l < L; l++) for (let e = 0; e < members; e++) for (const v of finals[e]![l]!.flat()) wantHidden.push(v);
    const shape = [...lead, B, steps, S];
    if (result.states.shape.join() !== shape.join()) throw new Error(`states shape ${result.states.shape} != ${shape}`);
    const got = { states: read(result.states), hidden: read(result.hidden) };
    return { states: relError(got.states, wantStates), hidden: relError(got.hidden, wantHidden), got };
  } finally {
    disposeAll(layers, [state.tensor, h0.tensor, pw.tensor, pb.tensor, result.states, result.hidden]);
  }
}
