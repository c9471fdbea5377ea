import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planBroadcast } from '../../../src/compute/core/broadcast.js';
import { dtypeSize, fromBf16Array, fromF16Array, toBf16Array, toF16Array, type DType } from '../../../src/compute/core/dtype.js';
import type { BinaryOp, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import { makeView, type BackendBuffer } from '../../../src/compute/core/view.js';
import { CpuBackend } from '../../../src/compute/cpu/cpu-backend.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { broadcastRef, derivativeRef, UNARY_REFERENCE } from '../compute/reference.js';
import {
  closePair,
  expectMatches,
  expectSameValues,
  FLOAT_DTYPES,
  freshSeed,
  openPair,
  randomValues,
  skipReason,
  suite,
  twin,
  valuesOf,
  type Pair,
} from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (skipReason === undefined) pair = await openPair();
});
afterAll(() => closePair(pair));

/** Odd sizes: 1, below a word pair, primes, one above a workgroup's 512 elements. */
const SIZES = [1, 3, 7, 61, 513];
const UNARY = Object.keys(UNARY_REFERENCE) as UnaryOp[];
const POSITIVE_ONLY = new Set<UnaryOp>(['log', 'sqrt', 'rsqrt']);
const SLOPE = 0.07;

function inputs(op: string, n: number, seed: number): number[] {
  const v = randomValues(n, seed, 2);
  return POSITIVE_ONLY.has(op as UnaryOp) ? v.map((x) => Math.abs(x) + 0.05) : v;
}

function applyUnary(gpu: Pair['webgpu'], op: UnaryOp, t: Tensor): Tensor {
  if (op === 'leakyRelu') return gpu.leakyRelu(t, SLOPE);
  if (op === 'geluTanh') return gpu.gelu(t, { approximate: 'tanh' });
  return (gpu[op as Exclude<UnaryOp, 'leakyRelu' | 'geluTanh'>] as (t: Tensor) => Tensor).call(gpu, t);
}

describe.skipIf(skipReason)(suite('WebGPU unary ops and activations'), () => {
  for (const dtype of FLOAT_DTYPES) {
    it.each(UNARY)(`%s (${dtype})`, async (op) => {
      for (const n of SIZES) {
        const [x, xc] = twin(pair, inputs(op, n, freshSeed()), [n], dtype);
        const held = await valuesOf(x);
        using y = applyUnary(pair.webgpu, op, x);
        using yc = applyUnary(pair.cpu, op, xc);
        const ref = held.map((v) => UNARY_REFERENCE[op]!(v, SLOPE));
        expectMatches(`${op} ${dtype} n=${n}`, await valuesOf(y), ref, await valuesOf(yc), dtype);
        x.dispose();
        xc.dispose();
      }
    });
  }

  it('neg and abs on i32 wrap like the CPU backend', async () => {
    const values = [0, 1, -1, 2147483647, -2147483648, 12345, -77];
    const [x, xc] = twin(pair, values, [values.length], 'i32');
    for (const op of ['neg', 'abs'] as const) {
      using y = pair.webgpu[op](x);
      using yc = pair.cpu[op](xc);
      const ref = values.map((v) => (op === 'neg' ? -v | 0 : Math.abs(v) | 0));
      expectMatches(op, await valuesOf(y), ref, await valuesOf(yc), 'i32');
    }
  });

  it('special values give what the CPU backend gives (NaN, ±Infinity, −0, far tails)', async () => {
    const values = [NaN, -0, 0, Infinity, -Infinity, -100, 100, -30, 30, 1e-30, -1e-30, 1e-4, -5];
    const [x, xc] = twin(pair, values, [values.length], 'f32');
    for (const op of UNARY) {
      using y = applyUnary(pair.webgpu, op, x);
      using yc = applyUnary(pair.cpu, op, xc);
      const got = await valuesOf(y);
      const want = await valuesOf(yc);
      // Same NaN/±Infinity/zero pattern (subnormal results included); finite values within the f32
      // conditioning of the far tails (geluTanh(−5) moves 2 ulp per ulp of its argument) and, below
      // 2^-126, of subnormal intermediates (silu(−100) = −100 · a 27-ulp subnormal sigmoid).
      const kind = (v: number) => (Number.isNaN(v) ? 'NaN' : !Number.isFinite(v) ? String(v) : v === 0 ? 'zero' : 'finite');
      // WGSL lets a device flush f32 subnormal results to zero, and NVIDIA's Vulkan driver does: a
      // result the CPU gives as a subnormal may come back as zero (and only such a result).
      const flushed = (g: number, w: number) => g === 0 && w !== 0 && Math.abs(w) < 2 ** -126;
      expect(got.map((g, i) => (flushed(g, want[i]!) ? kind(want[i]!) : kind(g))), `${op} kinds`).toEqual(want.map(kind));
      got.forEach((g, i) => {
        if (Number.isFinite(g) && g !== 0) expect(Math.abs(g - want[i]!), `${op}(${values[i]})`).toBeLessThanOrEqual(2e-6 * Math.abs(want[i]!) + 2 ** -135);
      });
    }
  });
});

