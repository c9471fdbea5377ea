/**
 * Gradient checks (see `gradcheck.ts`) of the sequence ops through autograd: attention (causal,
 * GQA, padded keys, seqQ ≠ seqK) in q, k and v; gru (stacks, ensembles with a leading member dim,
 * biases, h0; through the output sequence and the final states) in x, h0 and every weight; and
 * gruCell as a one-step gru. The float64 references are the textbook formulas. Also: gruRollout
 * and svd still refuse an input that requires grad.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { cpuCompute, freshSeed, randomValues } from '../compute/helpers.js';
import { gradcheck, product } from './gradcheck.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

interface AttentionCase {
  B: number;
  Hq: number;
  Hkv: number;
  Sq: number;
  Sk: number;
  D: number;
  causal: boolean;
  keyLengths?: number[];
}

/** softmax(scale·q·kᵀ + mask)·v in float64 (top-left causal; keys at or past keyLengths[b] masked; a row with no key gives 0). */
function attentionRef(c: AttentionCase, q: Float64Array, k: Float64Array, v: Float64Array): Float64Array {
  const { B, Hq, Hkv, Sq, Sk, D } = c;
  const out = new Float64Array(B * Hq * Sq * D);
  const scale = 1 / Math.sqrt(D);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hq; h++) {
      const kh = Math.floor(h / (Hq / Hkv));
      for (let i = 0; i < Sq; i++) {
        const limit = Math.min(c.keyLengths?.[b] ?? Sk, Sk, c.causal ? i + 1 : Sk);
        const scores: number[] = [];
        for (let j = 0; j < limit; j++) {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += q[((b * Hq + h) * Sq + i) * D + d]! * k[((b * Hkv + kh) * Sk + j) * D + d]!;
          scores.push(scale * dot);
        }
        if (scores.length === 0) continue;
        const max = Math.max(...scores);
        const weights = scores.map((s) => Math.exp(s - max));
        const total = weights.reduce((a, w) => a + w, 0);
        for (let d = 0; d < D; d++) {
          let acc = 0;
          for (let j = 0; j < limit; j++) acc += weights[j]! * v[((b * Hkv + kh) * Sk + j) * D + d]!;
          out[((b * Hq + h) * Sq + i) * D + d] = acc / total;
        }
      }
    }
  }
  return out;
}

describe('attention through autograd', () => {
  const cases: AttentionCase[] = [
    { B: 1, Hq: 2, Hkv: 2, Sq: 5, Sk: 5, D: 4, causal: false },
    { B: 2, Hq: 4, Hkv: 2, Sq: 3, Sk: 7, D: 8, causal: true },
    { B: 2, Hq: 3, Hkv: 1, Sq: 6, Sk: 4, D: 5, causal: false, keyLengths: [3, 4] },
  ];
  for (const c of cases) {
    it(`B${c.B} Hq${c.Hq} Hkv${c.Hkv} Sq${c.Sq} Sk${c.Sk} D${c.D}${c.causal ? ' causal' : ''}${c.keyLengths ? ' padded' : ''}`, () => {
      const seed = freshSeed();
      const qShape = [c.B, c.Hq, c.Sq, c.D];
      const kShape = [c.B, c.Hkv, c.Sk, c.D];
      gradcheck(g, {
        label: `attention ${JSON.stringify(c)}`,
        inputs: [
          { shape: qShape, values: randomValues(product(qShape), seed) },
          { shape: kShape, values: randomValues(product(kShape), seed + 2) },
          { shape: kShape, values: randomValues(product(kShape), seed + 3) },
        ],
        forward: (gg, [q, k, v]) => gg.attention(q!, k!, v!, { causal: c.causal, ...(c.keyLengths ? { keyLengths: c.keyLengths } : {}) }) as Tensor,
        reference: ([q, k, v]) => attentionRef(c, q!, k!, v!),
        tolerance: 1e-4,
        seed,
      });
    });
  }

  it('returns the log-sum-exp asked for as a constant, and the gradient matches the one without it', () => {
    using q = g.tensor(randomValues(24, 1), [1, 2, 3, 4]).requiresGrad_();
    using k = g.tensor(randomValues(24, 2), [1, 2, 3, 4]);
    const { out, lse } = g.attention(q, k, k, { returnLogSumExp: true }) as { out: Tensor; lse: Tensor };
    expect(out.requiresGrad).toBe(true);
    expect(lse.requiresGrad).toBe(false);
    using loss = g.scope(() => g.sum(g.mul(out, out)));
    out.dispose();
    lse.dispose();
    loss.backward();
    const first = Array.from(q.grad!.toArraySync());
    q.zeroGrad();
    using again = g.scope(() => {
      const o = g.attention(q, k, k) as Tensor;
      return g.sum(g.mul(o, o));
    });
    again.backward();
    expect(Array.from(q.grad!.toArraySync())).toEqual(first);
  });
});

