import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BinaryOp, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { planBroadcast } from '../../../src/compute/core/broadcast.js';
import { DTYPES, dtypeSize, type DType } from '../../../src/compute/core/dtype.js';
import { derivativeRef, UNARY_REFERENCE, broadcastRef } from '../../unit/compute/reference.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, expectMatches, FLOAT_DTYPES, freshSeed, openPair, randomValues, twin, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

/** Odd sizes: 1, below a vector, primes, not multiples of 4 or 8, one above a power of two. */
const SIZES = [1, 3, 7, 61, 1031, 65537];
const UNARY_OPS = Object.keys(UNARY_REFERENCE) as UnaryOp[];
const POSITIVE_ONLY = new Set<UnaryOp>(['log', 'sqrt', 'rsqrt']);
const SLOPE = 0.07;

/** Inputs a unary op is defined on, rounded to `dtype` as the tensor holds them. */
function inputs(op: string, n: number, seed: number): number[] {
  const v = randomValues(n, seed, 2);
  return POSITIVE_ONLY.has(op as UnaryOp) ? v.map((x) => Math.abs(x) + 0.05) : v;
}

describe.skipIf(!gpuAvailable)('CUDA unary ops and activations', () => {
  for (const dtype of FLOAT_DTYPES) {
    it.each(UNARY_OPS)(`%s (${dtype})`, (op) => {
      for (const n of SIZES) {
        const [x, xc] = twin(pair, inputs(op, n, freshSeed()), [n], dtype);
        const held = valuesOf(x);
        const apply = (gpu: typeof pair.cuda, t: typeof x) => {
          switch (op) {
            case 'leakyRelu':
              return gpu.leakyRelu(t, SLOPE);
            case 'gelu':
              return gpu.gelu(t);
            case 'geluTanh':
              return gpu.gelu(t, { approximate: 'tanh' });
            default:
              return (gpu[op as Exclude<UnaryOp, 'leakyRelu' | 'geluTanh'>] as (t: typeof x) => typeof x).call(gpu, t);
          }
        };
        using y = apply(pair.cuda, x);
        using yc = apply(pair.cpu, xc);
        const ref = held.map((v) => UNARY_REFERENCE[op]!(v, SLOPE));
        expectMatches(`${op} ${dtype} n=${n}`, valuesOf(y), ref, valuesOf(yc), dtype);
        x.dispose();
        xc.dispose();
      }
    });
  }

  it('neg and abs on i32 wrap like the CPU backend', () => {
    const values = [0, 1, -1, 2147483647, -2147483648, 12345, -77];
    const [x, xc] = twin(pair, values, [values.length], 'i32');
    for (const op of ['neg', 'abs'] as const) {
      using y = pair.cuda[op](x);
      using yc = pair.cpu[op](xc);
      const ref = values.map((v) => (op === 'neg' ? -v | 0 : Math.abs(v) | 0));
      expectMatches(op, valuesOf(y), ref, valuesOf(yc), 'i32');
    }
  });
});

describe.skipIf(!gpuAvailable)('CUDA activation gradients', () => {
  const GRADS = ['relu', 'leakyRelu', 'sigmoid', 'tanh', 'gelu', 'geluTanh', 'silu', 'softplus'] as const;
  for (const dtype of FLOAT_DTYPES) {
    it.each(GRADS)(`%sGrad (${dtype})`, (name) => {
      for (const n of [1, 7, 1031, 65537]) {
        // Keep x away from relu's kink, where a finite difference is meaningless, and from the roots
        // of gelu's and silu's derivatives, where f32 keeps no relative accuracy (with n = 1 the
        // norm-wise error is that element's relative error).
        const xs = randomValues(n, freshSeed(), 2).map((v) => {
          const x = Math.abs(v) < 1e-3 ? v + 0.01 : v;
          const d = derivativeRef(name, x, SLOPE);
          return d !== 0 && Math.abs(d) < 1e-2 ? x + 0.15 : x;
        });
        const [x, xc] = twin(pair, xs, [n], dtype);
        const [dy, dyc] = twin(pair, randomValues(n, freshSeed()), [n], dtype);
        using g = pair.cuda.activationGrad(name, x, dy, { slope: SLOPE });
        using gc = pair.cpu.activationGrad(name, xc, dyc, { slope: SLOPE });
        const hx = valuesOf(x);
        const hdy = valuesOf(dy);
        const ref = hx.map((v, i) => hdy[i]! * derivativeRef(name, v, SLOPE));
        expectMatches(`${name}Grad ${dtype} n=${n}`, valuesOf(g), ref, valuesOf(gc), dtype);
        for (const t of [x, xc, dy, dyc]) t.dispose();
      }
    });
  }
});