describe.skipIf(skipReason)(suite('WebGPU activation gradients'), () => {
  const GRADS = ['relu', 'leakyRelu', 'sigmoid', 'tanh', 'gelu', 'geluTanh', 'silu', 'softplus'] as const;
  for (const dtype of FLOAT_DTYPES) {
    it.each(GRADS)(`%sGrad (${dtype})`, async (name) => {
      for (const n of [1, 7, 513]) {
        // Away from relu's kink, and from the roots of gelu's and silu's derivatives, where f32
        // keeps no relative accuracy (with n = 1 the norm-wise error is that element's).
        const xs = randomValues(n, freshSeed(), 2).map((v) => {
          const x = Math.abs(v) < 1e-3 ? v + 0.01 : v;
          const d = derivativeRef(name, x, SLOPE);
          return d !== 0 && Math.abs(d) < 1e-2 ? x + 0.15 : x;
        });
        const [x, xc] = twin(pair, xs, [n], dtype);
        const [dy, dyc] = twin(pair, randomValues(n, freshSeed()), [n], dtype);
        using g = pair.webgpu.activationGrad(name, x, dy, { slope: SLOPE });
        using gc = pair.cpu.activationGrad(name, xc, dyc, { slope: SLOPE });
        const hx = await valuesOf(x);
        const hdy = await valuesOf(dy);
        const ref = hx.map((v, i) => hdy[i]! * derivativeRef(name, v, SLOPE));
        expectMatches(`${name}Grad ${dtype} n=${n}`, await valuesOf(g), ref, await valuesOf(gc), dtype);
        for (const t of [x, xc, dy, dyc]) t.dispose();
      }
    });
  }

  it('reluGrad keeps NaN and gives 0 at and below 0', async () => {
    const [x, xc] = twin(pair, [NaN, -1, 0, 2], [4], 'f32');
    const [dy, dyc] = twin(pair, [1, 1, 1, 3], [4], 'f32');
    using g = pair.webgpu.activationGrad('relu', x, dy);
    using gc = pair.cpu.activationGrad('relu', xc, dyc);
    expectSameValues('reluGrad', await valuesOf(g), await valuesOf(gc));
  });
});

const BINARY: Record<BinaryOp, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  max: Math.max,
  min: Math.min,
};
const METHOD = { add: 'add', sub: 'sub', mul: 'mul', div: 'div', max: 'maximum', min: 'minimum' } as const;

/** Shape pairs covering every BroadcastPlan kind with odd extents. */
const BROADCASTS: [number[], number[], string][] = [
  [[1031], [1031], 'same'],
  [[3, 5, 7], [3, 5, 7], 'same'],
  [[61], [], 'scalarB'],
  [[], [61], 'scalarA'],
  [[37, 13], [13], 'rowB'],
  [[11], [5, 11], 'rowA'],
  [[3, 1, 7], [1, 5, 1], 'general'],
  [[2, 3, 4, 5], [3, 1, 5], 'general'],
  [[2, 1, 3, 1, 5, 1], [1, 4, 1, 2, 1, 3], 'general'],
];

