import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { ActivationName, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { cpuCompute, FLOAT_DTYPES, freshSeed, product, randomValues, relError, TOLERANCE } from './helpers.js';
import { broadcastRef, derivativeRef, UNARY_REFERENCE } from './reference.js';

const SHAPES: number[][] = [[7, 13], [3, 1, 5], [1], [], [5, 0]];

let gpu: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
});
afterAll(() => gpu.dispose());

/** Inputs each op is defined on: positive ones for log/sqrt/rsqrt. */
function inputsFor(op: string, n: number, seed: number): number[] {
  const values = randomValues(n, seed, 2);
  return ['log', 'sqrt', 'rsqrt'].includes(op) ? values.map((v) => Math.abs(v) + 0.05) : values;
}

const UNARY_OPS: Record<UnaryOp, (x: Tensor) => Tensor> = {
  neg: (x) => gpu.neg(x),
  abs: (x) => gpu.abs(x),
  exp: (x) => gpu.exp(x),
  log: (x) => gpu.log(x),
  sqrt: (x) => gpu.sqrt(x),
  rsqrt: (x) => gpu.rsqrt(x),
  relu: (x) => gpu.relu(x),
  leakyRelu: (x) => gpu.leakyRelu(x, 0.2),
  sigmoid: (x) => gpu.sigmoid(x),
  tanh: (x) => gpu.tanh(x),
  gelu: (x) => gpu.gelu(x),
  geluTanh: (x) => gpu.gelu(x, { approximate: 'tanh' }),
  silu: (x) => gpu.silu(x),
  softplus: (x) => gpu.softplus(x),
};

