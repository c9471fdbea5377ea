/**
 * Gradient checks (see `gradcheck.ts`) of matmul in a, b, c and bias: every transpose, batch
 * broadcasting of either operand and of c, alpha and beta, each fused activation; and of linear
 * in x, weight and bias for x of rank 1 to 3, with and without an activation.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { MATMUL_ACTIVATIONS, type MatmulActivation } from '../../../src/compute/core/matmul-plan.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { cpuCompute, freshSeed, freshSeedWhere, randomValues } from '../compute/helpers.js';
import { UNARY_REFERENCE } from '../compute/reference.js';
import { gradcheck, product } from './gradcheck.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

interface Product {
  transA?: boolean;
  transB?: boolean;
  alpha?: number;
  beta?: number;
  activation?: MatmulActivation;
}

/** Element (i, j) of matrix `which` (row-major `rows` × `cols`) of a batch stored back to back. */
function at(x: ArrayLike<number>, base: number, cols: number, i: number, j: number): number {
  return x[base + i * cols + j]!;
}

/** The batch offset of output batch index `index` inside an operand with batch dims `dims` (right-aligned, 1 broadcasts). */
function batchOffset(index: number[], dims: readonly number[], matrix: number): number {
  let flat = 0;
  const lead = index.length - dims.length;
  dims.forEach((d, i) => (flat = flat * d + (d === 1 ? 0 : index[lead + i]!)));
  return flat * matrix;
}

/** act(alpha·op(a)·op(b) + beta·c + bias) in float64, NumPy batch broadcasting. */
function matmulRef(aShape: number[], a: ArrayLike<number>, bShape: number[], b: ArrayLike<number>, p: Product, c?: { shape: number[]; x: ArrayLike<number> }, bias?: ArrayLike<number>): number[] {
  const [ar, ac] = aShape.slice(-2) as [number, number];
  const [br, bc] = bShape.slice(-2) as [number, number];
  const m = p.transA ? ac : ar;
  const k = p.transA ? ar : ac;
  const n = p.transB ? br : bc;
  const aBatch = aShape.slice(0, -2);
  const bBatch = bShape.slice(0, -2);
  const rank = Math.max(aBatch.length, bBatch.length);
  const batch = Array.from({ length: rank }, (_, i) => Math.max(aBatch[aBatch.length - rank + i] ?? 1, bBatch[bBatch.length - rank + i] ?? 1));
  const out: number[] = [];
  for (let e = 0; e < product(batch); e++) {
    const index: number[] = [];
    let rest = e;
    for (let d = batch.length - 1; d >= 0; d--) {
      index[d] = rest % batch[d]!;
      rest = Math.floor(rest / batch[d]!);
    }
    const ao = batchOffset(index, aBatch, ar * ac);
    const bo = batchOffset(index, bBatch, br * bc);
    const co = c ? batchOffset(index, c.shape.slice(0, -2), m * n) : 0;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let l = 0; l < k; l++) sum += (p.transA ? at(a, ao, ac, l, i) : at(a, ao, ac, i, l)) * (p.transB ? at(b, bo, bc, j, l) : at(b, bo, bc, l, j));
        let z = (p.alpha ?? 1) * sum + (c ? (p.beta ?? 1) * c.x[co + i * n + j]! : 0) + (bias ? bias[j]! : 0);
        if (p.activation) z = UNARY_REFERENCE[p.activation](z, 0);
        out.push(z);
      }
    }
  }
  return out;
}

