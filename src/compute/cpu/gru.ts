/**
 * One GRU layer's recurrence on the CPU (see `GruRecurrenceParams`): h·W_hhᵀ through the
 * backend's product engine, the gates and the update in f64, every stored state rounded to the
 * dtype and read back rounded, as the kernels do.
 */
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, type DType } from '../core/dtype.js';
import type { GruRecurrenceParams } from '../core/gru-params.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import { makeView, type TensorView } from '../core/view.js';
import { CpuBuffer } from './cpu-buffer.js';
import { cpuBuffer, loadFloat } from './element-io.js';

/** Rounds a value to what the dtype stores. */
function rounder(dtype: DType): (v: number) => number {
  switch (dtype) {
    case 'f16':
      return (v) => f16BitsToF32(f32ToF16Bits(v));
    case 'bf16':
      return (v) => bf16BitsToF32(f32ToBf16Bits(v));
    default:
      return Math.fround;
  }
}

/** Writes one element of a float view (element index relative to the view's offset). */
function writer(view: TensorView): (index: number, value: number) => void {
  const buf = cpuBuffer(view);
  const base = view.offset;
  switch (view.dtype) {
    case 'f16':
      return (i, v) => (buf.u16[base + i] = f32ToF16Bits(v));
    case 'bf16':
      return (i, v) => (buf.u16[base + i] = f32ToBf16Bits(v));
    default:
      return (i, v) => (buf.f32[base + i] = v);
  }
}

const sigmoid = (x: number) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));

/** A product the backend runs (its BLAS, or its own kernel). */
export type Product = (params: MatmulParams) => void;

/** f32 storage for `values` as a dense view of `shape` (the view itself when it already is f32). */
function f32View(view: TensorView, shape: readonly number[]): TensorView {
  if (view.dtype === 'f32') return { ...view, shape };
  const values = loadFloat(view);
  const buffer = new CpuBuffer(values.byteLength);
  buffer.f32.set(values);
  return makeView(buffer, 'f32', shape);
}

/**
 * Runs the recurrence step by step: per step one product gh = h·W_hhᵀ for every member and row
 * (through `product`, the backend's matmul engine), then the gates and the update in f64.
 */
export function gruRecurrence(p: GruRecurrenceParams, product: Product): void {
  const { ensemble: E, batch: B, steps: T, hidden: H, slots } = p;
  const G = 3 * H;
  const round = rounder(p.hN.dtype);
  const gx = loadFloat(p.gx);
  const bih = p.bIh ? loadFloat(p.bIh) : undefined;
  const bhh = p.bHh ? loadFloat(p.bHh) : undefined;
  const gamma = p.layerNorm?.gamma ? loadFloat(p.layerNorm.gamma) : undefined;
  const beta = p.layerNorm?.beta ? loadFloat(p.layerNorm.beta) : undefined;
  const writeSeq = writer(p.hSeq);
  const writeLast = writer(p.hN);
  const [gxE, gxB, gxT] = p.gxStrides;
  const [sE, sB, sT] = p.seqStrides;
  // The previous state (rounded as stored) and the step's h·W_hhᵀ, dense f32.
  const state = new CpuBuffer(E * B * H * 4);
  state.f32.set(loadFloat(p.h0));
  const ghBuffer = new CpuBuffer(E * B * G * 4);
  const gh = ghBuffer.f32;
  const prev = state.f32;
  const stepProduct: MatmulParams = {
    a: makeView(state, 'f32', [E, B, H]),
    b: f32View(p.wHh, [E, G, H]),
    out: makeView(ghBuffer, 'f32', [E, B, G]),
    m: B,
    n: G,
    k: H,
    batch: E,
    aBatchStride: B * H,
    bBatchStride: G * H,
    cBatchStride: 0,
    transA: false,
    transB: true,
    alpha: 1,
    beta: 0,
    precision: p.precision,
    engine: 'auto',
    autotune: false,
  };
  const next = new Float64Array(H);
  for (let t = 0; t < T; t++) {
    product(stepProduct);
    for (let e = 0; e < E; e++) {
      for (let b = 0; b < B; b++) {
        const row = (e * B + b) * H;
        const ghRow = (e * B + b) * G;
        const xBase = e * gxE + b * gxB + t * gxT;
        for (let j = 0; j < H; j++) {
          const bi = e * G + j;
          const r = sigmoid(gx[xBase + j]! + (bih ? bih[bi]! : 0) + gh[ghRow + j]! + (bhh ? bhh[bi]! : 0));
          const z = sigmoid(gx[xBase + H + j]! + (bih ? bih[bi + H]! : 0) + gh[ghRow + H + j]! + (bhh ? bhh[bi + H]! : 0));
          const n = Math.tanh(gx[xBase + 2 * H + j]! + (bih ? bih[bi + 2 * H]! : 0) + r * (gh[ghRow + 2 * H + j]! + (bhh ? bhh[bi + 2 * H]! : 0)));
          next[j] = (1 - z) * n + z * prev[row + j]!;
        }
        if (p.layerNorm) normalise(next, H, p.layerNorm.eps, gamma, beta, e * H);
        const seqBase = e * sE + b * sB + (t % slots) * sT;
        for (let j = 0; j < H; j++) {
          const stored = round(next[j]!);
          prev[row + j] = stored;
          writeSeq(seqBase + j, stored);
          if (t === T - 1) writeLast(row + j, stored);
        }
      }
    }
  }
}

/** LayerNorm over H with the biased variance, in place. */
function normalise(v: Float64Array, H: number, eps: number, gamma: Float32Array | undefined, beta: Float32Array | undefined, at: number): void {
  let sum = 0;
  for (let j = 0; j < H; j++) sum += v[j]!;
  const mean = sum / H;
  let squares = 0;
  for (let j = 0; j < H; j++) squares += (v[j]! - mean) ** 2;
  const invStd = 1 / Math.sqrt(squares / H + eps);
  for (let j = 0; j < H; j++) v[j] = (v[j]! - mean) * invStd * (gamma ? gamma[at + j]! : 1) + (beta ? beta[at + j]! : 0);
}