interface GruCase {
  E?: number;
  L: number;
  B: number;
  T: number;
  I: number;
  H: number;
  biases: boolean;
  h0: boolean;
}

/** A GRU stack in float64 (PyTorch's gates), returning [output sequence of the last layer, final states of every layer] flattened together. */
function gruRef(c: GruCase, x: Float64Array, params: Float64Array[], h0: Float64Array | undefined): Float64Array {
  const E = c.E ?? 1;
  const { L, B, T, H } = c;
  const sig = (v: number) => 1 / (1 + Math.exp(-v));
  const outputs: number[] = [];
  const finals: number[][] = [];
  for (let e = 0; e < E; e++) {
    let input: number[][][] = Array.from({ length: B }, (_, b) => Array.from({ length: T }, (_, t) => Array.from(x.subarray((b * T + t) * c.I, (b * T + t + 1) * c.I))));
    for (let l = 0; l < L; l++) {
      const per = c.biases ? 4 : 2;
      const [wIh, wHh, bIh, bHh] = params.slice(l * per, l * per + per);
      const inSize = l === 0 ? c.I : H;
      const finalsOfLayer: number[] = [];
      const next: number[][][] = [];
      for (let b = 0; b < B; b++) {
        let h = Array.from({ length: H }, (_, j) => (h0 ? h0[((l * E + e) * B + b) * H + j]! : 0));
        const seq: number[][] = [];
        for (let t = 0; t < T; t++) {
          const xt = input[b]![t]!;
          const gate = (g3: number, j: number, w: Float64Array, vec: number[], n: number, bias: Float64Array | undefined) => {
            let acc = bias ? bias[e * 3 * H + g3 * H + j]! : 0;
            for (let k = 0; k < n; k++) acc += w[(e * 3 * H + g3 * H + j) * n + k]! * vec[k]!;
            return acc;
          };
          h = h.map((hj, j) => {
            const r = sig(gate(0, j, wIh!, xt, inSize, bIh) + gate(0, j, wHh!, h, H, bHh));
            const z = sig(gate(1, j, wIh!, xt, inSize, bIh) + gate(1, j, wHh!, h, H, bHh));
            const n = Math.tanh(gate(2, j, wIh!, xt, inSize, bIh) + r * gate(2, j, wHh!, h, H, bHh));
            return (1 - z) * n + z * hj;
          });
          seq.push(h);
        }
        next.push(seq);
        finalsOfLayer.push(...h);
      }
      finals[l * E + e] = finalsOfLayer;
      input = next;
    }
    for (const row of input) for (const step of row) outputs.push(...step);
  }
  return Float64Array.from([...outputs, ...finals.flat()]);
}

