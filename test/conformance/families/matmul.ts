/**
 * matmul and linear: 2-D products of odd shapes with every transpose combination, batches with
 * NumPy broadcasting (the crossed [2, 1] × [3] kind too), alpha, c with beta (broadcast), bias,
 * every fused activation, f32/f16/bf16 (f32 accumulation), tf32 precision, K = 0, every engine
 * value, and linear on vectors and batched inputs.
 *
 * Bounds (inputs roughly normal, K ≤ 33): f32, a K-term dot product's rounding; tf32, inputs
 * rounded to 10-bit mantissas (u = 4.9e-4); f16 and bf16, one rounding of the output on top of
 * f32 accumulation (u = 4.9e-4, 3.9e-3) — those of the CUDA matmul tests. They are norm-wise,
 * so every product with K > 1 has several outputs: a single dot product can cancel to near 0,
 * where its relative error means nothing.
 */
import { it } from 'vitest';
import { MATMUL_ACTIVATIONS, type MatmulActivation } from '../../../src/compute/core/matmul-plan.js';
import type { MatmulOptions } from '../../../src/compute/ops/matmul.js';
import { product } from '../../unit/compute/helpers.js';
import { referenceProduct, type RefOptions } from '../../unit/matmul/reference.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext, FloatDType } from '../context.js';
import { host, type Values } from '../host.js';
import { Case } from '../seeds.js';

const BOUND = { f32: 1e-5, tf32: 5e-3, f16: 2e-3, bf16: 1e-2 } as const;

interface Product {
  a: number[];
  b: number[];
  c?: number[];
  transA?: boolean;
  transB?: boolean;
  alpha?: number;
  beta?: number;
  bias?: boolean;
  activation?: MatmulActivation;
}

/** Batched products: broadcasting either way and crossed, c broadcast or full, scales, bias and activations. */
const BATCHED: Product[] = [
  { a: [3, 7, 5], b: [5, 6] },
  { a: [5, 7], b: [4, 5, 6], transA: true },
  { a: [2, 1, 7, 5], b: [3, 5, 6], c: [7, 6], beta: 0.5, bias: true },
  { a: [3, 5, 7], b: [3, 6, 5], transA: true, transB: true, c: [3, 7, 6], alpha: -2, beta: -1, activation: 'tanh' },
  { a: [2, 3, 4, 9], b: [1, 3, 6, 9], transB: true, c: [3, 4, 6], alpha: 0.5, bias: true, activation: 'gelu' },
  { a: [4, 1, 3], b: [1, 3, 5], c: [4, 1, 5] },
];

/** Runs `p` in `dtype` with `extra` options, checked against the float64 reference within `bound`. */
function checkProduct(ctx: ConformanceContext, c: Case, p: Product, dtype: FloatDType, bound: number, extra: MatmulOptions = {}): void {
  const a = host(c.normal(product(p.a)), p.a, dtype);
  const b = host(c.normal(product(p.b)), p.b, dtype);
  const n = p.transB ? p.b[p.b.length - 2]! : p.b[p.b.length - 1]!;
  const cc = p.c && host(c.normal(product(p.c)), p.c, dtype);
  const bias = p.bias ? host(c.normal(n), [n], dtype) : undefined;
  const inputs = [a, b, ...(cc ? [cc] : []), ...(bias ? [bias] : [])];
  const runs = ctx.run(inputs, (g, [ta, tb, ...rest]) => {
    const options: MatmulOptions = { ...extra };
    if (p.transA !== undefined) options.transA = p.transA;
    if (p.transB !== undefined) options.transB = p.transB;
    if (p.alpha !== undefined) options.alpha = p.alpha;
    if (p.beta !== undefined) options.beta = p.beta;
    if (p.activation) options.activation = p.activation;
    if (cc) options.c = rest.shift()!;
    if (bias) options.bias = rest.shift()!;
    return g.matmul(ta!, tb!, options);
  });
  const o: RefOptions = {};
  if (p.transA !== undefined) o.transA = p.transA;
  if (p.transB !== undefined) o.transB = p.transB;
  if (p.alpha !== undefined) o.alpha = p.alpha;
  if (p.beta !== undefined) o.beta = p.beta;
  if (p.activation) o.activation = p.activation;
  if (cc) o.c = cc;
  if (bias) o.bias = bias.values;
  const ref = referenceProduct(a, b, o);
  expectRun(c, runs, [{ shape: ref.shape, dtype, values: Array.from(ref.values) }], bound);
}

