/**
 * One GRU layer's recurrence on the CPU (see `GruRecurrenceParams`): h·W_hhᵀ, the gates and the
 * update in f64, every stored state rounded to the dtype and read back rounded, as the kernels do.
 */
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, type DType } from '../core/dtype.js';
import type { GruRecurrenceParams } from '../core/gru-params.js';
import type { TensorView } from '../core/view.js';
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

export function gruRecurrence(p: GruRecurrenceParams): void {
  const { ensemble: E, batch: B, steps: T, hidden: H, slots } = p;
  const G = 3 * H;
  const round = rounder(p.hN.dtype);
  const gx = loadFloat(p.gx);
  const w = loadFloat(p.wHh);
  const bih = p.bIh ? loadFloat(p.bIh) : undefined;
  const bhh = p.bHh ? loadFloat(p.bHh) : undefined;
  const h0 = loadFloat(p.h0);
  const gamma = p.layerNorm?.gamma ? loadFloat(p.layerNorm.gamma) : undefined;
  const beta = p.layerNorm?.beta ? loadFloat(p.layerNorm.beta) : undefined;
  const writeSeq = writer(p.hSeq);
  const writeLast = writer(p.hN);
  const [gxE, gxB, gxT] = p.gxStrides;
  const [sE, sB, sT] = p.seqStrides;
  const prev = new Float64Array(H);
  const next = new Float64Array(H);
  for (let e = 0; e < E; e++) {
    const wBase = e * G * H;
    for (let b = 0; b < B; b++) {
      const row = (e * B + b) * H;
      for (let j = 0; j < H; j++) prev[j] = h0[row + j]!;
      for (let t = 0; t < T; t++) {
        const xBase = e * gxE + b * gxB + t * gxT;
        for (let j = 0; j < H; j++) {
          let hr = 0;
          let hz = 0;
          let hn = 0;
          const wr = wBase + j * H;
          const wz = wBase + (H + j) * H;
          const wn = wBase + (2 * H + j) * H;
          for (let k = 0; k < H; k++) {
            const h = prev[k]!;
            hr += h * w[wr + k]!;
            hz += h * w[wz + k]!;
            hn += h * w[wn + k]!;
          }
          const bi = e * G + j;
          const r = sigmoid(gx[xBase + j]! + (bih ? bih[bi]! : 0) + hr + (bhh ? bhh[bi]! : 0));
          const z = sigmoid(gx[xBase + H + j]! + (bih ? bih[bi + H]! : 0) + hz + (bhh ? bhh[bi + H]! : 0));
          const n = Math.tanh(gx[xBase + 2 * H + j]! + (bih ? bih[bi + 2 * H]! : 0) + r * (hn + (bhh ? bhh[bi + 2 * H]! : 0)));
          next[j] = (1 - z) * n + z * prev[j]!;
        }
        if (p.layerNorm) normalise(next, H, p.layerNorm.eps, gamma, beta, e * H);
        const seqBase = e * sE + b * sB + (t % slots) * sT;
        for (let j = 0; j < H; j++) {
          const stored = round(next[j]!);
          prev[j] = stored;
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
