/**
 * The optimizer updates of `core/optimizer-params.ts` written out element by element in plain JS,
 * each operation rounded to f32 (Math.fround): what every backend must give bit for bit.
 */
import { roundTo } from '../compute/helpers.js';

export interface SgdRef {
  lr: number;
  momentum: number;
  dampening: number;
  weightDecay: number;
  nesterov: boolean;
}

export interface AdamWRef {
  lr: number;
  betas: [number, number];
  eps: number;
  weightDecay: number;
  amsgrad: boolean;
}

const f = Math.fround;

/** One SGD step of `w` (rounded to `dtype` at the end) in place; `buffer` is undefined before the first step with momentum. */
export function sgdStep(o: SgdRef, w: number[], g: readonly number[], buffer: number[] | undefined, dtype: 'f32' | 'f16' | 'bf16' = 'f32'): number[] | undefined {
  const [lr, wd, mu, dc] = [f(o.lr), f(o.weightDecay), f(o.momentum), f(1 - o.dampening)];
  const first = buffer === undefined;
  const b = buffer ?? new Array<number>(w.length).fill(0);
  const store = roundTo(dtype);
  for (let i = 0; i < w.length; i++) {
    let d = g[i]!;
    if (wd !== 0) d = f(d + f(wd * w[i]!));
    if (mu !== 0) {
      b[i] = first ? d : f(f(mu * b[i]!) + f(dc * d));
      d = o.nesterov ? f(d + f(mu * b[i]!)) : b[i]!;
    }
    w[i] = store(f(w[i]! - f(lr * d)));
  }
  return mu === 0 ? undefined : b;
}

/** One AdamW step (the parameter's step number `t`) of `w` in place, with its state m, v (and vmax). */
export function adamwStep(o: AdamWRef, t: number, w: number[], g: readonly number[], m: number[], v: number[], vmax: number[], dtype: 'f32' | 'f16' | 'bf16' = 'f32'): void {
  const [b1, b2] = o.betas;
  const decay = f(1 - o.lr * o.weightDecay);
  const [b1c, b2f, b2c, eps] = [f(1 - b1), f(b2), f(1 - b2), f(o.eps)];
  const stepSize = f(o.lr / (1 - b1 ** t));
  const c = f(Math.sqrt(1 - b2 ** t));
  const store = roundTo(dtype);
  for (let i = 0; i < w.length; i++) {
    const gi = g[i]!;
    const wi = f(w[i]! * decay);
    m[i] = f(m[i]! + f(b1c * f(gi - m[i]!)));
    v[i] = f(f(b2f * v[i]!) + f(f(b2c * gi) * gi));
    let vhat = v[i]!;
    if (o.amsgrad) {
      vhat = Number.isNaN(vmax[i]!) || Number.isNaN(vhat) ? NaN : Math.max(vmax[i]!, vhat);
      vmax[i] = vhat;
    }
    const denom = f(f(f(Math.sqrt(vhat)) / c) + eps);
    w[i] = store(f(wi - f(stepSize * f(m[i]! / denom))));
  }
}