describe('gru through autograd', () => {
  const cases: GruCase[] = [
    { L: 1, B: 3, T: 4, I: 5, H: 6, biases: true, h0: true },
    { L: 2, B: 2, T: 3, I: 4, H: 5, biases: false, h0: false },
    { E: 2, L: 1, B: 2, T: 3, I: 3, H: 4, biases: true, h0: true },
  ];
  for (const c of cases) {
    it(`${c.E ? `ensemble ${c.E}, ` : ''}${c.L} layer(s) b${c.B} T${c.T} in${c.I} h${c.H}${c.biases ? '' : ', no biases'}${c.h0 ? ', h0' : ''}`, () => {
      const seed = freshSeed();
      const lead = c.E ? [c.E] : [];
      const weightShapes = Array.from({ length: c.L }, (_, l) => [
        [...lead, 3 * c.H, l === 0 ? c.I : c.H],
        [...lead, 3 * c.H, c.H],
        ...(c.biases ? [[...lead, 3 * c.H], [...lead, 3 * c.H]] : []),
      ]).flat();
      const h0Shape = [...(c.L > 1 ? [c.L] : []), ...lead, c.B, c.H];
      const inputs = [
        { shape: [c.B, c.T, c.I], values: randomValues(c.B * c.T * c.I, seed) },
        ...weightShapes.map((shape, i) => ({ shape, values: randomValues(product(shape), seed + 10 + i, 0.5) })),
        ...(c.h0 ? [{ shape: h0Shape, values: randomValues(product(h0Shape), seed + 99, 0.5) }] : []),
      ];
      const per = c.biases ? 4 : 2;
      gradcheck(g, {
        label: `gru ${JSON.stringify(c)}`,
        inputs,
        forward: (gg, t) => {
          const layers = Array.from({ length: c.L }, (_, l) => {
            const [wIh, wHh, bIh, bHh] = t.slice(1 + l * per, 1 + l * per + per);
            return { wIh: wIh!, wHh: wHh!, ...(c.biases ? { bIh: bIh!, bHh: bHh! } : {}) };
          });
          const { output, hidden } = gg.gru(t[0]!, c.h0 ? t[t.length - 1]! : undefined, c.L === 1 ? layers[0]! : layers);
          return concat(gg, output, hidden);
        },
        reference: (x) => gruRef(c, x[0]!, x.slice(1, 1 + weightShapes.length), c.h0 ? x[x.length - 1] : undefined),
        tolerance: 1e-4,
        seed,
      });
    });
  }

  it('gruCell is a one-step gru: the same gradients', () => {
    const seed = freshSeed();
    using x = g.tensor(randomValues(12, seed), [3, 4]).requiresGrad_();
    using h = g.tensor(randomValues(15, seed + 1), [3, 5]).requiresGrad_();
    using wIh = g.tensor(randomValues(60, seed + 2, 0.5), [15, 4]).requiresGrad_();
    using wHh = g.tensor(randomValues(75, seed + 3, 0.5), [15, 5]).requiresGrad_();
    const grads = (step: () => Tensor) => {
      for (const t of [x, h, wIh, wHh]) t.zeroGrad();
      using loss = g.scope(() => g.sum(g.mul(step(), step())));
      loss.backward();
      return [x, h, wIh, wHh].map((t) => Array.from(t.grad!.toArraySync()));
    };
    const cell = grads(() => g.gruCell(x, h, { wIh, wHh }));
    const sequence = grads(() => g.gru(x.reshape([3, 1, 4]), h, { wIh, wHh }).hidden);
    expect(cell).toEqual(sequence);
  });

  it('gruRollout and svd still refuse an input that requires grad', () => {
    using state = g.ones([2, 3]).requiresGrad_();
    using wIh = g.ones([6, 3]);
    using wHh = g.ones([6, 2]);
    using weight = g.ones([3, 2]);
    expect(() => g.gruRollout(state, undefined, { wIh, wHh }, { steps: 2, outputProjection: { weight } })).toThrow(/^gruRollout: .* requires grad, and gruRollout has no backward yet/);
    using m = g.ones([3, 3]).requiresGrad_();
    expect(() => g.svd(m as Tensor<'f32'>)).toThrow(/^svd: .* requires grad, and svd has no backward yet/);
  });
});

/** a and b flattened into one tensor [a, b] through differentiable ops: products with 0/1 selection matrices (exact), then a sum. */
function concat(gg: GpuCompute, a: Tensor, b: Tensor): Tensor {
  const n = a.size;
  const m = b.size;
  const ea = gg.tensor(Float32Array.from({ length: n * (n + m) }, (_, i) => (Math.floor(i / (n + m)) === i % (n + m) ? 1 : 0)), [n, n + m]);
  const eb = gg.tensor(Float32Array.from({ length: m * (n + m) }, (_, i) => (Math.floor(i / (n + m)) + n === i % (n + m) ? 1 : 0)), [m, n + m]);
  return gg.add(gg.matmul(a.reshape([1, n]), ea), gg.matmul(b.reshape([1, m]), eb)).reshape([n + m]);
}
