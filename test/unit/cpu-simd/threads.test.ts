/**
 * One thread and several give the same bits for every kernel family: splits fall on whole
 * outputs (rows, strips, tiles, element ranges), K is never split, and long reductions are cut
 * into chunks fixed by the shape, not by the thread count.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { planBroadcast } from '../../../src/compute/core/broadcast.js';
import { dtypeSize } from '../../../src/compute/core/dtype.js';
import { planReduction } from '../../../src/compute/core/reduce-plan.js';
import { attention } from '../../../src/compute/cpu/simd/attention.js';
import { binary, unary } from '../../../src/compute/cpu/simd/elementwise.js';
import { gruRecurrence } from '../../../src/compute/cpu/simd/gru.js';
import { gemm } from '../../../src/compute/cpu/simd/matmul.js';
import { dropout } from '../../../src/compute/cpu/simd/random.js';
import { reduce } from '../../../src/compute/cpu/simd/reduce.js';
import { layerNorm, softmax } from '../../../src/compute/cpu/simd/rows.js';
import type { SimdRuntime } from '../../../src/compute/cpu/simd/runtime.js';
import { transpose } from '../../../src/compute/cpu/simd/transpose.js';
import { MANY_THREADS, alloc, encode, freshSeed, get, put, randomValues, runtime } from './helpers.js';

const one = runtime(1);
const many = runtime(MANY_THREADS);
afterAll(async () => {
  await one.dispose();
  await many.dispose();
});

/** Runs `op` on both runtimes with the same inputs and returns both outputs' bytes. */
function both(inputs: Uint8Array[], outBytes: number, op: (rt: SimdRuntime, ins: number[], out: number) => void): [Uint8Array, Uint8Array] {
  return [one, many].map((rt) => {
    const ins = inputs.map((b) => put(rt, b));
    const out = alloc(rt, outBytes);
    op(rt, ins, out);
    return get(rt, out, outBytes);
  }) as [Uint8Array, Uint8Array];
}

const seed = freshSeed();
const values = (n: number, s = 0) => encode(randomValues(n, seed + s, 2), 'f32');

describe(`1 thread vs ${MANY_THREADS} (seed ${seed})`, () => {
  it('unary', () => {
    const n = 1_000_003;
    const [a, b] = both([values(n)], n * 4, (rt, [x], out) => unary(rt, 'gelu', 'f32', x!, out, n));
    expect(Buffer.compare(a, b)).toBe(0);
  });

  it('binary, general broadcast', () => {
    const plan = planBroadcast('t', [700, 1, 1001], [1, 3, 1001]);
    const n = 700 * 3 * 1001;
    const [a, b] = both([values(700 * 1001), values(3 * 1001, 1)], n * 4, (rt, [x, y], out) => binary(rt, 'div', 'f32', x!, y!, out, plan));
    expect(Buffer.compare(a, b)).toBe(0);
  });

  it.each([
    [[1001, 1003], 1],
    [[1001, 1003], 0],
    [[3_000_017], undefined],
    [[400_009, 3], 0],
  ] as const)('sum over %j axis %s', (shape, axis) => {
    const { plan, outShape } = planReduction(shape, axis, false);
    const n = shape.reduce((p, d) => p * d, 1);
    const outN = outShape.reduce((p, d) => p * d, 1);
    for (const op of ['sum', 'argmax'] as const) {
      const [a, b] = both([values(n)], outN * 4, (rt, [x], out) => reduce(rt, op, 'f32', x!, out, plan));
      expect(Buffer.compare(a, b), op).toBe(0);
    }
  });

  it('softmax and layerNorm', () => {
    const [rows, cols] = [513, 1000];
    for (const run of [
      (rt: SimdRuntime, x: number, out: number) => softmax(rt, 'f32', x, out, rows, cols, false),
      (rt: SimdRuntime, x: number, out: number) => layerNorm(rt, 'f32', x, undefined, undefined, out, rows, cols, 1e-5),
    ]) {
      const [a, b] = both([values(rows * cols)], rows * cols * 4, (rt, [x], out) => run(rt, x!, out));
      expect(Buffer.compare(a, b)).toBe(0);
    }
  });

  it('transpose and dropout', () => {
    const [batch, rows, cols] = [3, 333, 517];
    const n = batch * rows * cols;
    let [a, b] = both([values(n)], n * 4, (rt, [x], out) => transpose(rt, 'bf16', x!, out, batch, rows, 2 * cols));
    expect(Buffer.compare(a, b)).toBe(0);
    [a, b] = both([values(n)], n * 4, (rt, [x], out) => dropout(rt, 'f32', x!, out, n, 0.3, seed));
    expect(Buffer.compare(a, b)).toBe(0);
  });

  it('sgemm with the epilogue', () => {
    const [m, n, k] = [301, 259, 600];
    const [a, b] = both([values(m * k), values(k * n, 1), values(n, 2)], m * n * 2, (rt, [x, y, bias], out) =>
      gemm(rt, {
        a: x!, aType: 'f32', b: y!, bType: 'f32', out, outType: 'bf16', bias: bias!, biasType: 'f32', m, n, k, batch: 1,
        transA: false, transB: true, alpha: 0.75, beta: 0, activation: 'gelu', aBatchStride: 0, bBatchStride: 0, cBatchStride: 0,
      }),
    );
    expect(Buffer.compare(a, b)).toBe(0);
  });

  it('GRU recurrence', () => {
    const [E, B, T, H] = [2, 40, 3, 64];
    const size = dtypeSize.f32;
    const [a, b] = both([values(E * B * T * 3 * H), values(E * 3 * H * H, 1), values(E * B * H, 2)], E * B * T * H * size, (rt, [gx, w, h0], hSeq) =>
      gruRecurrence(rt, {
        dtype: 'f32', gx: gx!, gxStrides: [B * T * 3 * H, T * 3 * H, 3 * H], wHh: w!, h0: h0!, hSeq, seqStrides: [B * T * H, T * H, H],
        slots: T, hN: alloc(rt, E * B * H * size), ensemble: E, batch: B, steps: T, hidden: H,
      }),
    );
    expect(Buffer.compare(a, b)).toBe(0);
  });

  it('the multi-threaded runtime really used its workers', () => {
    expect(many.workersStarted).toBe(true);
    expect(one.workersStarted).toBe(false);
  });

  it('attention', () => {
    const [B, H, S, D] = [2, 4, 160, 64];
    const n = B * H * S * D;
    const [a, b] = both([values(n), values(n, 1), values(n, 2)], n * 4, (rt, [q, k, v], out) =>
      attention(rt, { dtype: 'f32', q: q!, k: k!, v: v!, out, batch: B, heads: H, kvHeads: H, seqQ: S, seqK: S, headDim: D, scale: 0.125, causal: true }),
    );
    expect(Buffer.compare(a, b)).toBe(0);
  });
});
