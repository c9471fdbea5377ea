/**
 * Attention backward on the CPU backend:
 *
 * - The backend's gradient code (`attentionGradients`, float64) against central finite
 *   differences of a float64 forward (the direct reference), on every case of
 *   `backward-cases.ts`: along random directions and at single coordinates, masked keys included
 *   (whose gradient is exactly 0). With a step of 1e-5 on inputs of order 1, the difference
 *   quotient's truncation error is about ε²/6·|L'''| ≈ 1e-11 and its rounding error about
 *   2^-53·|L|/ε ≈ 1e-10 (|L| ≤ 100 here), so a bound of 1e-7 · ‖∇L‖ · ‖u‖ leaves three orders of
 *   magnitude for both, and still catches any wrong term (each is of order ‖∇L‖/√n or more).
 * - The front-end in f32, f16 and bf16, twice: against float64 on exactly the stored values (the
 *   forward's rounded output and f32 log-sum-exp included), where the CPU's only error is its one
 *   rounding to the dtype (the elementwise bounds 1e-5, 1e-3, 8e-3); and against the true float64
 *   gradients of the stored inputs (`BACKWARD_TOLERANCE`: the output's rounding enters
 *   D = rowsum(dOut ∘ out), and P·(dP − D) may cancel).
 * - The composed fallback (matmul and core ops in query blocks, what WebGPU runs) on the same cases.
 * - Edge cases and the typed refusals, with nothing left allocated.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composedAttentionBackward } from '../../../src/compute/backend/composed/attention-backward.js';
import { attentionGradients } from '../../../src/compute/cpu/attention-backward.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { attentionBackward } from '../../../src/compute/ops/attention-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { DisposedError, InvalidArgumentError, UnsupportedOperationError } from '../../../src/errors.js';
import { cpuCompute, freshSeed, prng, randomValues, relError, TOLERANCE } from '../compute/helpers.js';
import { BACKWARD_TOLERANCE, backwardCases, backwardInputs, gradientBound, referenceGradientsFor, storedGradientsFor } from './backward-cases.js';
import { describeAttentionCase, type AttentionCase } from './cases.js';
import { referenceAttention, referenceAttentionBackward } from './reference.js';

let gpu: GpuCompute;
let other: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
  other = await cpuCompute();
});
afterAll(() => {
  gpu.dispose();
  other.dispose();
});

const scaleOf = (c: AttentionCase) => c.scale ?? 1 / Math.sqrt(c.headDim);
const norm = (x: ArrayLike<number>) => Math.sqrt(Array.from(x).reduce((a, v) => a + v * v, 0));

/** Float64 inputs of a case: q, k, v and the output gradient G (the loss is Σ G ∘ out). */
function float64Problem(c: AttentionCase, seed: number) {
  const values = (n: number, s: number) => Float64Array.from(randomValues(n, s));
  const qSize = c.batch * c.heads * c.seqQ * c.headDim;
  const kvSize = c.batch * c.kvHeads * c.seqK * c.headDim;
  return { q: values(qSize, seed), k: values(kvSize, seed + 1), v: values(kvSize, seed + 2), dOut: values(qSize, seed + 3) };
}

