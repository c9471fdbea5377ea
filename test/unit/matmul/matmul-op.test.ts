import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { linear, matmul } from '../../../src/compute/ops/matmul.js';
import { planMatmul } from '../../../src/compute/core/matmul-plan.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { cpuCompute, freshSeed, randomValues } from '../compute/helpers.js';
import { referenceProduct, relativeError, type RefOptions } from './reference.js';

const baseSeed = freshSeed();
let seedCounter = 0;
const tolerance = { f32: 2e-6, f16: 1e-3, bf16: 8e-3 } as const;

let gpu: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
});
afterAll(() => gpu.dispose());

/** A random tensor and its exact values (as stored, after rounding to the dtype). */
function rand(shape: number[], dtype: 'f32' | 'f16' | 'bf16' = 'f32'): { t: Tensor; values: Float32Array; shape: number[] } {
  const size = shape.reduce((p, d) => p * d, 1);
  const t = gpu.tensor(randomValues(size, (baseSeed + ++seedCounter) >>> 0), shape, dtype);
  return { t, values: t.toArraySync() as Float32Array, shape };
}

function check(out: Tensor, ref: { values: Float64Array; shape: number[] }, dtype: 'f32' | 'f16' | 'bf16' = 'f32'): void {
  expect(out.shape).toEqual(ref.shape);
  expect(relativeError(out.toArraySync(), ref.values), `base seed ${baseSeed}`).toBeLessThan(tolerance[dtype]);
}

describe('planMatmul', () => {
  it('2-D product: one call, no batch', () => {
    const plan = planMatmul('matmul', [3, 5], [5, 7], false, false);
    expect(plan).toMatchObject({ outShape: [3, 7], m: 3, n: 7, k: 5 });
    expect(plan.calls).toEqual([{ aOffset: 0, bOffset: 0, cOffset: 0, outOffset: 0, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0, m: 3 }]);
  });

  it('transposes swap the dims of each operand', () => {
    expect(planMatmul('matmul', [5, 3], [7, 5], true, true)).toMatchObject({ outShape: [3, 7], m: 3, n: 7, k: 5 });
  });

  it('a batch times one shared matrix folds into a taller product', () => {
    const plan = planMatmul('matmul', [4, 3, 5], [5, 7], false, false);
    expect(plan.outShape).toEqual([4, 3, 7]);
    expect(plan.calls).toEqual([{ aOffset: 0, bOffset: 0, cOffset: 0, outOffset: 0, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0, m: 12 }]);
  });

  it('a transposed batch does not fold; one strided call', () => {
    const plan = planMatmul('matmul', [4, 5, 3], [5, 7], true, false);
    expect(plan.calls).toEqual([{ aOffset: 0, bOffset: 0, cOffset: 0, outOffset: 0, batch: 4, aBatchStride: 15, bBatchStride: 0, cBatchStride: 0, m: 3 }]);
  });

  it('a broadcast C keeps the batch (its rows cannot repeat inside one taller product)', () => {
    const plan = planMatmul('matmul', [4, 3, 5], [5, 7], false, false, [3, 7]);
    expect(plan.calls).toEqual([{ aOffset: 0, bOffset: 0, cOffset: 0, outOffset: 0, batch: 4, aBatchStride: 15, bBatchStride: 0, cBatchStride: 0, m: 3 }]);
  });

  it('crossed broadcasts ([2,1] with [1,3]) split into one call per outer index', () => {
    const plan = planMatmul('matmul', [2, 1, 3, 5], [1, 3, 5, 7], false, false);
    expect(plan.outShape).toEqual([2, 3, 3, 7]);
    expect(plan.calls).toEqual([
      { aOffset: 0, bOffset: 0, cOffset: 0, outOffset: 0, batch: 3, aBatchStride: 0, bBatchStride: 35, cBatchStride: 0, m: 3 },
      { aOffset: 15, bOffset: 0, cOffset: 0, outOffset: 63, batch: 3, aBatchStride: 0, bBatchStride: 35, cBatchStride: 0, m: 3 },
    ]);
  });

  it('shares one read-only plan between calls of the same batched shapes', () => {
    const plan = planMatmul('matmul', [2, 1, 3, 5], [1, 3, 5, 7], false, false);
    expect(planMatmul('linear', [2, 1, 3, 5], [1, 3, 5, 7], false, false)).toBe(plan);
        expect(planMatmul('matmul', [2, 1, 5, 3], [1, 3, 5, 7], true, false)).not.toBe(plan);
    expect(Object.isFrozen(plan) && Object.isFrozen(plan.calls) && Object.isFrozen(plan.calls[0]) && Object.isFrozen(plan.outShape)).toBe(true);
    // A c shape is part of the key, and a bad one is refused though the shapes of a and b were planned.
    expect(() => planMatmul('matmul', [2, 1, 3, 5], [1, 3, 5, 7], false, false, [4, 3, 7])).toThrow(/c \[4, 3, 7\]/);
  });

  it('refuses mismatched inner dims, non-broadcasting batches, vectors and misshapen C', () => {
    expect(() => planMatmul('matmul', [3, 5], [4, 7], false, false)).toThrow(/inner dimensions differ: op\(a\) is 3x5 .* op\(b\) is 4x7/);
    expect(() => planMatmul('matmul', [2, 3, 5], [3, 5, 7], false, false)).toThrow(/batch dims .* do not broadcast/);
    expect(() => planMatmul('matmul', [5], [5, 7], false, false)).toThrow(/at least 2 dims/);
    expect(() => planMatmul('matmul', [3, 5], [5, 7], false, false, [7, 3])).toThrow(/c \[7, 3\] must have last dims \[3, 7\]/);
    expect(() => planMatmul('matmul', [3, 5], [5, 7], false, false, [2, 3, 7])).toThrow(InvalidArgumentError);
  });
});