describe.each(FLOAT_DTYPES)('unary ops in %s', (dtype) => {
  for (const [name, apply] of Object.entries(UNARY_OPS) as [UnaryOp, (x: Tensor) => Tensor][]) {
    it.each(SHAPES.map((s) => [JSON.stringify(s), s] as const))(`${name} on %s`, async (_label, shape) => {
      const seed = freshSeed();
      using x = gpu.tensor(inputsFor(name, product(shape), seed), shape, dtype);
      using out = apply(x);
      expect(out.shape).toEqual(shape);
      expect(out.dtype).toBe(dtype);
      const stored = await x.toArray();
      const ref = Array.from(stored, (v) => UNARY_REFERENCE[name](v, 0.2));
      expect(relError(await out.toArray(), ref, dtype), `seed ${seed}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
    });
  }

  it('uses slope 0.01 for leakyRelu by default', async () => {
    using x = gpu.tensor([-2, -0.5, 3], [3], dtype);
    using out = gpu.leakyRelu(x);
    const stored = await x.toArray();
    expect(relError(await out.toArray(), Array.from(stored, (v) => (v > 0 ? v : 0.01 * v)), dtype)).toBeLessThanOrEqual(TOLERANCE[dtype]);
  });
});

describe('unary ops: special values', () => {
  it('propagate NaN through relu, max-like ops, and give the IEEE results at the edges', async () => {
    using x = gpu.tensor([NaN, -0, Infinity, -Infinity, 0], [5]);
    expect(Array.from(await gpu.relu(x).toArray())).toEqual([NaN, 0, Infinity, 0, 0]);
    expect(Array.from(await gpu.sigmoid(x).toArray())).toEqual([NaN, 0.5, 1, 0, 0.5]);
    expect(Array.from(await gpu.exp(x).toArray())).toEqual([NaN, 1, Infinity, 0, 1]);
    expect(Array.from(await gpu.log(x).toArray())).toEqual([NaN, -Infinity, Infinity, NaN, -Infinity]);
  });

  it('keeps softplus and sigmoid finite and exact-ish far out', async () => {
    using x = gpu.tensor([-100, 100, -30, 30], [4]);
    expect(Array.from(await gpu.softplus(x).toArray())).toEqual([Math.fround(Math.exp(-100)), 100, Math.fround(Math.log1p(Math.exp(-30))), 30]);
    expect(Array.from(await gpu.sigmoid(x).toArray())).toEqual([Math.fround(1 / (1 + Math.exp(100))), 1, Math.fround(1 / (1 + Math.exp(30))), 1]);
  });

  it('computes neg and abs on i32 with wraparound', async () => {
    using x = gpu.tensor(new Int32Array([5, -7, 0, -2147483648, 2147483647]));
    expect(Array.from(await gpu.neg(x).toArray())).toEqual([-5, 7, 0, -2147483648, -2147483647]);
    expect(Array.from(await gpu.abs(x).toArray())).toEqual([5, 7, 0, -2147483648, 2147483647]);
  });
});

const GRAD_NAMES: ActivationName[] = ['relu', 'leakyRelu', 'sigmoid', 'tanh', 'gelu', 'geluTanh', 'silu', 'softplus'];

describe('the derivative references', () => {
  it.each(GRAD_NAMES)('%s agrees with a central difference of its forward reference', (name) => {
    for (let x = -3; x <= 3; x += 1 / 64 + 1e-3) {
      if (Math.abs(x) < 1e-2) continue;  // relu's kink
      const h = 1e-6;
      const f = UNARY_REFERENCE[name];
      const central = (f(x + h, 0.2) - f(x - h, 0.2)) / (2 * h);
      expect(Math.abs(derivativeRef(name, x, 0.2) - central), `${name}'(${x})`).toBeLessThanOrEqual(1e-8);
    }
  });
});

describe.each(FLOAT_DTYPES)('activation gradients in %s', (dtype) => {
  it.each(GRAD_NAMES)('%s: dy · f\'(x) matches the float64 derivative', async (name) => {
    const seed = freshSeed();
    const shape = [7, 13];
    using x = gpu.tensor(randomValues(91, seed, 2), shape, dtype);
    using dy = gpu.tensor(randomValues(91, seed + 1), shape, dtype);
    using out = gpu.activationGrad(name, x, dy, { slope: 0.2 });
    const xs = await x.toArray();
    const dys = await dy.toArray();
    const ref = Array.from(xs, (v, i) => dys[i]! * derivativeRef(name, v, 0.2));
    expect(relError(await out.toArray(), ref, dtype), `seed ${seed}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
  });

  it('selects the tanh form of gelu with approximate: tanh', async () => {
    const seed = freshSeed();
    using x = gpu.tensor(randomValues(50, seed, 2), [50], dtype);
    using dy = gpu.ones([50], dtype);
    using exact = gpu.activationGrad('gelu', x, dy, { approximate: 'tanh' });
    using viaName = gpu.activationGrad('geluTanh', x, dy);
    expect(Array.from(await exact.toArray())).toEqual(Array.from(await viaName.toArray()));
    const xs = await x.toArray();
    const ref = Array.from(xs, (v) => derivativeRef('geluTanh', v, 0));
    expect(relError(await exact.toArray(), ref, dtype)).toBeLessThanOrEqual(TOLERANCE[dtype]);
  });
});

const BINARY: Record<string, { run: (a: Tensor | number, b: Tensor | number) => Tensor; ref: (x: number, y: number) => number }> = {
  add: { run: (a, b) => gpu.add(a, b), ref: (x, y) => x + y },
  sub: { run: (a, b) => gpu.sub(a, b), ref: (x, y) => x - y },
  mul: { run: (a, b) => gpu.mul(a, b), ref: (x, y) => x * y },
  div: { run: (a, b) => gpu.div(a, b), ref: (x, y) => x / y },
  maximum: { run: (a, b) => gpu.maximum(a, b), ref: (x, y) => (x > y ? x : y) },
  minimum: { run: (a, b) => gpu.minimum(a, b), ref: (x, y) => (x < y ? x : y) },
};

/** [a shape, b shape, broadcast shape]: same, rows both ways, trailing dims, scalar, outer, general, empty. */
const BROADCASTS: [number[], number[], number[]][] = [
  [[7, 13], [7, 13], [7, 13]],
  [[7, 13], [13], [7, 13]],
  [[13], [7, 13], [7, 13]],
  [[3, 1, 5], [4, 5], [3, 4, 5]],
  [[7, 13], [], [7, 13]],
  [[], [3, 1, 5], [3, 1, 5]],
  [[6, 1], [1, 7], [6, 7]],
  [[2, 3, 4, 5], [3, 1, 5], [2, 3, 4, 5]],
  [[2, 1, 4, 1, 3], [5, 1], [2, 1, 4, 5, 3]],
  [[2, 1, 3, 1, 2, 1], [4, 1, 5, 1, 3], [2, 4, 3, 5, 2, 3]],
  [[1], [1], [1]],
  [[5, 0], [1], [5, 0]],
  [[5, 1], [0], [5, 0]],
];

describe.each(FLOAT_DTYPES)('binary ops in %s', (dtype) => {
  for (const [name, { run, ref }] of Object.entries(BINARY)) {
    it.each(BROADCASTS.map(([a, b, o]) => [`${JSON.stringify(a)} with ${JSON.stringify(b)}`, a, b, o] as const))(
      `${name}: %s`,
      async (_label, aShape, bShape, outShape) => {
        const seed = freshSeed();
        using a = gpu.tensor(randomValues(product(aShape), seed), aShape, dtype);
        // Divisors kept away from zero so the quotient stays in range.
        const bValues = randomValues(product(bShape), seed + 1).map((v) => (name === 'div' ? Math.sign(v || 1) * (0.5 + Math.abs(v)) : v));
        using b = gpu.tensor(bValues, bShape, dtype);
        using out = run(a, b);
        expect(out.shape).toEqual(outShape);
        const expected = broadcastRef(aShape, await a.toArray(), bShape, await b.toArray(), outShape, ref);
        expect(relError(await out.toArray(), expected, dtype), `seed ${seed}`).toBeLessThanOrEqual(TOLERANCE[dtype]);
      },
    );
  }

  it('accepts JS numbers on either side', async () => {
    const seed = freshSeed();
    using x = gpu.tensor(randomValues(12, seed).map((v) => Math.abs(v) + 0.5), [3, 4], dtype);
    const xs = await x.toArray();
    const q = (v: number) => (dtype === 'f32' ? Math.fround(v) : v);
    const cases: [Tensor, number[]][] = [
      [gpu.add(x, 2.5), Array.from(xs, (v) => v + 2.5)],
      [gpu.sub(2.5, x), Array.from(xs, (v) => 2.5 - v)],
      [gpu.div(1, x), Array.from(xs, (v) => 1 / v)],
      [x.mul(-3), Array.from(xs, (v) => -3 * v)],
      [x.maximum(1), Array.from(xs, (v) => Math.max(v, 1))],
      [x.minimum(q(1.25)), Array.from(xs, (v) => Math.min(v, 1.25))],
    ];
    for (const [out, expected] of cases) {
      expect(out.shape).toEqual([3, 4]);
      expect(relError(await out.toArray(), expected, dtype)).toBeLessThanOrEqual(TOLERANCE[dtype]);
      out.dispose();
    }
  });
});

describe('binary ops: exactness, NaN and i32', () => {
  it('rounds f32 add/sub/mul/div exactly once (bit-exact to IEEE f32)', async () => {
    const seed = freshSeed();
    const a = Float32Array.from(randomValues(1000, seed, 100));
    const b = Float32Array.from(randomValues(1000, seed + 1, 0.01)).map((v) => v || 1);
    using ta = gpu.tensor(a);
    using tb = gpu.tensor(b);
    const f = Math.fround;
    expect(Array.from(await gpu.add(ta, tb).toArray())).toEqual(Array.from(a, (v, i) => f(v + b[i]!)));
    expect(Array.from(await gpu.mul(ta, tb).toArray())).toEqual(Array.from(a, (v, i) => f(v * b[i]!)));
    expect(Array.from(await gpu.div(ta, tb).toArray())).toEqual(Array.from(a, (v, i) => f(v / b[i]!)));
  });

  it('propagates NaN through maximum and minimum', async () => {
    using a = gpu.tensor([NaN, 1, 2]);
    using b = gpu.tensor([0, NaN, 3]);
    expect(Array.from(await gpu.maximum(a, b).toArray())).toEqual([NaN, NaN, 3]);
    expect(Array.from(await gpu.minimum(a, b).toArray())).toEqual([NaN, NaN, 2]);
  });

  it('computes i32 add/sub/mul/max/min with 32-bit wraparound and broadcasting', async () => {
    const seed = freshSeed();
    const next = randomValues(60, seed).map((v) => Math.round(v * 2 ** 30));
    const aValues = new Int32Array(next.slice(0, 48));
    const bValues = new Int32Array(next.slice(48, 52));
    using a = gpu.tensor(aValues, [12, 4]);
    using b = gpu.tensor(bValues, [4]);
    const wrap = (v: bigint) => Number(BigInt.asIntN(32, v));
    const refs: Record<string, (x: number, y: number) => number> = {
      add: (x, y) => wrap(BigInt(x) + BigInt(y)),
      sub: (x, y) => wrap(BigInt(x) - BigInt(y)),
      mul: (x, y) => wrap(BigInt(x) * BigInt(y)),
      maximum: (x, y) => Math.max(x, y),
      minimum: (x, y) => Math.min(x, y),
    };
    for (const [name, ref] of Object.entries(refs)) {
      using out = BINARY[name]!.run(a, b);
      expect(out.dtype).toBe('i32');
      expect(Array.from(await out.toArray()), name).toEqual(broadcastRef([12, 4], aValues, [4], bValues, [12, 4], ref));
    }
    using big = gpu.tensor(new Int32Array([2147483647]));
    expect(Array.from(await gpu.add(big, 1).toArray())).toEqual([-2147483648]);
  });

  it('vectorAdd adds equal shapes', async () => {
    const seed = freshSeed();
    using a = gpu.tensor(randomValues(4097, seed));
    using b = gpu.tensor(randomValues(4097, seed + 1));
    const as = await a.toArray();
    const bs = await b.toArray();
    using out = gpu.vectorAdd(a, b);
    expect(relError(await out.toArray(), Array.from(as, (v, i) => v + bs[i]!))).toBeLessThanOrEqual(TOLERANCE.f32);
  });
});