describe('attention backward: float64 gradients against central finite differences', () => {
  for (const c of backwardCases()) {
    it(describeAttentionCase(c), () => {
      const seed = freshSeed();
      const { q, k, v, dOut } = float64Problem(c, seed);
      const scale = scaleOf(c);
      const forward = (qq: ArrayLike<number>, kk: ArrayLike<number>, vv: ArrayLike<number>) => referenceAttention({ ...c, q: qq, k: kk, v: vv, scale });
      const loss = (qq: Float64Array, kk: Float64Array, vv: Float64Array) => {
        const { out } = forward(qq, kk, vv);
        let sum = 0;
        for (let i = 0; i < out.length; i++) sum += out[i]! * dOut[i]!;
        return sum;
      };
      const { out, lse } = forward(q, k, v);
      const grads = attentionGradients({ ...c, scale, q, k, v, out, lse, dOut });
      // The direct backward (softmax Jacobian row by row) agrees with the tiled one to rounding.
      const direct = referenceAttentionBackward({ ...c, scale, q, k, v, dOut });
      for (const name of ['dq', 'dk', 'dv'] as const) expect(relError(grads[name], direct[name]), `${name} vs direct (seed ${seed})`).toBeLessThan(1e-12);

      const gradNorm = Math.hypot(norm(grads.dq), norm(grads.dk), norm(grads.dv));
      const eps = 1e-5;
      const bound = 1e-7 * gradNorm + 1e-10;
      const random = prng(seed + 4);
      const inputs = { q, k, v } as const;
      const gradOf = { q: grads.dq, k: grads.dk, v: grads.dv } as const;
      // Along random unit directions over all three inputs at once.
      for (let trial = 0; trial < 3; trial++) {
        const dirs = { q: Float64Array.from(q, () => random() - 0.5), k: Float64Array.from(k, () => random() - 0.5), v: Float64Array.from(v, () => random() - 0.5) };
        const length = Math.hypot(norm(dirs.q), norm(dirs.k), norm(dirs.v));
        const step = (sign: number) => {
          const moved = (x: Float64Array, u: Float64Array) => Float64Array.from(x, (value, i) => value + (sign * eps * u[i]!) / length);
          return loss(moved(q, dirs.q), moved(k, dirs.k), moved(v, dirs.v));
        };
        const fd = (step(1) - step(-1)) / (2 * eps);
        let analytic = 0;
        for (const name of ['q', 'k', 'v'] as const) for (let i = 0; i < dirs[name].length; i++) analytic += (gradOf[name][i]! * dirs[name][i]!) / length;
        expect(Math.abs(fd - analytic), `direction ${trial}: fd ${fd} vs ${analytic} (seed ${seed})`).toBeLessThanOrEqual(bound);
      }
      // At single coordinates of each input, the last key among them (masked by padding in some cases).
      for (const name of ['q', 'k', 'v'] as const) {
        const x = inputs[name];
        const picks = [Math.floor(random() * x.length), Math.floor(random() * x.length), x.length - 1];
        for (const i of picks) {
          const at = (delta: number) => {
            const moved = Float64Array.from(x);
            moved[i]! += delta;
            return loss(name === 'q' ? moved : q, name === 'k' ? moved : k, name === 'v' ? moved : v);
          };
          const fd = (at(eps) - at(-eps)) / (2 * eps);
          expect(Math.abs(fd - gradOf[name][i]!), `d${name}[${i}]: fd ${fd} vs ${gradOf[name][i]} (seed ${seed})`).toBeLessThanOrEqual(bound);
        }
      }
    });
  }
});

/** The options of a case, for the front-end. */
function optionsOf(c: AttentionCase) {
  return { causal: c.causal, ...(c.scale === undefined ? {} : { scale: c.scale }), ...(c.keyLengths ? { keyLengths: c.keyLengths } : {}) };
}

/** Forward with the log-sum-exp, then backward, through the front-ends of `g`; also the gradients from the stored values in float64. */
function forwardBackward(g: GpuCompute, c: AttentionCase, t: { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor }) {
  const { out, lse } = g.attention(t.q, t.k, t.v, { ...optionsOf(c), returnLogSumExp: true });
  try {
    return { ...attentionBackward(g.session, t.q, t.k, t.v, out, lse, t.dOut, optionsOf(c)), stored: storedGradientsFor(c, t, out, lse) };
  } finally {
    out.dispose();
    lse.dispose();
  }
}

type Gradients = { dq: Float64Array; dk: Float64Array; dv: Float64Array };
type Bounds = Record<keyof Gradients, number>;

function expectGradients(label: string, got: { dq: Tensor; dk: Tensor; dv: Tensor }, ref: Gradients, dtype: 'f32' | 'f16' | 'bf16', tolerance: number | Bounds): void {
  for (const name of ['dq', 'dk', 'dv'] as const) {
    const values = got[name].toArraySync() as Float32Array;
    expect(values.every(Number.isFinite), `${label}: ${name} finite`).toBe(true);
    const bound = typeof tolerance === 'number' ? tolerance : tolerance[name];
    expect(relError(values, ref[name], dtype), `${label}: ${name} vs float64`).toBeLessThanOrEqual(bound);
  }
}

/** Against the true float64 gradients: BACKWARD_TOLERANCE, and for dq and dk the allowance for D's error where their rows cancel (`gradientBound`). */
function expectTrueGradients(label: string, c: AttentionCase, t: { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor }, got: { dq: Tensor; dk: Tensor; dv: Tensor }, dtype: 'f32' | 'f16' | 'bf16'): void {
  const ref = referenceGradientsFor(c, t);
  const tolerance = BACKWARD_TOLERANCE[dtype];
  const bounds = {
    dq: gradientBound(tolerance, ref.dq, ref.dqD, c.headDim),
    dk: gradientBound(tolerance, ref.dk, ref.dkD, c.headDim),
    dv: tolerance,
  };
  expectGradients(label, got, ref, dtype, bounds);
}