describe('matmul', () => {
  it('every transpose, with alpha', () => {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        const seed = freshSeed();
        const aShape = transA ? [4, 3] : [3, 4];
        const bShape = transB ? [5, 4] : [4, 5];
        const p = { transA, transB, alpha: 0.75 };
        gradcheck(g, {
          label: `matmul transA ${transA} transB ${transB}`,
          inputs: [
            { shape: aShape, values: randomValues(12, seed) },
            { shape: bShape, values: randomValues(20, seed + 1) },
          ],
          forward: (gpu, [a, b]) => gpu.matmul(a!, b!, p),
          reference: ([a, b]) => matmulRef(aShape, a!, bShape, b!, p),
          tolerance: 1e-4,
          seed,
        });
      }
    }
  });

  it('batch broadcasting of a, b and c, with beta and bias, under every transpose', () => {
    const cases: [number[], number[], number[]][] = [
      [[2, 3, 4], [4, 5], [2, 3, 5]],
      [[3, 4], [2, 4, 5], [1, 3, 5]],
      [[2, 1, 3, 4], [3, 4, 5], [3, 5]],
      [[2, 3, 4], [2, 4, 5], [1, 3, 5]],
    ];
    for (const [aBase, bBase, cShape] of cases) {
      for (const [transA, transB] of [[false, false], [true, true], [true, false]] as const) {
        const seed = freshSeed();
        const aShape = transA ? [...aBase.slice(0, -2), aBase.at(-1)!, aBase.at(-2)!] : aBase;
        const bShape = transB ? [...bBase.slice(0, -2), bBase.at(-1)!, bBase.at(-2)!] : bBase;
        const p = { transA, transB, beta: 0.5, alpha: 1.25 };
        gradcheck(g, {
          label: `matmul a [${aShape}] b [${bShape}] c [${cShape}] transA ${transA} transB ${transB}`,
          inputs: [
            { shape: aShape, values: randomValues(product(aShape), seed) },
            { shape: bShape, values: randomValues(product(bShape), seed + 1) },
            { shape: cShape, values: randomValues(product(cShape), seed + 2) },
            { shape: [5], values: randomValues(5, seed + 3) },
          ],
          forward: (gpu, [a, b, c, bias]) => gpu.matmul(a!, b!, { ...p, c: c!, bias: bias! }),
          reference: ([a, b, c, bias]) => matmulRef(aShape, a!, bShape, b!, p, { shape: cShape, x: c! }, bias),
          tolerance: 1e-4,
          seed,
        });
      }
    }
  });

  it('each fused activation', () => {
    for (const activation of MATMUL_ACTIVATIONS) {
      const seed = activation === 'relu' ? seedAwayFromKink(3, true) : freshSeed();
      const p = { activation, transB: true };
      gradcheck(g, {
        label: `matmul + ${activation}`,
        inputs: [
          { shape: [3, 4], values: randomValues(12, seed) },
          { shape: [5, 4], values: randomValues(20, seed + 1) },
          { shape: [5], values: randomValues(5, seed + 2) },
        ],
        forward: (gpu, [a, b, bias]) => gpu.matmul(a!, b!, { ...p, bias: bias! }),
        reference: ([a, b, bias]) => matmulRef([3, 4], a!, [5, 4], b!, p, undefined, bias),
        tolerance: 1e-4,
        seed,
      });
    }
  });
});

/**
 * A seed whose products x·wᵀ (+ b) of [rows, 4] by [5, 4] (x, w and b drawn from seed, seed + 1,
 * seed + 2) all lie 1e-3 or more from 0: relu's kink there splits a central difference (about
 * 9e-5 of runs before).
 */
function seedAwayFromKink(rows: number, withBias: boolean): number {
  return freshSeedWhere((seed) => {
    const [x, w, b] = [randomValues(rows * 4, seed), randomValues(20, seed + 1), randomValues(5, seed + 2)];
    return matmulRef([rows, 4], x, [5, 4], w, { transB: true }, undefined, withBias ? b : undefined).every((v) => Math.abs(v) >= 1e-3);
  });
}

describe('linear', () => {
  it('x of rank 1 to 3, with and without bias and activation', () => {
    for (const xShape of [[4], [3, 4], [2, 3, 4]]) {
      for (const activation of [undefined, 'silu', 'relu'] as const) {
        for (const withBias of [true, false]) {
          const rows = product(xShape) / 4;
          const seed = activation === 'relu' ? seedAwayFromKink(rows, withBias) : freshSeed();
          gradcheck(g, {
            label: `linear x [${xShape}] ${activation ?? 'none'} bias ${withBias}`,
            inputs: [
              { shape: xShape, values: randomValues(product(xShape), seed) },
              { shape: [5, 4], values: randomValues(20, seed + 1) },
              { shape: [5], values: randomValues(5, seed + 2), grad: withBias },
            ],
            forward: (gpu, [x, w, b]) => gpu.linear(x!, w!, withBias ? b : null, activation),
            reference: ([x, w, b]) => matmulRef([rows, 4], x!, [5, 4], w!, { transB: true, ...(activation ? { activation } : {}) }, undefined, withBias ? b : undefined),
            tolerance: 1e-4,
            seed,
          });
        }
      }
    }
  });
});
