import { describe, expect, it } from 'vitest';
import type { MatmulActivation, MatmulParams } from '../../../src/compute/core/matmul-plan.js';
import { cpuMatmul } from '../../../src/compute/cpu/matmul.js';
import type { HostBuffer } from './host-tensors.js';
import { freshSeed } from '../compute/helpers.js';
import { emptyTensor, hostIO, randomTensor, rng, valuesOf } from './host-tensors.js';
import { referenceProduct, relativeError } from './reference.js';

// The CPU path accumulates in float64, so its only error is the final rounding
// to the output dtype: the unit roundoff of f32 (6e-8), f16 (4.9e-4), bf16 (3.9e-3).
const tolerance: Record<'f32' | 'f16' | 'bf16', number> = { f32: 2e-7, f16: 1e-3, bf16: 8e-3 };

interface Case {
  m: number;
  n: number;
  k: number;
  batch?: number;
  transA?: boolean;
  transB?: boolean;
  alpha?: number;
  beta?: number;
  withC?: boolean;
  withBias?: boolean;
  activation?: MatmulActivation;
  /** Which operands are one matrix broadcast over the batch. */
  broadcast?: 'a' | 'b' | 'c';
}

// Fresh inputs every run; the seed is in each assertion's message.
const baseSeed = freshSeed();

function run(dtype: 'f32' | 'f16' | 'bf16', cs: Case, salt: number): [number, string] {
  const seed = (baseSeed + salt) >>> 0;
  const next = rng(seed);
  const { m, n, k } = cs;
  const batch = cs.batch ?? 1;
  const aBatch = cs.broadcast === 'a' ? 1 : batch;
  const bBatch = cs.broadcast === 'b' ? 1 : batch;
  const cBatch = cs.broadcast === 'c' ? 1 : batch;
  const a = randomTensor(dtype, cs.transA ? [aBatch, k, m] : [aBatch, m, k], next);
  const b = randomTensor(dtype, cs.transB ? [bBatch, n, k] : [bBatch, k, n], next);
  const c = cs.withC ? randomTensor(dtype, [cBatch, m, n], next) : undefined;
  const bias = cs.withBias ? randomTensor(dtype, [n], next) : undefined;
  const out = emptyTensor(dtype, [batch, m, n]);
  const params: MatmulParams = {
    a: a.view,
    b: b.view,
    out,
    c: c?.view,
    bias: bias?.view,
    m,
    n,
    k,
    batch,
    aBatchStride: aBatch === 1 ? 0 : m * k,
    bBatchStride: bBatch === 1 ? 0 : k * n,
    cBatchStride: cBatch === 1 ? 0 : m * n,
    transA: cs.transA ?? false,
    transB: cs.transB ?? false,
    alpha: cs.alpha ?? 1,
    beta: cs.withC ? (cs.beta ?? 1) : 0,
    activation: cs.activation,
    precision: 'highest',
    engine: 'auto',
    autotune: false,
  };
  cpuMatmul(params, hostIO);
  const ref = referenceProduct({ values: a.values, shape: a.view.shape }, { values: b.values, shape: b.view.shape }, {
    transA: params.transA,
    transB: params.transB,
    alpha: params.alpha,
    beta: params.beta,
    ...(c ? { c: { values: c.values, shape: c.view.shape } } : {}),
    ...(bias ? { bias: bias.values } : {}),
    ...(cs.activation ? { activation: cs.activation } : {}),
  });
  return [relativeError(valuesOf(out), ref.values), `seed ${seed}`];
}

function expectWithin(dtype: 'f32' | 'f16' | 'bf16', cs: Case, salt: number): void {
  const [err, seed] = run(dtype, cs, salt);
  expect(err, seed).toBeLessThan(tolerance[dtype]);
}

const shapes: Case[] = [
  { m: 1, n: 1, k: 1 },
  { m: 1, n: 7, k: 13 },
  { m: 17, n: 1, k: 5 },
  { m: 3, n: 5, k: 1 },
  { m: 31, n: 37, k: 41 },
  { m: 64, n: 64, k: 64 },
  { m: 67, n: 129, k: 257 }, // crosses MC and KC block edges
  { m: 5, n: 523, k: 300 }, // crosses NC
];

describe('cpuMatmul', () => {
  for (const dtype of ['f32', 'f16', 'bf16'] as const) {
    describe(dtype, () => {
      for (const s of shapes) {
        for (const [transA, transB] of [
          [false, false],
          [true, false],
          [false, true],
          [true, true],
        ] as const) {
          it(`${s.m}x${s.k} · ${s.k}x${s.n} transA=${transA} transB=${transB}`, () => {
            expectWithin(dtype, { ...s, transA, transB }, s.m * 1000 + s.n + s.k);
          });
        }
      }

      it('alpha, beta·C and bias', () => {
        expectWithin(dtype, { m: 23, n: 19, k: 29, alpha: -0.75, beta: 0.5, withC: true, withBias: true }, 7);
      });

      for (const activation of ['relu', 'gelu', 'geluTanh', 'silu', 'sigmoid', 'tanh'] as const) {
        it(`fused ${activation} epilogue`, () => {
          expectWithin(dtype, { m: 13, n: 47, k: 33, withBias: true, activation, alpha: 1.5 }, 11);
        });
      }

      for (const broadcast of [undefined, 'a', 'b', 'c'] as const) {
        it(`batch of 3, broadcast ${broadcast ?? 'none'}`, () => {
          expectWithin(dtype, { m: 9, n: 11, k: 7, batch: 3, withC: true, beta: 2, broadcast, transB: true }, 23);
        });
      }
    });
  }

  it('ignores C when beta is 0 (NaN in C does not leak, as in BLAS)', () => {
    const next = rng(5);
    const a = randomTensor('f32', [4, 3], next);
    const b = randomTensor('f32', [3, 2], next);
    const c = randomTensor('f32', [4, 2], next);
    new Float32Array((c.view.buffer as HostBuffer).data).fill(NaN);
    const out = emptyTensor('f32', [4, 2]);
    cpuMatmul(
      {
        a: a.view, b: b.view, out, c: c.view, m: 4, n: 2, k: 3, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0,
        transA: false, transB: false, alpha: 1, beta: 0, precision: 'highest', engine: 'auto', autotune: false,
      },
      hostIO,
    );
    expect(valuesOf(out).every(Number.isFinite)).toBe(true);
  });

  it('keeps NaN through relu (no silent clamp to 0)', () => {
    const next = rng(9);
    const a = randomTensor('f32', [2, 2], next);
    const b = randomTensor('f32', [2, 2], next);
    new Float32Array((a.view.buffer as HostBuffer).data)[0] = NaN;
    const out = emptyTensor('f32', [2, 2]);
    cpuMatmul(
      {
        a: a.view, b: b.view, out, m: 2, n: 2, k: 2, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0,
        transA: false, transB: false, alpha: 1, beta: 0, activation: 'relu', precision: 'highest', engine: 'auto', autotune: false,
      },
      hostIO,
    );
    const v = valuesOf(out);
    expect(Number.isNaN(v[0])).toBe(true);
    expect(Number.isNaN(v[2])).toBe(false);
  });
});