/** Against float64 on the stored values (rounding only), and against the true gradients where 16 bits allow (see BACKWARD_TOLERANCE). */
function expectCase(c: AttentionCase, t: { q: Tensor; k: Tensor; v: Tensor; dOut: Tensor }, grads: ReturnType<typeof forwardBackward>, dtype: 'f32' | 'f16' | 'bf16', storedTolerance: number): void {
  const label = `${describeAttentionCase(c)} ${dtype}`;
  expectGradients(`${label} (stored values)`, grads, grads.stored, dtype, storedTolerance);
  if (dtype === 'f32' || c.headDim >= 16) expectTrueGradients(label, c, t, grads, dtype);
}

describe('attention backward through the front-end on the CPU backend', () => {
  for (const c of backwardCases()) {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      it(`${describeAttentionCase(c)} ${dtype}`, () => {
        const t = backwardInputs(gpu, c, dtype);
        const grads = forwardBackward(gpu, c, t);
        expect([grads.dq.shape, grads.dk.shape, grads.dv.shape]).toEqual([t.q.shape, t.k.shape, t.v.shape]);
        expect([grads.dq.dtype, grads.dk.dtype, grads.dv.dtype]).toEqual([dtype, dtype, dtype]);
        // One rounding of float64 results: within the dtype's elementwise bound.
        expectCase(c, t, grads, dtype, TOLERANCE[dtype]);
        for (const x of [...Object.values(t), grads.dq, grads.dk, grads.dv]) x.dispose();
      });
    }
  }
});

describe('the composed attention backward (matmul and core ops in query blocks)', () => {
  let composed: GpuCompute;
  beforeAll(async () => {
    composed = await cpuCompute();
    const backend = composed.backend as typeof composed.backend & { attentionBackward: unknown };
    backend.attentionBackward = (p: Parameters<typeof composedAttentionBackward>[1]) => composedAttentionBackward(composed.backend as never, p);
  });
  afterAll(() => composed.dispose());

  for (const c of backwardCases()) {
    for (const dtype of ['f32', 'bf16'] as const) {
      it(`${describeAttentionCase(c)} ${dtype}, leaving no scratch behind`, () => {
        const t = backwardInputs(composed, c, dtype);
        const before = composed.memoryStats().inUseBytes;
        const grads = forwardBackward(composed, c, t);
        // f32 intermediates, rounded once: as the GPU kernels, within the dtype's bound plus f32 products.
        expectCase(c, t, grads, dtype, { f32: 1e-5, bf16: 1.2e-2 }[dtype]);
        for (const x of [grads.dq, grads.dk, grads.dv]) x.dispose();
        expect(composed.memoryStats().inUseBytes).toBe(before);
        for (const x of Object.values(t)) x.dispose();
      });
    }
  }
});