describe.skipIf(skipReason)(suite('WebGPU broadcasting binary ops'), () => {
  const size = (s: number[]) => s.reduce((p, d) => p * d, 1);
  for (const dtype of [...FLOAT_DTYPES, 'i32'] as const) {
    it.each(Object.keys(BINARY) as BinaryOp[])(`%s (${dtype})`, async (op) => {
      if (dtype === 'i32' && op === 'div') return;
      // Every broadcast kind for add; the dense and the general kind for the other ops (the kinds share the op's code).
      for (const [aShape, bShape, kind] of BROADCASTS.filter(([, , k]) => op === 'add' || k === 'same' || k === 'general')) {
        expect(planBroadcast(op, aShape, bShape).kind).toBe(kind);
        const gen = (n: number) => (dtype === 'i32' ? randomValues(n, freshSeed(), 1e9).map(Math.trunc) : randomValues(n, freshSeed(), 2));
        const [a, ac] = twin(pair, gen(size(aShape)), aShape, dtype);
        const [b, bc] = twin(pair, gen(size(bShape)), bShape, dtype);
        const method = METHOD[op];
        using y = pair.webgpu[method](a, b);
        using yc = pair.cpu[method](ac, bc);
        const f = dtype === 'i32' && op !== 'max' && op !== 'min' ? (x: number, z: number) => (op === 'mul' ? Math.imul(x, z) : BINARY[op](x, z) | 0) : BINARY[op];
        const ref = broadcastRef(aShape, await valuesOf(a), bShape, await valuesOf(b), y.shape, f);
        expectMatches(`${op} ${dtype} ${JSON.stringify(aShape)} ${JSON.stringify(bShape)}`, await valuesOf(y), ref, await valuesOf(yc), dtype);
        for (const t of [a, ac, b, bc]) t.dispose();
      }
    });
  }

  it('max and min propagate NaN from either side and order signed zeros as Math.max/min; division by zero gives ±Infinity', async () => {
    const [a, ac] = twin(pair, [NaN, 1, 2, 1, 0, -1, 0, -0, -0], [9], 'f32');
    const [b, bc] = twin(pair, [1, NaN, 3, 0, 0, 0, -0, 0, -0], [9], 'f32');
    for (const method of ['maximum', 'minimum', 'div'] as const) {
      using y = pair.webgpu[method](a, b);
      using yc = pair.cpu[method](ac, bc);
      expect(await y.toRawArray(), method).toEqual(await yc.toRawArray());
    }
  });
});

describe.skipIf(skipReason)(suite('WebGPU cast, fill and copy'), () => {
  const DTYPES: DType[] = ['f32', 'f16', 'bf16', 'i32'];
  const SPECIAL = [0, -0, 1.5, -2.5, 65504, 65520, 1e-8, 3.4e38, -1e9, 2 ** 31, -(2 ** 31) - 1000, 16777217, NaN, Infinity, -Infinity];

  it.each(DTYPES.flatMap((from) => DTYPES.filter((to) => to !== from).map((to) => [from, to] as const)))('%s → %s', async (from, to) => {
    const values = from === 'i32' ? [0, 1, -7, 2147483647, -2147483648, 16777217, 33554435, -65519] : [...SPECIAL, ...randomValues(61, freshSeed(), 100)];
    const [x, xc] = twin(pair, values, [values.length], from);
    using y = pair.webgpu.cast(x, to);
    using yc = pair.cpu.cast(xc, to);
    // Casts are exact functions of the stored bits: the same bits as the CPU.
    expect(await y.toRawArray(), `${from} → ${to}`).toEqual(await yc.toRawArray());
    x.dispose();
    xc.dispose();
  });

  it.each(DTYPES)('fill and copy (%s)', async (dtype) => {
    for (const value of dtype === 'i32' ? [0, -5, 2147483647] : [0, -0, 1 / 3, 70000, NaN, -Infinity]) {
      using y = pair.webgpu.full([3, 67], value, dtype);
      using yc = pair.cpu.full([3, 67], value, dtype);
      expect(await y.toRawArray(), `full ${value}`).toEqual(await yc.toRawArray());
      using z = pair.webgpu.copy(y);
      expect(await z.toRawArray(), `copy ${value}`).toEqual(await yc.toRawArray());
    }
  });
});

