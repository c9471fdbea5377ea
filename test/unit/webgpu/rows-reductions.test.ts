import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReduceOp } from '../../../src/compute/core/reduce-plan.js';
import { rowLaunch } from '../../../src/compute/webgpu/rows.js';
import { reduceRef, rowsRef } from '../compute/reference.js';
import {
  closePair,
  expectMatches,
  expectSameValues,
  FLOAT_DTYPES,
  freshSeed,
  openPair,
  product,
  randomValues,
  skipReason,
  suite,
  twin,
  valuesOf,
  type Pair,
} from './setup.js';

/** The default backend (subgroup shuffles where the adapter allows) and one held to workgroup memory. */
const pairs: Record<string, Pair> = {};
beforeAll(async () => {
  if (skipReason !== undefined) return;
  pairs.subgroups = await openPair();
  pairs.workgroup = await openPair({ subgroups: false });
});
afterAll(() => Object.values(pairs).forEach(closePair));

const REF: Record<ReduceOp, (s: number[]) => number> = {
  sum: (s) => s.reduce((a, b) => a + b, 0),
  mean: (s) => s.reduce((a, b) => a + b, 0) / s.length,
  max: (s) => (s.some(Number.isNaN) ? NaN : Math.max(...s)),
  min: (s) => (s.some(Number.isNaN) ? NaN : Math.min(...s)),
  argmax: (s) => {
    const nan = s.findIndex(Number.isNaN);
    return nan >= 0 ? nan : s.indexOf(Math.max(...s));
  },
};

/** Shapes and axes reaching every launch: team rows of each size, split rows, columns, split columns, everything. */
const CASES: [number[], number | undefined][] = [
  [[7, 13], 1],
  [[5, 300], 1],
  [[3, 3001], -1],
  [[2, 20011], 1],
  [[17, 5, 3], 1],
  [[9, 7], 0],
  [[3, 700, 2], 1],
  [[30011], undefined],
  [[4, 5, 6], undefined],
  [[1], 0],
];

describe.skipIf(skipReason)(suite('WebGPU reductions'), () => {
  // The workgroup-memory path (devices without fixed-size subgroups) differs only in how a team
  // combines, whatever the dtype: every dtype with subgroups, f32 and i32 without.
  for (const mode of ['subgroups', 'workgroup'] as const) {
    for (const dtype of mode === 'subgroups' ? ([...FLOAT_DTYPES, 'i32'] as const) : (['f32', 'i32'] as const)) {
      it.each(['sum', 'mean', 'max', 'min', 'argmax'] as const)(`%s (${dtype}, ${mode})`, async (op) => {
        if (dtype === 'i32' && op === 'mean') return;
        const pair = pairs[mode]!;
        for (const [shape, axis] of CASES) {
          const n = product(shape);
          // Integer-valued inputs with ties, so argmax's first-maximum rule is exercised.
          const values = randomValues(n, freshSeed(), dtype === 'i32' ? 1e6 : 3).map((v) => (dtype === 'i32' ? Math.trunc(v) : Math.round(v * 4) / 4));
          const [x, xc] = twin(pair, values, shape, dtype);
          const apply = (gpu: Pair['webgpu'], t: typeof x) => (axis === undefined ? gpu[op](t) : gpu[op](t, axis));
          using y = apply(pair.webgpu, x);
          using yc = apply(pair.cpu, xc);
          const held = await valuesOf(x);
          const norm = axis === undefined ? undefined : (axis + shape.length) % shape.length;
          const fn = dtype === 'i32' && op === 'sum' ? (s: number[]) => s.reduce((a, b) => (a + b) | 0, 0) : REF[op];
          const ref = reduceRef(shape, held, norm, fn);
          const outType = op === 'argmax' ? 'i32' : dtype;
          // A sum of n f32 terms rounds more than one product: allow for the length (and the 16-bit output's rounding).
          const tol = outType === 'i32' ? 0 : (dtype === 'f32' ? 2e-6 : dtype === 'f16' ? 1e-3 : 8e-3) * Math.max(1, Math.log2(n));
          expectMatches(`${op} ${dtype} ${JSON.stringify(shape)} axis ${axis}`, await valuesOf(y), ref, await valuesOf(yc), outType, tol);
          x.dispose();
          xc.dispose();
        }
      });
    }
  }

  it('max, min and argmax see NaN first, and argmax returns the first maximum', async () => {
    const pair = pairs.subgroups!;
    const rows = [
      [1, 5, NaN, 5, NaN],
      [-Infinity, -Infinity, -Infinity, -Infinity, -Infinity],
      [2, 7, 7, 1, 7],
      [-0, 0, -1, Infinity, 3],
    ];
    const [x, xc] = twin(pair, rows.flat(), [4, 5], 'f32');
    for (const op of ['max', 'min', 'argmax'] as const) {
      using y = pair.webgpu[op](x, 1);
      using yc = pair.cpu[op](xc, 1);
      expectSameValues(op, await valuesOf(y), await valuesOf(yc));
    }
    // The same along a strided axis, and split over many chunks.
    const long = randomValues(50_000, freshSeed());
    long[31_337] = NaN;
    long[41_000] = NaN;
    const [z, zc] = twin(pair, long, [50_000, 1], 'f32');
    using a = pair.webgpu.argmax(z, 0);
    using ac = pair.cpu.argmax(zc, 0);
    expect(await valuesOf(a)).toEqual([31_337]);
    expect(await valuesOf(ac)).toEqual([31_337]);
  });
});

