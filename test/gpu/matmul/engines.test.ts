/**
 * GPU matmul against a float64 reference and against the CPU backend, for every engine
 * (our kernels with the heuristic tile, our kernels autotuned, cuBLAS) and dtype (f32, tf32,
 * f16, bf16), over odd, prime and unit shapes, all transposes, broadcast batches, every
 * epilogue, and unaligned operands.
 *
 * Errors are norm-wise and relative to max(‖ref‖, ‖|A|·|B|‖/√K): rounding errors of a dot
 * product scale with Σ|aᵢbᵢ|, not with its (possibly cancelled) value, and for random inputs
 * ‖|A|·|B|‖/√K is below ‖ref‖, so the second term only matters when a result cancels (a
 * single 37-term dot product near zero, say).
 *
 * Tolerances (inputs roughly normal):
 * - f32: each output is a K-term f32 dot product; rounding errors grow like √K·u (u = 6e-8)
 *   for random signs, so 1e-6·√K is that bound with ~16x margin for the summation order.
 * - tf32: inputs rounded to 10-bit mantissas (u = 4.9e-4) before the f32 products: ≤ 5e-3.
 * - f16: f32 accumulation of exact products, then one rounding to f16 (u = 4.9e-4): ≤ 2e-3.
 * - bf16: the same with u = 3.9e-3: ≤ 1e-2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MatmulActivation } from '../../../src/compute/core/matmul-plan.js';
import { linear, matmul, type MatmulOptions } from '../../../src/compute/ops/matmul.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { referenceProduct } from '../../unit/matmul/reference.js';
import { closePair, freshSeed, openPair, randomValues, type Pair } from '../compute/setup.js';
import { gpuAvailable } from '../gpu-available.js';

type Case = 'f32' | 'tf32' | 'f16' | 'bf16';
const DTYPE: Record<Case, 'f32' | 'f16' | 'bf16'> = { f32: 'f32', tf32: 'f32', f16: 'f16', bf16: 'bf16' };
const ENGINES: { name: string; options: MatmulOptions }[] = [
  { name: 'kernels (heuristic tile)', options: { engine: 'kernels', autotune: false } },
  { name: 'kernels (autotuned)', options: { engine: 'kernels', autotune: true } },
  { name: 'cublas', options: { engine: 'cublas' } },
];

function tolerance(c: Case, k: number): number {
  switch (c) {
    case 'f32':
      return 1e-6 * Math.sqrt(Math.max(k, 1));
    case 'tf32':
      return 5e-3;
    case 'f16':
      return 2e-3;
    case 'bf16':
      return 1e-2;
  }
}

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

interface Operand {
  cuda: Tensor;
  cpu: Tensor;
  values: Float32Array;
  shape: number[];
}

/** The same fresh random values on both backends; `values` is what the tensors hold (rounded to the dtype). */
function operand(shape: number[], dtype: 'f32' | 'f16' | 'bf16'): Operand {
  const size = shape.reduce((p, d) => p * d, 1);
  const data = Float32Array.from(randomValues(size, freshSeed()));
  const cpu = pair.cpu.tensor(data, shape, dtype);
  const cuda = pair.cuda.tensor(data, shape, dtype);
  return { cuda, cpu, values: cpu.toArraySync() as Float32Array, shape };
}

interface Spec {
  a: number[];
  b: number[];
  c?: number[];
  bias?: boolean;
  options?: MatmulOptions;
}

/** Runs one product on CUDA (with `engine`) and on the CPU, and checks both errors. */
function checkProduct(c: Case, spec: Spec, engine: MatmulOptions, label: string): void {
  const dtype = DTYPE[c];
  const a = operand(spec.a, dtype);
  const b = operand(spec.b, dtype);
  const cc = spec.c ? operand(spec.c, dtype) : undefined;
  const o = spec.options ?? {};
  const n = o.transB ? spec.b[spec.b.length - 2]! : spec.b[spec.b.length - 1]!;
  const k = o.transA ? spec.a[spec.a.length - 2]! : spec.a[spec.a.length - 1]!;
  const bias = spec.bias ? operand([n], dtype) : undefined;
  const precision = c === 'tf32' ? 'tf32' : 'highest';
  const run = (gpu: GpuCompute, pick: (x: Operand) => Tensor) =>
    matmul(gpu.session, pick(a), pick(b), {
      ...o,
      ...engine,
      precision,
      ...(cc ? { c: pick(cc) } : {}),
      ...(bias ? { bias: pick(bias) } : {}),
    });
  const out = run(pair.cuda, (x) => x.cuda);
  const outCpu = run(pair.cpu, (x) => x.cpu);
  const ref = referenceProduct(a, b, {
    ...(o.transA ? { transA: true } : {}),
    ...(o.transB ? { transB: true } : {}),
    ...(o.alpha !== undefined ? { alpha: o.alpha } : {}),
    ...(o.beta !== undefined ? { beta: o.beta } : {}),
    ...(o.activation && o.activation !== 'none' ? { activation: o.activation } : {}),
    ...(cc ? { c: cc } : {}),
    ...(bias ? { bias: bias.values } : {}),
  });
  expect(out.shape).toEqual(ref.shape);
  const got = out.toArraySync();
  const tol = tolerance(c, k);
  const scale = Math.max(norm(ref.values), norm(absoluteProduct(a, b, o).values) / Math.sqrt(Math.max(k, 1)));
  const what = `${label}: ${c} a${JSON.stringify(spec.a)} b${JSON.stringify(spec.b)} ${JSON.stringify(o)}`;
  expect(distance(got, ref.values) / scale, `${what} vs float64`).toBeLessThan(tol);
  expect(distance(got, outCpu.toArraySync()) / scale, `${what} vs CPU backend`).toBeLessThan(tol);
  for (const t of [a, b, cc, bias]) {
    t?.cuda.dispose();
    t?.cpu.dispose();
  }
  out.dispose();
  outCpu.dispose();
}