describe.skipIf(skipReason)(suite('WebGPU views at any element offset'), () => {
  /** Host bits of values in a dtype. */
  function encode(dtype: DType, values: number[]): ArrayBufferView {
    if (dtype === 'f16') return toF16Array(values);
    if (dtype === 'bf16') return toBf16Array(values);
    return dtype === 'i32' ? Int32Array.from(values) : Float32Array.from(values);
  }
  function decode(dtype: DType, bytes: Uint8Array): number[] {
    if (dtype === 'f16') return Array.from(fromF16Array(new Uint16Array(bytes.buffer)));
    if (dtype === 'bf16') return Array.from(fromBf16Array(new Uint16Array(bytes.buffer)));
    return Array.from(dtype === 'i32' ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer));
  }

  it.each(['f32', 'f16', 'bf16'] as const)('ops on odd offsets write their elements and leave the neighbours (%s)', (dtype) => {
    const cpu = new CpuBackend();
    const backend = pair.backend;
    const total = 41;
    const sentinel = Array.from({ length: total }, (_, i) => i + 0.5);
    for (const [offset, n] of [[1, 7], [3, 2], [5, 1], [2, 33]] as const) {
      const bytes = total * dtypeSize[dtype];
      const [gx, gy, cx, cy] = [backend.alloc(bytes), backend.alloc(bytes), cpu.alloc(bytes), cpu.alloc(bytes)];
      const xs = randomValues(total, freshSeed());
      for (const [g, c, v] of [[gx, cx, xs], [gy, cy, sentinel]] as const) {
        backend.write(g, encode(dtype, v));
        cpu.write(c, encode(dtype, v));
      }
      const view = (buf: BackendBuffer) => makeView(buf, dtype, [n], offset);
      backend.unary('exp', view(gx), view(gy));
      cpu.unary('exp', view(cx), view(cy));
      const got = new Uint8Array(bytes);
      const want = new Uint8Array(bytes);
      backend.read(gy, got);
      cpu.read(cy, want);
      const g = decode(dtype, got);
      const w = decode(dtype, want);
      expect(g.slice(0, offset), `before, offset ${offset}`).toEqual(w.slice(0, offset));
      expect(g.slice(offset + n), `after, offset ${offset} n ${n}`).toEqual(w.slice(offset + n));
      g.slice(offset, offset + n).forEach((v, i) => expect(Math.abs(v - w[offset + i]!)).toBeLessThanOrEqual(1e-2 * Math.abs(w[offset + i]!)));
      for (const b of [gx, gy]) backend.free(b);
    }
  });

  it.each(['f32', 'f16', 'bf16', 'i32'] as const)('write and read at any byte offset and length (%s)', async (dtype) => {
    const backend = pair.backend;
    const size = dtypeSize[dtype];
    const buf = backend.alloc(64 * size);
    const base = Array.from({ length: 64 }, (_, i) => i * 3 + 1);
    backend.write(buf, encode(dtype, base));
    for (const [offset, n] of [[1, 1], [1, 2], [3, 5], [0, 3], [7, 20], [63, 1]] as const) {
      const values = randomValues(n, freshSeed(), 50).map(Math.round);
      backend.write(buf, encode(dtype, values), offset * size);
      const expected = [...base];
      values.forEach((v, i) => (expected[offset + i] = v));
      const back = new Uint8Array(64 * size);
      await backend.readAsync(buf, back);
      const got = decode(dtype, back);
      expect(got, `write ${n} at ${offset}`).toEqual(decode(dtype, new Uint8Array(encode(dtype, expected).buffer)));
      // And a read of just that range, from an odd start.
      const part = new Uint8Array(n * size);
      backend.read(buf, part, offset * size);
      expect(decode(dtype, part)).toEqual(got.slice(offset, offset + n));
      base.splice(offset, n, ...values);
    }
    backend.free(buf);
  });
});