describe('matmul (CPU backend)', () => {
  for (const dtype of ['f32', 'f16', 'bf16'] as const) {
    it(`${dtype}: odd and prime shapes, all transposes`, () => {
      for (const [m, k, n] of [
        [1, 1, 1],
        [7, 13, 5],
        [31, 1, 17],
        [53, 61, 59],
      ]) {
        for (const transA of [false, true]) {
          for (const transB of [false, true]) {
            const a = rand(transA ? [k!, m!] : [m!, k!], dtype);
            const b = rand(transB ? [n!, k!] : [k!, n!], dtype);
            const out = matmul(gpu.session, a.t, b.t, { transA, transB });
            check(out, referenceProduct(a, b, { transA, transB }), dtype);
            for (const t of [a.t, b.t, out]) t.dispose();
          }
        }
      }
    });
  }

  it('batched with NumPy broadcasting (3-D × 2-D, 4-D crossed), C broadcast, bias, activation', () => {
    const cases: [number[], number[], number[] | undefined, Omit<RefOptions, 'c' | 'bias'>][] = [
      [[4, 6, 5], [5, 3], undefined, {}],
      [[4, 6, 5], [5, 3], [6, 3], { beta: 0.5 }],
      [[2, 1, 6, 5], [1, 3, 5, 4], [3, 6, 4], { alpha: 2, beta: -1, activation: 'gelu' }],
      [[3, 5, 6], [3, 4, 5], [3, 6, 4], { transA: true, transB: true, activation: 'tanh' }],
    ];
    for (const [aShape, bShape, cShape, o] of cases) {
      const a = rand(aShape);
      const b = rand(bShape);
      const c = cShape ? rand(cShape) : undefined;
      const bias = rand([bShape[bShape.length - (o.transB ? 2 : 1)]!]);
      const out = matmul(gpu.session, a.t, b.t, { ...o, bias: bias.t, ...(c ? { c: c.t } : {}) });
      check(out, referenceProduct(a, b, { ...o, bias: bias.values, ...(c ? { c } : {}) }));
      for (const t of [a.t, b.t, c?.t, bias.t, out]) t?.dispose();
    }
  });

  it('every activation', () => {
    for (const activation of ['relu', 'gelu', 'geluTanh', 'silu', 'sigmoid', 'tanh'] as const) {
      const a = rand([9, 8]);
      const b = rand([8, 10]);
      const out = matmul(gpu.session, a.t, b.t, { activation });
      check(out, referenceProduct(a, b, { activation }));
      for (const t of [a.t, b.t, out]) t.dispose();
    }
  });

  it('K = 0 gives beta·C + bias', () => {
    const a = gpu.zeros([3, 0]);
    const b = gpu.zeros([0, 4]);
    const c = rand([3, 4]);
    const out = matmul(gpu.session, a, b, { c: c.t, beta: 2 });
    expect(Array.from(out.toArraySync())).toEqual(Array.from(c.values, (v) => Math.fround(2 * v)));
    for (const t of [a, b, c.t, out]) t.dispose();
  });

  it('refuses bad input before the backend with InvalidArgumentError', () => {
    const a = rand([3, 4]);
    const b = rand([4, 5]);
    const h = rand([4, 5], 'f16');
    const i = gpu.zeros([4, 5], 'i32');
    const bias = rand([5]);
    const badBias = rand([4]);
    const bad: [() => unknown, RegExp][] = [
      [() => matmul(gpu.session, a.t, h.t), /dtype mismatch: b is f16 but the product is f32/],
      [() => matmul(gpu.session, a.t, i), /dtype mismatch/],
      [() => matmul(gpu.session, gpu.zeros([3, 4], 'i32'), i), /a must be f32, f16 or bf16/],
      [() => matmul(gpu.session, a.t, b.t, { bias: badBias.t }), /bias must be a vector \[5\]/],
      [() => matmul(gpu.session, a.t, b.t, { beta: 1 }), /beta is 1 but no c was given/],
      [() => matmul(gpu.session, a.t, b.t, { activation: 'swish' as never }), /unknown activation swish/],
      [() => matmul(gpu.session, a.t, b.t, { precision: 'fast' as never }), /precision must be/],
      [() => matmul(gpu.session, a.t, b.t, { engine: 'magma' as never }), /engine must be/],
      [() => matmul(gpu.session, a.t, b.t, { transA: 1 as never }), /transA must be a boolean/],
      [() => matmul(gpu.session, a.t, b.t, { alpha: NaN }), /alpha must be a finite number/],
      [() => matmul(gpu.session, a.t, a.t), /inner dimensions differ/],
      [() => matmul(gpu.session, a.t, {} as never), /b must be a Tensor/],
      [() => linear(gpu.session, a.t, b.t), /x \[3, 4\] must end in the 5 input features/],
      [() => linear(gpu.session, a.t, rand([2, 5, 4]).t), /weight must be \[out, in\]/],
    ];
    for (const [fn, message] of bad) {
      expect(fn).toThrow(InvalidArgumentError);
      expect(fn).toThrow(message);
    }
    const gone = rand([4, 5]);
    gone.t.dispose();
    expect(() => matmul(gpu.session, a.t, gone.t)).toThrow(/disposed/);
    expect(() => matmul(gpu.session, a.t, b.t, { bias: bias.t })).not.toThrow();
  });
});

describe('linear (CPU backend)', () => {
  it('state-encoding layer: batch 32, 64 → 128, ReLU', () => {
    const x = rand([32, 64]);
    const w = rand([128, 64]);
    const bias = rand([128]);
    const out = linear(gpu.session, x.t, w.t, bias.t, 'relu');
    check(out, referenceProduct(x, w, { transB: true, bias: bias.values, activation: 'relu' }));
    for (const t of [x.t, w.t, bias.t, out]) t.dispose();
  });

  it('vectors and batched inputs keep their leading dims', () => {
    const w = rand([6, 5]);
    const v = rand([5]);
    const out1 = linear(gpu.session, v.t, w.t);
    expect(out1.shape).toEqual([6]);
    const x3 = rand([2, 3, 5]);
    const out3 = linear(gpu.session, x3.t, w.t, undefined, 'silu');
    expect(out3.shape).toEqual([2, 3, 6]);
    check(out3.reshape([6, 6]), referenceProduct({ values: x3.values, shape: [6, 5] }, w, { transB: true, activation: 'silu' }));
    check(out1.reshape([1, 6]), referenceProduct({ values: v.values, shape: [1, 5] }, w, { transB: true }));
  });
});