function softmaxRef(row: number[], log: boolean): number[] {
  const m = Math.max(...row);
  const s = row.reduce((a, v) => a + Math.exp(v - m), 0);
  return row.map((v) => (log ? v - m - Math.log(s) : Math.exp(v - m) / s));
}

function layerNormRef(row: number[], gamma: number[] | undefined, beta: number[] | undefined, eps: number): number[] {
  const mean = row.reduce((a, b) => a + b, 0) / row.length;
  const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / row.length;
  return row.map((v, j) => ((v - mean) / Math.sqrt(variance + eps)) * (gamma ? gamma[j]! : 1) + (beta ? beta[j]! : 0));
}

/** Row lengths reaching every team size, cached and twice-read rows. */
const COLS = [1, 5, 129, 513, 1031, 4097, 5003];

describe.skipIf(skipReason)(suite('WebGPU softmax, logSoftmax, layerNorm'), () => {
  it('row lengths reach every team size, cached and read twice', () => {
    const launches = COLS.map(rowLaunch);
    expect(new Set(launches.map((l) => l.team)).size).toBe(4);
    expect(launches.some((l) => l.cached === 0)).toBe(true);
  });

  for (const mode of ['subgroups', 'workgroup'] as const) {
    for (const dtype of mode === 'subgroups' ? FLOAT_DTYPES : (['f32'] as const)) {
      it.each([false, true])(`softmax (log %s, ${dtype}, ${mode})`, async (log) => {
        const pair = pairs[mode]!;
        for (const cols of COLS) {
          const rows = cols > 1000 ? 3 : 37;
          const [x, xc] = twin(pair, randomValues(rows * cols, freshSeed(), 3), [rows, cols], dtype);
          using y = log ? pair.webgpu.logSoftmax(x) : pair.webgpu.softmax(x);
          using yc = log ? pair.cpu.logSoftmax(xc) : pair.cpu.softmax(xc);
          const ref = rowsRef(await valuesOf(x), cols, (r) => softmaxRef(r, log));
          expectMatches(`softmax log=${log} ${dtype} ${rows}x${cols}`, await valuesOf(y), ref, await valuesOf(yc), dtype);
          x.dispose();
          xc.dispose();
        }
      });

      it(`layerNorm with and without gamma/beta (${dtype}, ${mode})`, async () => {
        const pair = pairs[mode]!;
        // Every team size once (1031 is read twice); every gamma/beta combination on one length.
        for (const cols of [5, 129, 513, 1031, 5003]) {
          const rows = cols > 1000 ? 3 : 23;
          const [x, xc] = twin(pair, randomValues(rows * cols, freshSeed(), 2, 0.5), [rows, cols], dtype);
          const [g, gc] = twin(pair, randomValues(cols, freshSeed(), 1, 1), [cols], dtype);
          const [b, bc] = twin(pair, randomValues(cols, freshSeed()), [cols], dtype);
          const combos = cols === 129 ? ([[true, true], [false, false], [true, false], [false, true]] as const) : ([[true, true]] as const);
          for (const [withG, withB] of combos) {
            using y = pair.webgpu.layerNorm(x, withG ? g : null, withB ? b : null, 1e-5);
            using yc = pair.cpu.layerNorm(xc, withG ? gc : null, withB ? bc : null, 1e-5);
            const hg = withG ? await valuesOf(g) : undefined;
            const hb = withB ? await valuesOf(b) : undefined;
            const ref = rowsRef(await valuesOf(x), cols, (r) => layerNormRef(r, hg, hb, 1e-5));
            expectMatches(`layerNorm ${dtype} ${rows}x${cols} g=${withG} b=${withB}`, await valuesOf(y), ref, await valuesOf(yc), dtype);
          }
          for (const t of [x, xc, g, gc, b, bc]) t.dispose();
        }
      });
    }
  }

  it.each(Object.keys({ subgroups: 0, workgroup: 0 }))('special rows: NaN poisons a row, -inf entries get 0, all -inf is NaN, large offsets stay exact (%s)', async (mode) => {
    const pair = pairs[mode]!;
    for (const cols of [7, 300, 5003]) {
      const values = randomValues(4 * cols, freshSeed());
      values[3] = NaN;
      for (let j = 0; j < cols; j += 2) values[cols + j] = -Infinity;
      for (let j = 0; j < cols; j++) values[2 * cols + j] = -Infinity;
      for (let j = 0; j < cols; j++) values[3 * cols + j] += 1e4;
      const [x, xc] = twin(pair, values, [4, cols], 'f32');
      for (const log of [false, true]) {
        using y = log ? pair.webgpu.logSoftmax(x) : pair.webgpu.softmax(x);
        using yc = log ? pair.cpu.logSoftmax(xc) : pair.cpu.softmax(xc);
        const got = await valuesOf(y);
        const want = await valuesOf(yc);
        expectSameValues(`rows 0-2 cols ${cols} log ${log}`, got.slice(0, 3 * cols).map((v) => (Number.isFinite(v) ? 0 : v)), want.slice(0, 3 * cols).map((v) => (Number.isFinite(v) ? 0 : v)));
        expectMatches(`offset row cols ${cols} log ${log}`, got.slice(3 * cols), want.slice(3 * cols), want.slice(3 * cols), 'f32', 1e-5);
      }
      x.dispose();
      xc.dispose();
    }
  });
});

describe.skipIf(skipReason)(suite('WebGPU transpose'), () => {
  it.each([...FLOAT_DTYPES, 'i32'] as const)('moves the bits of every element (%s)', async (dtype) => {
    const pair = pairs.subgroups!;
    for (const shape of [[1, 1], [7, 13], [33, 65], [3, 31, 2], [2, 3, 40, 37]]) {
      const values = dtype === 'i32' ? randomValues(product(shape), freshSeed(), 1e6).map(Math.trunc) : randomValues(product(shape), freshSeed());
      const [x, xc] = twin(pair, values, shape, dtype);
      using y = pair.webgpu.transpose(x);
      using yc = pair.cpu.transpose(xc);
      expect(y.shape).toEqual(yc.shape);
      expect(await y.toRawArray(), `transpose ${dtype} ${JSON.stringify(shape)}`).toEqual(await yc.toRawArray());
      x.dispose();
      xc.dispose();
    }
  });
});