function norm(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s);
}

function distance(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < y.length; i++) s += (x[i]! - y[i]!) ** 2;
  return Math.sqrt(s);
}

/** |op(A)|·|op(B)| with the product's shapes and broadcasting: the scale of its rounding errors. */
function absoluteProduct(a: Operand, b: Operand, o: MatmulOptions): { values: Float64Array } {
  const abs = (x: Operand) => ({ values: x.values.map(Math.abs), shape: x.shape });
  return referenceProduct(abs(a), abs(b), { ...(o.transA ? { transA: true } : {}), ...(o.transB ? { transB: true } : {}) });
}

/** Odd, prime, unit and tile-crossing shapes [m, k, n]. */
const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [1, 37, 1],
  [7, 13, 5],
  [31, 1, 17],
  [127, 129, 131],
  [64, 256, 128],
  [300, 521, 260],
  [257, 1000, 65],
];

describe.skipIf(!gpuAvailable)('CUDA matmul', () => {
  for (const c of ['f32', 'tf32', 'f16', 'bf16'] as const) {
    for (const engine of ENGINES) {
      // Tuning a problem class compiles every candidate tile: the tuned engine gets one class per layout.
      const tuned = engine.options.autotune === true;
      it(`${c}, ${engine.name}: shapes × transposes`, () => {
        for (const [m, k, n] of tuned ? ([[256, 512, 384]] as const) : SHAPES) {
          for (const transA of tuned ? [false] : [false, true]) {
            for (const transB of [false, true]) {
              checkProduct(c, { a: transA ? [k, m] : [m, k], b: transB ? [n, k] : [k, n], options: { transA, transB } }, engine.options, engine.name);
            }
          }
        }
      });

      // The tuned engine only chooses among the kernels the other engines and
      // configurations.test.ts already run through every epilogue; no need to repeat them.
      if (!tuned) {
        it(`${c}, ${engine.name}: batches, broadcasts, epilogues`, () => {
          const specs: Spec[] = [
            { a: [3, 33, 20], b: [20, 17], bias: true, options: { activation: 'relu' } },
            { a: [3, 33, 20], b: [3, 20, 17], c: [33, 17], options: { alpha: 0.5, beta: -2 } },
            { a: [2, 1, 9, 24], b: [1, 3, 24, 40], c: [3, 9, 40], bias: true, options: { activation: 'gelu' } },
            { a: [4, 24, 9], b: [4, 40, 24], options: { transA: true, transB: true, activation: 'silu' } },
            { a: [65, 72], b: [72, 48], c: [65, 48], bias: true, options: { beta: 1, activation: 'geluTanh' } },
            { a: [5, 8], b: [8, 16], bias: true, options: { activation: 'sigmoid' } },
            { a: [5, 8], b: [8, 16], options: { activation: 'tanh' } },
          ];
          for (const spec of specs) checkProduct(c, spec, engine.options, engine.name);
        });
      }
    }
  }

  it('linear: batch 32, 64 → 128, ReLU, every dtype, matches x·Wᵀ + b', () => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const x = operand([32, 64], dtype);
      const w = operand([128, 64], dtype);
      const bias = operand([128], dtype);
      const out = linear(pair.cuda.session, x.cuda, w.cuda, bias.cuda, 'relu');
      const ref = referenceProduct(x, w, { transB: true, bias: bias.values, activation: 'relu' as MatmulActivation });
      expect(distance(out.toArraySync(), ref.values) / norm(ref.values), dtype).toBeLessThan(tolerance(dtype, 64));
      for (const t of [x, w, bias]) {
        t.cuda.dispose();
        t.cpu.dispose();
      }
      out.dispose();
    }
  });

  it('a large batch runs in gridDim.z slices', () => {
    checkProduct('f32', { a: [70000, 3, 2], b: [3, 2], options: { transA: true } }, { engine: 'kernels', autotune: false }, 'z slices');
    checkProduct('f16', { a: [70000, 3, 2], b: [70000, 3, 2], options: { transA: true } }, { engine: 'kernels', autotune: false }, 'z slices');
  });
});