export function describeMatmul(ctx: ConformanceContext): void {
  ctx.describeOps('matmul and linear', ['matmul', 'linear'], () => {
    for (const dtype of ctx.floatDtypes()) {
      it(`2-D products of odd shapes, every transpose, in ${dtype}`, () => {
        for (const [m, k, n] of [[1, 1, 1], [7, 13, 5], [17, 33, 9], [2, 31, 3]] as const) {
          for (const transA of [false, true]) {
            for (const transB of [false, true]) {
              const p: Product = { a: transA ? [k, m] : [m, k], b: transB ? [n, k] : [k, n], transA, transB };
              checkProduct(ctx, new Case(`matmul ${dtype} ${m}x${k}x${n} transA ${transA} transB ${transB}`), p, dtype, BOUND[dtype]);
            }
          }
        }
      });

      it(`batches with broadcasting, alpha, c and beta, bias, in ${dtype}`, () => {
        for (const p of BATCHED) checkProduct(ctx, new Case(`matmul ${dtype} ${JSON.stringify(p)}`), p, dtype, BOUND[dtype]);
      });

      it(`every fused activation, with a bias, in ${dtype}`, () => {
        for (const activation of MATMUL_ACTIVATIONS) {
          const p: Product = { a: [9, 8], b: [8, 11], bias: true, activation };
          checkProduct(ctx, new Case(`matmul ${dtype} ${activation}`), p, dtype, BOUND[dtype]);
        }
      });

      it(`K = 0 gives beta·c + bias in ${dtype}`, () => {
        checkProduct(ctx, new Case(`matmul ${dtype} K 0`), { a: [3, 0], b: [0, 4], c: [3, 4], beta: 2, bias: true }, dtype, BOUND[dtype]);
      });

      it(`linear on a vector, a matrix and a batch, in ${dtype}`, () => {
        for (const [xShape, activation] of [[[5], undefined], [[4, 5], 'relu'], [[2, 3, 5], 'silu']] as const) {
          const c = new Case(`linear ${dtype} [${xShape}] ${activation}`);
          const x = host(c.normal(product(xShape)), xShape, dtype);
          const w = host(c.normal(6 * 5), [6, 5], dtype);
          const bias = host(c.normal(6), [6], dtype);
          const runs = ctx.run([x, w, bias], (g, [tx, tw, tb]) => g.linear(tx!, tw!, tb, activation));
          const rows = product(xShape.slice(0, -1));
          const ref = referenceProduct({ values: x.values, shape: [rows, 5] }, w, { transB: true, bias: bias.values, ...(activation ? { activation } : {}) });
          const want: Values = { shape: [...xShape.slice(0, -1), 6], dtype, values: Array.from(ref.values) };
          expectRun(c, runs, [want], BOUND[dtype]);
        }
      });
    }

    if (ctx.dtypes.includes('f32')) {
      it('f32 with precision tf32, within its bound', () => {
        for (const p of [{ a: [17, 33], b: [33, 9] }, ...BATCHED]) {
          checkProduct(ctx, new Case(`matmul tf32 ${JSON.stringify(p)}`), p, 'f32', BOUND.tf32, { precision: 'tf32' });
        }
      });

      it('every engine and autotune setting gives the product', () => {
        for (const engine of ['auto', 'kernels', 'cublas'] as const) {
          for (const autotune of [false, true]) {
            const p: Product = { a: [2, 7, 13], b: [13, 5], bias: true, activation: 'relu' };
            checkProduct(ctx, new Case(`matmul engine ${engine} autotune ${autotune}`), p, 'f32', BOUND.f32, { engine, autotune });
          }
        }
      });
    }
  });
}
