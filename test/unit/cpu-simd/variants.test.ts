/**
 * The relaxed-SIMD build (FMA where the engine fuses) against the plain SIMD128 build: ops that
 * use no multiply-add give the same bits; the others agree within rounding.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { unary } from '../../../src/compute/cpu/simd/elementwise.js';
import { attention } from '../../../src/compute/cpu/simd/attention.js';
import { gemm } from '../../../src/compute/cpu/simd/matmul.js';
import { softmax } from '../../../src/compute/cpu/simd/rows.js';
import type { SimdRuntime } from '../../../src/compute/cpu/simd/runtime.js';
import { relaxedSimdSupported } from '../../../src/compute/cpu/simd/wasm-module.js';
import { decode, encode, freshSeed, get, put, randomValues, relError, runtime } from './helpers.js';

const supported = relaxedSimdSupported();
const relaxed = supported ? runtime(2, 'relaxed-simd') : undefined;
const plain = runtime(2, 'simd128');
afterAll(async () => {
  await relaxed?.dispose();
  await plain.dispose();
});

function both(inputs: Uint8Array[], outBytes: number, op: (rt: SimdRuntime, ins: number[], out: number) => void): [Float64Array, Float64Array] {
  return [relaxed!, plain].map((rt) => {
    const ins = inputs.map((b) => put(rt, b));
    const out = put(rt, new Uint8Array(outBytes));
    op(rt, ins, out);
    return decode(get(rt, out, outBytes), 'f32');
  }) as [Float64Array, Float64Array];
}

describe.skipIf(!supported)('relaxed-simd vs simd128', () => {
  const seed = freshSeed();
  const values = (n: number, s = 0) => encode(randomValues(n, seed + s, 3), 'f32');

  it(`runs the relaxed build where the engine validates relaxed SIMD (seed ${seed})`, () => {
    expect(relaxed!.variant).toBe('relaxed-simd');
    expect(plain.variant).toBe('simd128');
  });

  it('unary ops without multiply-adds are identical, the others within a few ulps', () => {
    const n = 100_003;
    for (const op of ['neg', 'abs', 'sqrt', 'relu', 'leakyRelu'] as const) {
      const [a, b] = both([values(n)], n * 4, (rt, [x], out) => unary(rt, op, 'f32', x!, out, n));
      expect(relError(a, b), op).toBe(0);
    }
    for (const op of ['exp', 'log', 'tanh', 'gelu', 'geluTanh', 'softplus', 'silu'] as const) {
      const [a, b] = both([values(n)], n * 4, (rt, [x], out) => unary(rt, op, 'f32', x!, out, n));
      expect(relError(a, b), op).toBeLessThanOrEqual(1e-6);
    }
  });

  it('sgemm, softmax and attention agree within rounding', () => {
    const [m, n, k] = [130, 70, 300];
    let [a, b] = both([values(m * k), values(k * n, 1)], m * n * 4, (rt, [x, y], out) =>
      gemm(rt, { a: x!, aType: 'f32', b: y!, bType: 'f32', out, outType: 'f32', m, n, k, batch: 1, transA: false, transB: false, alpha: 1, beta: 0, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0 }),
    );
    expect(relError(a, b)).toBeLessThanOrEqual(1e-6);
    [a, b] = both([values(64 * 1000)], 64 * 1000 * 4, (rt, [x], out) => softmax(rt, 'f32', x!, out, 64, 1000, false));
    expect(relError(a, b)).toBeLessThanOrEqual(1e-6);
    const size = 2 * 2 * 50 * 32;
    [a, b] = both([values(size), values(size, 1), values(size, 2)], size * 4, (rt, [q, kk, v], out) =>
      attention(rt, { dtype: 'f32', q: q!, k: kk!, v: v!, out, batch: 2, heads: 2, kvHeads: 2, seqQ: 50, seqK: 50, headDim: 32, scale: 0.2, causal: false }),
    );
    expect(relError(a, b)).toBeLessThanOrEqual(1e-6);
  });
});
