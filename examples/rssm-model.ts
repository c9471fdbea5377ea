/**
 * The hybrid trainer's RSSM ensemble as a trainable model, and the synthetic data it learns:
 * shared by `train-rssm.ts` (one device) and `train-rssm-data-parallel.ts` (several).
 *
 * Data: trajectories of a known linear dynamical system. A latent state z (8 dims: four damped
 * rotations, z' = A·z) is observed through a fixed random map, o = C·z + noise (16 dims); a
 * trajectory starts from z ~ N(0, 1). The task: from o_0 … o_{T−1}, predict o_1 … o_T.
 *
 * Model: an encoder (linear 16 → 64, tanh), an ensemble of 5 GRUs (hidden 128) over the encoded
 * sequence, and a linear head per member (128 → 16) predicting the next observation. The loss is
 * the mean squared error of every member's predictions (the members learn the same data from
 * different initial weights, as an ensemble does).
 */
import type { GpuCompute, Tensor } from '../src/compute/index.js';

export const OBS = 16;
export const LATENT = 64;
export const HIDDEN = 128;
export const MEMBERS = 5;
const STATE = 8;

/** A small seeded generator (mulberry32), so the data and the initial weights repeat run to run. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draws from `next` (Box–Muller). */
function normal(next: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

/** The system: A (four damped rotations) and C (a fixed random observation map). */
const SYSTEM = (() => {
  const a = new Float64Array(STATE * STATE);
  for (let i = 0; i < STATE / 2; i++) {
    const angle = 0.15 + 0.2 * i;
    const damping = 0.97;
    const [r, c] = [2 * i, 2 * i + 1];
    a[r * STATE + r] = damping * Math.cos(angle);
    a[r * STATE + c] = -damping * Math.sin(angle);
    a[c * STATE + r] = damping * Math.sin(angle);
    a[c * STATE + c] = damping * Math.cos(angle);
  }
  const n = normal(random(7));
  const c = Float64Array.from({ length: OBS * STATE }, () => n() / Math.sqrt(STATE));
  return { a, c };
})();

/** One batch: observations [batch, steps, OBS] and the next observations [batch, steps, OBS] (host arrays). */
export function batch(batchSize: number, steps: number, seed: number): { inputs: Float32Array; targets: Float32Array } {
  const n = normal(random(seed));
  const inputs = new Float32Array(batchSize * steps * OBS);
  const targets = new Float32Array(batchSize * steps * OBS);
  for (let b = 0; b < batchSize; b++) {
    let z = Float64Array.from({ length: STATE }, () => n());
    for (let t = 0; t <= steps; t++) {
      for (let o = 0; o < OBS; o++) {
        let v = 0.01 * n();
        for (let k = 0; k < STATE; k++) v += SYSTEM.c[o * STATE + k]! * z[k]!;
        if (t < steps) inputs[(b * steps + t) * OBS + o] = v;
        if (t > 0) targets[(b * steps + t - 1) * OBS + o] = v;
      }
      const next = new Float64Array(STATE);
      for (let r = 0; r < STATE; r++) for (let k = 0; k < STATE; k++) next[r]! += SYSTEM.a[r * STATE + k]! * z[k]!;
      z = next;
    }
  }
  return { inputs, targets };
}

/** The model's parameters (leaves that require grad), PyTorch's default initialisation scale. */
export interface RssmParameters {
  encoderWeight: Tensor;
  encoderBias: Tensor;
  wIh: Tensor;
  wHh: Tensor;
  bIh: Tensor;
  bHh: Tensor;
  headWeight: Tensor;
  headBias: Tensor;
}

/** Fresh parameters on `gpu`, from `seed`. */
export function initParameters(gpu: GpuCompute, seed: number): RssmParameters {
  const next = random(seed);
  const uniform = (shape: number[], fanIn: number) => {
    const bound = 1 / Math.sqrt(fanIn);
    const values = Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (2 * next() - 1) * bound);
    return gpu.tensor(values, shape).requiresGrad_();
  };
  return {
    encoderWeight: uniform([LATENT, OBS], OBS),
    encoderBias: uniform([LATENT], OBS),
    wIh: uniform([MEMBERS, 3 * HIDDEN, LATENT], HIDDEN),
    wHh: uniform([MEMBERS, 3 * HIDDEN, HIDDEN], HIDDEN),
    bIh: uniform([MEMBERS, 3 * HIDDEN], HIDDEN),
    bHh: uniform([MEMBERS, 3 * HIDDEN], HIDDEN),
    headWeight: uniform([MEMBERS, OBS, HIDDEN], HIDDEN),
    headBias: uniform([MEMBERS, 1, OBS], HIDDEN),
  };
}

/** Every parameter, in a fixed order. */
export function parameterList(p: RssmParameters): Tensor[] {
  return [p.encoderWeight, p.encoderBias, p.wIh, p.wHh, p.bIh, p.bHh, p.headWeight, p.headBias];
}

/**
 * The loss of one batch (`inputs` and `targets` [batch, steps, OBS] tensors): every member's mean
 * squared error, averaged. Its intermediates belong to the caller's scope.
 */
export function loss(gpu: GpuCompute, p: RssmParameters, inputs: Tensor, targets: Tensor): Tensor {
  const [B, T] = inputs.shape as [number, number, number];
  const latent = gpu.linear(inputs, p.encoderWeight, p.encoderBias, 'tanh'); // [B, T, LATENT]
  const { output } = gpu.gru(latent, undefined, { wIh: p.wIh, wHh: p.wHh, bIh: p.bIh, bHh: p.bHh }); // [E, B, T, H]
  const states = output.reshape([MEMBERS, B * T, HIDDEN]);
  const predicted = gpu.add(gpu.matmul(states, p.headWeight, { transB: true }), p.headBias); // [E, B·T, OBS]
  const wanted = targets.reshape([1, B * T, OBS]);
  const error = gpu.sub(predicted, wanted);
  return gpu.mean(gpu.mul(error, error));
}
