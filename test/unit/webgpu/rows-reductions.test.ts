import { describe, expect, it } from 'vitest';
import type { ReduceOp } from '../../../src/compute/core/reduce-plan.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { layerNorm, rowPlan, rowTuning, softmax, type RowPlan } from '../../../src/compute/webgpu/rows.js';
import { reduceRef, rowsRef } from '../compute/reference.js';
import {
  expectMatches,
  expectSameValues,
  FLOAT_DTYPES,
  freshSeed,
  usePairsBySubgroups,
  product,
  randomValues,
  skipReason,
  suite,
  twin,
  valuesOf,
  type Pair,
} from './setup.js';

const pairs = usePairsBySubgroups();

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

/** Row lengths reaching every team size, vec4 (multiples of 4) and scalar loads, and both kinds of split row. */
const COLS = [1, 5, 12, 129, 516, 1031, 4097, 5003];

/** A row length past what one team holds (split however many rows there are), and one split because its rows are few. */
const LONG = 32_771;
const FEW = 9_000;

/** Runs softmax / logSoftmax / layerNorm (gamma and beta from `gb`) on `x` with `plan`, through the backend's op module. */
function runRowOp(pair: Pair, op: 'softmax' | 'logSoftmax' | 'layerNorm', x: TensorView, rows: number, cols: number, plan?: RowPlan): Tensor {
  const out = pair.webgpu.empty([rows, cols], x.dtype);
  if (op === 'layerNorm') layerNorm(pair.backend, x, undefined, undefined, out.view, rows, cols, 1e-5, plan);
  else softmax(pair.backend, x, out.view, rows, cols, op === 'logSoftmax', plan);
  return out;
}