const BINARY: Record<BinaryOp, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  max: Math.max,
  min: Math.min,
};
const METHOD: Record<BinaryOp, 'add' | 'sub' | 'mul' | 'div' | 'maximum' | 'minimum'> = {
  add: 'add',
  sub: 'sub',
  mul: 'mul',
  div: 'div',
  max: 'maximum',
  min: 'minimum',
};

/** Shape pairs covering every BroadcastPlan kind, odd extents, vector and scalar row paths. */
const BROADCASTS: [number[], number[], string][] = [
  [[1031], [1031], 'same'],
  [[3, 5, 7], [3, 5, 7], 'same'],
  [[1031], [], 'scalarB'],
  [[], [61], 'scalarA'],
  [[37, 16], [16], 'rowB'],
  [[37, 13], [13], 'rowB'],
  [[24], [9, 24], 'rowA'],
  [[11], [5, 11], 'rowA'],
  // Rows that are not whole vectors wrap per element: shorter than a vector, and long.
  [[50, 3], [3], 'rowB'],
  [[381], [713, 381], 'rowA'],
  [[3, 1, 7], [1, 5, 1], 'general'],
  [[2, 3, 4, 5], [3, 1, 5], 'general'],
  [[7, 1], [1, 9], 'general'],
  [[2, 1, 3, 1, 5, 1], [1, 4, 1, 2, 1, 3], 'general'],
  // Outer products with large and prime extents: the 32-bit kernels divide by magic numbers.
  [[16, 25, 61, 1], [16, 25, 1, 13], 'general'],
  [[1, 20011, 1], [3, 1, 5], 'general'],
  // Last dims of 256 and more run per row: a size-1 middle axis, both sides, rows past one block's 1024 columns.
  [[40, 1, 300], [1, 5, 300], 'general'],
  [[3, 1, 2049], [3, 7, 1], 'general'],
  [[1, 3, 1], [3, 1, 257], 'general'],
  [[2, 1, 3, 1, 5, 256], [1, 4, 1, 2, 1, 256], 'general'],
];

describe.skipIf(!gpuAvailable)('CUDA binary ops with broadcasting', () => {
  for (const dtype of DTYPES) {
    const ops = (Object.keys(BINARY) as BinaryOp[]).filter((op) => dtype !== 'i32' || op !== 'div');
    it.each(ops)(`%s (${dtype})`, (op) => {
      for (const [aShape, bShape, kind] of BROADCASTS) {
        expect(planBroadcast(op, aShape, bShape).kind).toBe(kind);
        const na = aShape.reduce((p, d) => p * d, 1);
        const nb = bShape.reduce((p, d) => p * d, 1);
        const draw = (n: number) =>
          dtype === 'i32'
            ? randomValues(n, freshSeed(), 1e4).map(Math.round)
            : randomValues(n, freshSeed(), 2).map((v) => (op === 'div' && Math.abs(v) < 0.1 ? v + 0.5 : v));
        const [a, ac] = twin(pair, draw(na), aShape, dtype);
        const [b, bc] = twin(pair, draw(nb), bShape, dtype);
        using y = pair.cuda[METHOD[op]](a, b);
        using yc = pair.cpu[METHOD[op]](ac, bc);
        const ref = broadcastRef(aShape, valuesOf(a), bShape, valuesOf(b), y.shape, (p, q) => {
          const r = BINARY[op](p, q);
          return dtype === 'i32' && op !== 'max' && op !== 'min' ? (op === 'mul' ? Math.imul(p, q) : r | 0) : r;
        });
        expectMatches(`${op} ${dtype} ${kind} [${aShape}]⊕[${bShape}]`, valuesOf(y), ref, valuesOf(yc), dtype);
        for (const t of [a, ac, b, bc]) t.dispose();
      }
    });
  }

  it('vectorAdd of 2^20 + 3 elements', () => {
    const n = 2 ** 20 + 3;
    const [a, ac] = twin(pair, randomValues(n, freshSeed()), [n], 'f32');
    const [b, bc] = twin(pair, randomValues(n, freshSeed()), [n], 'f32');
    using y = pair.cuda.vectorAdd(a, b);
    using yc = pair.cpu.vectorAdd(ac, bc);
    const ha = valuesOf(a);
    const hb = valuesOf(b);
    expectMatches('vectorAdd', valuesOf(y), ha.map((v, i) => v + hb[i]!), valuesOf(yc), 'f32');
    for (const t of [a, ac, b, bc]) t.dispose();
  });
});

