/**
 * One GRU layer's backward recurrence on the CPU (see `GruBackwardParams`): per step, from the
 * last to the first, the gradient sent back by the step after it (dh·z + dGh·W_hh, the product
 * through the backend's product engine in f32), then the gates recomputed and their gradients in
 * f64, written once as f32.
 */
import type { GruBackwardParams } from '../core/gru-backward-params.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import { makeView } from '../core/view.js';
import { CpuBuffer } from './cpu-buffer.js';
import { floatTarget, loadFloat, storeFloat } from './element-io.js';
import type { Product } from './gru.js';

const sigmoid = (x: number) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));

export function gruBackwardRecurrence(p: GruBackwardParams, product: Product): void {
  const { ensemble: E, batch: B, steps: T, hidden: H } = p;
  const G = 3 * H;
  const gx = loadFloat(p.gx);
  const hW = loadFloat(p.hW);
  const h0W = loadFloat(p.h0W);
  const hSeq = loadFloat(p.hSeq);
  const h0 = loadFloat(p.h0);
  const bih = p.bIh ? loadFloat(p.bIh) : undefined;
  const bhh = p.bHh ? loadFloat(p.bHh) : undefined;
  const dhSeq = p.dhSeq ? loadFloat(p.dhSeq) : undefined;
  const dhN = p.dhN ? loadFloat(p.dhN) : undefined;
  const dGx = floatTarget(p.dGx);
  const dHW = floatTarget(p.dHW);
  const dH0W = floatTarget(p.dH0W);
  // The step's dGh (dense, the next product's operand), the product's result, and dh·z.
  const gates = new CpuBuffer(E * B * G * 4);
  const sent = new CpuBuffer(E * B * H * 4);
  const carried = new Float64Array(E * B * H);
  const backProduct: MatmulParams = {
    a: makeView(gates, 'f32', [E, B, G]),
    b: { ...p.wHh, shape: [E, G, H] },
    out: makeView(sent, 'f32', [E, B, H]),
    m: B,
    n: H,
    k: G,
    batch: E,
    aBatchStride: B * G,
    bBatchStride: G * H,
    cBatchStride: 0,
    transA: false,
    transB: false,
    alpha: 1,
    beta: 0,
    precision: p.precision,
    engine: 'auto',
    autotune: false,
  };
  const g = gates.f32;
  // The last slot of dHW would serve a step T that does not exist.
  for (let e = 0; e < E; e++) for (let b = 0; b < B; b++) dHW.fill(0, ((e * B + b) * T + T - 1) * G, ((e * B + b) * T + T) * G);
  for (let t = T - 1; t >= 0; t--) {
    if (t < T - 1) product(backProduct);
    const back = sent.f32;
    for (let e = 0; e < E; e++) {
      for (let b = 0; b < B; b++) {
        const row = e * B + b;
        const seqRow = row * T;
        const xAt = (seqRow + t) * G;
        const hAt = t > 0 ? (seqRow + t - 1) * G : row * G;
        const gh = t > 0 ? hW : h0W;
        const out = t > 0 ? dHW : dH0W;
        for (let j = 0; j < H; j++) {
          const bi = e * G + j;
          const unit = row * H + j;
          const prev = t > 0 ? hSeq[(seqRow + t - 1) * H + j]! : h0[unit]!;
          let dh = dhSeq ? dhSeq[(seqRow + t) * H + j]! : 0;
          dh += t === T - 1 ? (dhN ? dhN[unit]! : 0) : carried[unit]! + back[unit]!;
          const r = sigmoid(gx[xAt + j]! + (bih ? bih[bi]! : 0) + gh[hAt + j]! + (bhh ? bhh[bi]! : 0));
          const z = sigmoid(gx[xAt + H + j]! + (bih ? bih[bi + H]! : 0) + gh[hAt + H + j]! + (bhh ? bhh[bi + H]! : 0));
          const ghn = gh[hAt + 2 * H + j]! + (bhh ? bhh[bi + 2 * H]! : 0);
          const n = Math.tanh(gx[xAt + 2 * H + j]! + (bih ? bih[bi + 2 * H]! : 0) + r * ghn);
          const daN = dh * (1 - z) * (1 - n * n);
          const daZ = dh * (prev - n) * z * (1 - z);
          const daR = daN * ghn * r * (1 - r);
          dGx[xAt + j] = daR;
          dGx[xAt + H + j] = daZ;
          dGx[xAt + 2 * H + j] = daN;
          out[hAt + j] = g[row * G + j] = daR;
          out[hAt + H + j] = g[row * G + H + j] = daZ;
          out[hAt + 2 * H + j] = g[row * G + 2 * H + j] = daN * r;
          carried[unit] = dh * z;
        }
      }
    }
  }
  product(backProduct);
  const dh0 = floatTarget(p.dh0);
  const back = sent.f32;
  for (let i = 0; i < E * B * H; i++) dh0[i] = carried[i]! + back[i]!;
  storeFloat(p.dGx, dGx);
  storeFloat(p.dHW, dHW);
  storeFloat(p.dH0W, dH0W);
  storeFloat(p.dh0, dh0);
}