describe('attention backward edge cases and refusals', () => {
  it('gives dq = 0 for rows that see no key, and dk = dv = 0 past the key lengths', () => {
    const c: AttentionCase = { batch: 2, heads: 2, kvHeads: 1, seqQ: 5, seqK: 7, headDim: 8, causal: true, keyLengths: [0, 3] };
    const t = backwardInputs(gpu, c, 'f32');
    const lengths = gpu.tensor(Int32Array.from([-2, 3]), [2]);
    const { out, lse } = gpu.attention(t.q, t.k, t.v, { causal: true, keyLengths: lengths, returnLogSumExp: true });
    const grads = attentionBackward(gpu.session, t.q, t.k, t.v, out, lse, t.dOut, { causal: true, keyLengths: lengths });
    const dq = grads.dq.toArraySync() as Float32Array;
    expect(dq.subarray(0, 2 * 5 * 8).every((x) => x === 0)).toBe(true);
    const dk = grads.dk.toArraySync() as Float32Array;
    const dv = grads.dv.toArraySync() as Float32Array;
    for (const d of [dk, dv]) {
      expect(d.subarray(0, 7 * 8).every((x) => x === 0)).toBe(true);
      expect(d.subarray(7 * 8 + 3 * 8).every((x) => x === 0)).toBe(true);
    }
    expectTrueGradients('tensor lengths', c, t, grads, 'f32');
    for (const x of [...Object.values(t), lengths, out, lse, grads.dq, grads.dk, grads.dv]) x.dispose();
  });

  it('handles empty query and key sequences', () => {
    const q = gpu.rand([1, 2, 3, 4]);
    const none = gpu.zeros([1, 1, 0, 4]);
    const { out, lse } = gpu.attention(q, none, none, { returnLogSumExp: true });
    const noKeys = attentionBackward(gpu.session, q, none, none, out, lse, q);
    expect(Array.from(noKeys.dq.toArraySync())).toEqual(new Array(24).fill(0));
    expect([noKeys.dk.shape, noKeys.dv.shape]).toEqual([[1, 1, 0, 4], [1, 1, 0, 4]]);
    const q0 = gpu.zeros([1, 2, 0, 4]);
    const k = gpu.rand([1, 1, 5, 4]);
    const empty = gpu.attention(q0, k, k, { returnLogSumExp: true });
    const noQueries = attentionBackward(gpu.session, q0, k, k, empty.out, empty.lse, q0);
    expect(noQueries.dq.shape).toEqual([1, 2, 0, 4]);
    expect(Array.from(noQueries.dk.toArraySync())).toEqual(new Array(20).fill(0));
    expect(Array.from(noQueries.dv.toArraySync())).toEqual(new Array(20).fill(0));
    for (const x of [q, none, out, lse, q0, k, empty.out, empty.lse, ...Object.values(noKeys), ...Object.values(noQueries)]) x.dispose();
  });

  it('refuses bad input with typed errors before computing, allocating nothing', () => {
    const q = gpu.rand([2, 4, 8, 32]);
    const k = gpu.rand([2, 2, 6, 32]);
    const { out, lse } = gpu.attention(q, k, k, { returnLogSumExp: true });
    const wrong = {
      dOut: gpu.rand([2, 4, 8, 16]),
      out16: gpu.cast(out, 'f16'),
      lseShape: gpu.rand([2, 4, 7]),
      lse16: gpu.cast(lse, 'bf16'),
      kv3: gpu.rand([2, 3, 6, 32]),
      qInt: gpu.cast(q, 'i32'),
      foreign: other.rand([2, 4, 8, 32]),
      gone: gpu.rand([2, 4, 8, 32]),
    };
    wrong.gone.dispose();
    const s = gpu.session;
    const alloc = vi.spyOn(gpu.backend, 'alloc');
    try {
      const bad = (f: () => unknown, error: RegExp | (new (...args: never[]) => Error)) => expect(f).toThrow(error);
      bad(() => attentionBackward(s, q, k, k, out, lse, q, { causal: 'yes' }), /attentionBackward: causal must be a boolean/);
      bad(() => attentionBackward(s, q, k, k, out, lse, q, { returnLogSumExp: true }), /attentionBackward: .*returnLogSumExp/);
      bad(() => attentionBackward(s, q, k, k, out, lse, wrong.dOut), /attentionBackward: dOut \[2, 4, 8, 16\] must have the shape of q/);
      bad(() => attentionBackward(s, q, k, k, wrong.out16, lse, q), /dtype mismatch: out is f16/);
      bad(() => attentionBackward(s, q, k, k, out, wrong.lseShape, q), /lse must be the forward's f32 log-sum-exp \[2, 4, 8\]/);
      bad(() => attentionBackward(s, q, k, k, out, wrong.lse16, q), /lse must be the forward's f32/);
      bad(() => attentionBackward(s, q, wrong.kv3, wrong.kv3, out, lse, q), /multiple of k\/v heads/);
      bad(() => attentionBackward(s, q, k, k, out, lse, q, { keyLengths: [6, 7] }), /keyLengths\[1\] must be an integer in \[0, 6\]/);
      bad(() => attentionBackward(s, q, k, k, out, lse, q, { scale: Infinity }), /scale must be a finite number/);
      bad(() => attentionBackward(s, wrong.qInt, k, k, out, lse, q), /q must be f32, f16 or bf16/);
      bad(() => attentionBackward(s, q, k, k, out, lse, wrong.foreign), InvalidArgumentError);
      bad(() => attentionBackward(s, q, k, k, out, 'lse' as never, q), /lse must be a Tensor/);
      bad(() => attentionBackward(s, q, k, k, out, lse, wrong.gone), DisposedError);
      expect(alloc).not.toHaveBeenCalled();
    } finally {
      alloc.mockRestore();
    }
    for (const x of [q, k, out, lse, ...Object.values(wrong)]) x.dispose();
  });

  it('refuses a backend without attentionBackward with UnsupportedOperationError, allocating nothing', async () => {
    const bare = await cpuCompute();
    try {
      const q = bare.rand([1, 1, 2, 4]);
      const { out, lse } = bare.attention(q, q, q, { returnLogSumExp: true });
      Object.defineProperty(bare.backend, 'attentionBackward', { value: undefined, configurable: true });
      const alloc = vi.spyOn(bare.backend, 'alloc');
      expect(() => attentionBackward(bare.session, q, q, q, out, lse, q)).toThrow(UnsupportedOperationError);
      expect(alloc).not.toHaveBeenCalled();
      alloc.mockRestore();
      for (const x of [q, out, lse]) x.dispose();
    } finally {
      bare.dispose();
    }
  });
});