describe.skipIf(!gpuAvailable)('CUDA fill, cast and copy', () => {
  it('full rounds like the CPU backend in every dtype', () => {
    for (const dtype of DTYPES) {
      for (const value of dtype === 'i32' ? [0, -7, 2147483647] : [0, 1 / 3, -65504.5, 1e-8, Infinity]) {
        for (const n of [1, 5, 1031]) {
          using t = pair.cuda.full([n], value, dtype);
          using tc = pair.cpu.full([n], value, dtype);
          expect(t.toRawArraySync(), `full ${dtype} ${value}`).toEqual(tc.toRawArraySync());
        }
      }
    }
  });

  it('cast between every pair of dtypes matches the CPU backend bit for bit', () => {
    const values = [...randomValues(1029, freshSeed(), 3e4), 0.5, -0.5, 1.5, 2.5, 70000, -70000, 3e9, -3e9, NaN];
    for (const from of DTYPES) {
      const source = from === 'i32' ? values.map((v) => (Number.isFinite(v) ? Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.round(v))) : 0)) : values;
      const [x, xc] = twin(pair, source, [source.length], from);
      for (const to of DTYPES) {
        using y = pair.cuda.cast(x, to);
        using yc = pair.cpu.cast(xc, to);
        expect(y.toRawArraySync(), `cast ${from} → ${to}`).toEqual(yc.toRawArraySync());
      }
      x.dispose();
      xc.dispose();
    }
  });

  it('copy is bit-exact', () => {
    for (const dtype of DTYPES) {
      using x = pair.cuda.rand([333], { seed: freshSeed(), dtype: dtype === 'i32' ? 'f32' : dtype });
      using y = pair.cuda.copy(x);
      expect(y.toRawArraySync()).toEqual(x.toRawArraySync());
    }
  });
});

describe.skipIf(!gpuAvailable)('CUDA scalar (misaligned) kernel paths through the backend', () => {
  /** A view `offset` elements into a fresh buffer holding `values`. */
  function viewAt(values: number[], dtype: DType, offset: number): TensorView {
    const backend = pair.cuda.backend;
    const n = values.length + offset;
    const buffer = backend.alloc(n * dtypeSize[dtype]);
    const host = dtype === 'f32' ? Float32Array.from([...new Array<number>(offset).fill(0), ...values]) : Int32Array.from([...new Array<number>(offset).fill(0), ...values]);
    backend.write(buffer, host);
    return { buffer, dtype, shape: [values.length], offset, size: values.length };
  }

  function readView(view: TensorView): number[] {
    const host = view.dtype === 'f32' ? new Float32Array(view.size) : new Int32Array(view.size);
    pair.cuda.backend.read(view.buffer, host, view.offset * dtypeSize[view.dtype]);
    return Array.from(host);
  }

  it('unary, binary, binary with a number, cast and fill at offsets that break 16-byte alignment', () => {
    const backend = pair.cuda.backend;
    const n = 1031;
    const xs = randomValues(n, freshSeed());
    const ys = randomValues(n, freshSeed());
    for (const offset of [1, 2, 3]) {
      const x = viewAt(xs, 'f32', offset);
      const y = viewAt(ys, 'f32', offset + 1);
      const out = viewAt(new Array<number>(n).fill(0), 'f32', offset + 2);
      const hx = readView(x);
      const hy = readView(y);
      backend.unary('exp', x, out);
      expectMatches('exp misaligned', readView(out), hx.map(Math.exp), hx.map((v) => Math.fround(Math.exp(v))), 'f32');
      backend.binary('mul', x, y, out, planBroadcast('mul', [n], [n]));
      expectMatches('mul misaligned', readView(out), hx.map((v, i) => v * hy[i]!), hx.map((v, i) => Math.fround(v * hy[i]!)), 'f32');
      backend.binaryScalar('sub', x, 0.75, false, out);
      expect(readView(out)).toEqual(hx.map((v) => Math.fround(v - 0.75)));
      backend.binaryScalar('div', x, 0.75, true, out);
      expect(readView(out)).toEqual(hx.map((v) => Math.fround(0.75 / v)));
      backend.fill(out, 2.5);
      expect(readView(out)).toEqual(new Array<number>(n).fill(2.5));
      const ints = viewAt(new Array<number>(n).fill(0), 'i32', offset);
      backend.cast(x, ints);
      expect(readView(ints)).toEqual(hx.map((v) => Math.trunc(v) | 0)); // | 0: i32 has no -0
      const intsOut = viewAt(new Array<number>(n).fill(0), 'i32', offset + 1);
      backend.binaryScalar('mul', ints, -3, true, intsOut);
      expect(readView(intsOut)).toEqual(hx.map((v) => Math.imul(-3, Math.trunc(v) | 0)));
      backend.free(intsOut.buffer);
      for (const v of [x, y, out, ints]) backend.free(v.buffer);
    }
  });
});