describe.skipIf(skipReason)(suite('WebGPU softmax, logSoftmax, layerNorm'), () => {
  it('plans: teams sized to the row, registers bounded, long rows and few long rows split', () => {
    const plans = COLS.map((c) => rowPlan(37, c, 1024));
    expect(new Set(plans.map((p) => p.team)).size).toBeGreaterThanOrEqual(5);
    for (const [i, p] of plans.entries()) {
      expect(p.chunks, `cols ${COLS[i]}`).toBeUndefined();
      expect(p.team * 4 * p.k).toBeGreaterThanOrEqual(COLS[i]!);
      expect(4 * p.k).toBeLessThanOrEqual(rowTuning.maxElements);
    }
    expect(rowPlan(4096, 32_768, 1024)).toMatchObject({ team: 1024, k: 8 });
    expect(rowPlan(5000, LONG, 1024).chunks).toBeGreaterThan(1);
    expect(rowPlan(3, FEW, 1024).chunks).toBeGreaterThan(1);
    expect(rowPlan(3000, FEW, 1024).chunks).toBeUndefined();
    // A device with workgroups of 256 holds rows of 8192 in one team, and splits longer ones.
    expect(rowPlan(5000, 8192, 256)).toMatchObject({ team: 256, k: 8 });
    expect(rowPlan(5000, 8200, 256).chunks).toBeDefined();
  });

  for (const mode of ['subgroups', 'workgroup'] as const) {
    for (const dtype of mode === 'subgroups' ? FLOAT_DTYPES : (['f32'] as const)) {
      it.each([false, true])(`softmax (log %s, ${dtype}, ${mode})`, async (log) => {
        const pair = pairs[mode]!;
        for (const cols of dtype === 'f32' ? [...COLS, FEW, LONG] : COLS) {
          const rows = cols > 5000 ? 2 : cols > 1000 ? 3 : 37;
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
        // Every kind of launch once; every gamma/beta combination on one length of each load width.
        for (const cols of dtype === 'f32' ? [5, 12, 129, 516, 1031, 5003, FEW, LONG] : [5, 12, 129, 516, 1031, 5003]) {
          const rows = cols > 5000 ? 2 : cols > 1000 ? 3 : 23;
          const [x, xc] = twin(pair, randomValues(rows * cols, freshSeed(), 2, 0.5), [rows, cols], dtype);
          const [g, gc] = twin(pair, randomValues(cols, freshSeed(), 1, 1), [cols], dtype);
          const [b, bc] = twin(pair, randomValues(cols, freshSeed()), [cols], dtype);
          const combos = cols === 129 || cols === 516 || cols === FEW ? ([[true, true], [false, false], [true, false], [false, true]] as const) : ([[true, true]] as const);
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

  it.each(['subgroups', 'workgroup'] as const)('every plan shape: teams up to 1024, registers up to 32, split chunks, unaligned views (%s)', async (mode) => {
    const pair = pairs[mode]!;
    const plans: [string, RowPlan][] = [
      ['team 1024 x 32', { wg: 1024, team: 1024, k: 8 }],
      ['team 512 in 1024', { wg: 1024, team: 512, k: 4 }],
      ['team 32 x 4', { wg: 256, team: 32, k: 1 }],
      ['team 1', { wg: 256, team: 1, k: 2 }],
      ['split 256 x 8', { wg: 256, team: 256, k: 2, chunk: 2048, chunks: 3 }],
      ['split 1024 x 16', { wg: 1024, team: 1024, k: 4, chunk: 16384, chunks: 1 }],
    ];
    for (const [name, plan] of plans) {
      for (const cols of [4100, 5003]) {
        if (plan.team === 1 && cols > 8) continue;
        if (plan.chunk === undefined && plan.team * 4 * plan.k < cols) continue;
        if (plan.chunks !== undefined && plan.chunks !== Math.ceil(cols / plan.chunk!)) continue;
        for (const offset of [0, 1]) {
          const rows = 3;
          const values = randomValues(rows * cols + offset, freshSeed(), 3);
          values[offset + 7] = NaN;
          for (let j = 0; j < cols; j += 3) values[offset + cols + j] = -Infinity;
          using whole = pair.webgpu.tensor(Float32Array.from(values), [rows * cols + offset]);
          const x: TensorView = { ...whole.view, shape: [rows, cols], offset: whole.view.offset + offset, size: rows * cols };
          const host = values.slice(offset);
          using xcRows = pair.cpu.tensor(Float32Array.from(host), [rows, cols]);
          for (const op of ['softmax', 'logSoftmax', 'layerNorm'] as const) {
            using y = runRowOp(pair, op, x, rows, cols, plan);
            using yc = op === 'softmax' ? pair.cpu.softmax(xcRows) : op === 'logSoftmax' ? pair.cpu.logSoftmax(xcRows) : pair.cpu.layerNorm(xcRows);
            const got = await valuesOf(y);
            const want = await valuesOf(yc);
            const label = `${name} ${op} cols ${cols} offset ${offset} (${mode})`;
            // Row 0 holds a NaN: all NaN; the others: the same non-finite places, finite values close.
            expectSameValues(`${label} non-finite`, got.map((v) => (Number.isFinite(v) ? 0 : v)), want.map((v) => (Number.isFinite(v) ? 0 : v)));
            const finite = (a: number[]) => a.slice(cols).map((v) => (Number.isFinite(v) ? v : 0));
            expectMatches(label, finite(got), finite(want), finite(want), 'f32');
          }
        }
      }
    }
  });

  it.each(['subgroups', 'workgroup'] as const)('special rows: NaN poisons a row, -inf entries get 0, all -inf is NaN, large offsets stay exact (%s)', async (mode) => {
    const pair = pairs[mode]!;
    for (const cols of [7, 300, 5003, 5004, FEW, LONG]) {
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
      // layerNorm: the NaN row is NaN, as are the rows holding -inf.
      using n = pair.webgpu.layerNorm(x, null, null, 1e-5);
      using nc = pair.cpu.layerNorm(xc, null, null, 1e-5);
      const got = await valuesOf(n);
      expectSameValues(`layerNorm rows 0-2 cols ${cols}`, got.slice(0, 3 * cols), (await valuesOf(nc)).slice(0, 3 * cols));
      x.dispose();
      xc.dispose();
    }
  });

  it.each(['subgroups', 'workgroup'] as const)('layerNorm keeps rows far from 0 with a small spread within a few roundings (%s)', async (mode) => {
    // An f32 mean of ±1030 is off by up to 6e-5, which x - mean would carry next to a spread of 1.
    const pair = pairs[mode]!;
    for (const cols of [9, 129, 516, 5003, FEW, LONG]) {
      const rows = 4;
      const seed = freshSeed();
      const values = randomValues(rows * cols, seed).map((v, i) => v + (Math.floor(i / cols) % 2 === 0 ? 1030 : -1030));
      const [x, xc] = twin(pair, values, [rows, cols], 'f32');
      using y = pair.webgpu.layerNorm(x, null, null, 1e-5);
      using yc = pair.cpu.layerNorm(xc, null, null, 1e-5);
      const ref = rowsRef(await valuesOf(x), cols, (r) => layerNormRef(r, undefined, undefined, 1e-5));
      expectMatches(`far rows cols ${cols} seed ${seed} (${mode})`, await valuesOf(y), ref, await valuesOf(yc), 'f32', 2e-6);
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
