import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import { clusterSoftmaxLaunch, planClusterSoftmax, planRowKernel, planSplitSoftmax, planStagedSoftmax } from '../../../src/compute/gpu/launch-plans.js';
import { softmaxSpec } from '../../../src/compute/gpu/kernel-specs.js';
import { clusterSoftmax, softmax } from '../../../src/compute/gpu/rows.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { rowsRef } from '../../unit/compute/reference.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, expectMatches, FLOAT_DTYPES, freshSeed, openPair, randomValues, relError, twin, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

/**
 * [rows, cols] covering each row kernel: thread per row, warp per row (vector and scalar
 * chunks), block per row (registers), and the looped kernel beyond 32K columns;
 * odd column counts take the scalar paths.
 */
const SHAPES: [number, number][] = [
  [5, 1], // a thread per row up to 16 columns
  [9, 7],
  [70_001, 3],
  [1000, 16],
  [3, 17],
  [33, 32],
  [7, 128],
  [13, 1000],
  [6, 1023],
  [5, 1025],
  [4, 4096],
  [3, 5000],
  [3, 16_385],
  [2, 32_768],
  [2, 40_000],
  [1, 100_003],
];

function softmaxRow(row: number[], log: boolean): number[] {
  const m = row.reduce((a, b) => (b > a ? b : a), -Infinity);
  const s = row.reduce((acc, v) => acc + Math.exp(v - m), 0);
  return row.map((v) => (log ? v - m - Math.log(s) : Math.exp(v - m) / s));
}

function layerNormRow(row: number[], gamma: number[] | undefined, beta: number[] | undefined, eps: number): number[] {
  const mean = row.reduce((a, b) => a + b, 0) / row.length;
  const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / row.length;
  const rstd = 1 / Math.sqrt(variance + eps);
  return row.map((v, j) => (v - mean) * rstd * (gamma ? gamma[j]! : 1) + (beta ? beta[j]! : 0));
}

/** (log)softmax of fresh random [rows, cols] on CUDA against float64 and the CPU backend. */
function checkSoftmax(rows: number, cols: number, dtype: (typeof FLOAT_DTYPES)[number], log: boolean, spread: number): void {
  const [x, xc] = twin(pair, randomValues(rows * cols, freshSeed(), spread), [rows, cols], dtype);
  using y = log ? pair.cuda.logSoftmax(x) : pair.cuda.softmax(x);
  using yc = log ? pair.cpu.logSoftmax(xc) : pair.cpu.softmax(xc);
  const ref = rowsRef(valuesOf(x), cols, (row) => softmaxRow(row, log));
  expectMatches(`${log ? 'logSoftmax' : 'softmax'} ${dtype} [${rows}, ${cols}]`, valuesOf(y), ref, valuesOf(yc), dtype);
  x.dispose();
  xc.dispose();
}

describe.skipIf(!gpuAvailable)('CUDA softmax and logSoftmax', () => {
  for (const dtype of FLOAT_DTYPES) {
    it.each([false, true])(`log=%s (${dtype})`, (log) => {
      for (const [rows, cols] of SHAPES) checkSoftmax(rows, cols, dtype, log, 3);
    });
  }
});

type FloatDType = (typeof FLOAT_DTYPES)[number];
const backend = (): CudaBackend => pair.cuda.backend as unknown as CudaBackend;
const clusters = (): boolean => backend().clusterLaunch;

/** `run(x, y)` writes (log)softmax of fresh random [rows, cols] into y (poisoned first); checked against float64. */
function checkLaunch(rows: number, cols: number, dtype: FloatDType, log: boolean, label: string, run: (x: Tensor, y: Tensor) => void): void {
  const [x, xc] = twin(pair, randomValues(rows * cols, freshSeed(), 4), [rows, cols], dtype);
  using y = pair.cuda.full([rows, cols], Number.NaN, dtype);
  run(x, y);
  using yc = log ? pair.cpu.logSoftmax(xc) : pair.cpu.softmax(xc);
  const ref = rowsRef(valuesOf(x), cols, (row) => softmaxRow(row, log));
  expectMatches(`${label} ${log ? 'logSoftmax' : 'softmax'} ${dtype} [${rows}, ${cols}]`, valuesOf(y), ref, valuesOf(yc), dtype);
  x.dispose();
  xc.dispose();
}

/**
 * The row's (max, sum) is one reduction of per-thread pairs, each thread's exponentials taken
 * against its own maximum: a NaN in one thread's share, a half-masked row (whole CTAs of -inf in
 * the cluster form), an all -inf row, and a large common offset (where logSoftmax must not lose
 * the rounding of max·log2 e) on every kernel form: warp per row, block per row, staged, looped
 * (odd columns past 32K) and, on sm_90+, clusters.
 */
describe.skipIf(!gpuAvailable)('CUDA softmax special values on every row kernel', () => {
  it.each([false, true])('log=%s', (log) => {
    for (const cols of [100, 4096, 20_000, 32_768, 40_001, 65_536]) {
      const rows = 4;
      const values = randomValues(rows * cols, freshSeed(), 3);
      values[7] = Number.NaN; // row 0: poisoned
      for (let j = 0; j < cols / 2; j++) values[cols + j] = -Infinity; // row 1: first half masked
      for (let j = 0; j < cols; j++) values[2 * cols + j] = -Infinity; // row 2: all masked
      for (let j = 0; j < cols; j++) values[3 * cols + j] = values[3 * cols + j]! + 1000; // row 3: far from 0
      using x = pair.cuda.tensor(Float32Array.from(values), [rows, cols]);
      using y = log ? pair.cuda.logSoftmax(x) : pair.cuda.softmax(x);
      using xc = pair.cpu.tensor(Float32Array.from(values), [rows, cols]);
      using yc = log ? pair.cpu.logSoftmax(xc) : pair.cpu.softmax(xc);
      const got = valuesOf(y);
      const cpu = valuesOf(yc);
      const row = (a: number[], r: number) => a.slice(r * cols, (r + 1) * cols);
      const label = `${log ? 'logSoftmax' : 'softmax'} [${rows}, ${cols}]`;
      expect(row(got, 0).every(Number.isNaN), `${label} NaN row`).toBe(true);
      expect(row(got, 2).every(Number.isNaN), `${label} all -inf row`).toBe(true);
      expect(row(cpu, 2).every(Number.isNaN), `${label} all -inf row on the CPU`).toBe(true);
      const masked = row(got, 1).slice(0, cols / 2);
      expect(masked.every((v) => v === (log ? -Infinity : 0)), `${label} masked entries`).toBe(true);
      for (const r of [1, 3]) {
        const start = r === 1 ? Math.ceil(cols / 2) : 0;
        const xs = Array.from(Float32Array.from(row(values, r)));
        const ref = softmaxRow(xs, log).slice(start);
        expect(relError(row(got, r).slice(start), ref, 'f32'), `${label} row ${r}`).toBeLessThanOrEqual(1e-5);
        expect(relError(row(cpu, r).slice(start), ref, 'f32'), `${label} row ${r} on the CPU`).toBeLessThanOrEqual(1e-5);
      }
    }
  });
});

/**
 * Rows of 64 KB and more without clusters take the staged kernel, whose resident blocks each walk
 * many rows while staging the next one: more rows than an H200 holds blocks, so every block loops.
 * Rows that fill the block exactly take the unchecked kernel, the others the checked one (f32 rows
 * of exactly 32K columns take the split kernel, below).
 */
describe.skipIf(!gpuAvailable)('CUDA softmax over long rows, a block per row (staged)', () => {
  const STAGED: [number, number, FloatDType][] = [
    [300, 16_384, 'f32'],
    [300, 24_576, 'f32'],
    [150, 20_000, 'f32'],
    [150, 32_764, 'f32'],
    [150, 32_768, 'bf16'],
  ];
  it.each([false, true])('log=%s', (log) => {
    for (const [rows, cols, dtype] of STAGED) {
      expect(planSplitSoftmax(cols, dtype, true), `${dtype} ${cols} is not split`).toBeUndefined();
      const kernel = planStagedSoftmax(planRowKernel('softmax', rows, cols, dtype, true), cols, dtype)?.kernel;
      expect(kernel, `${dtype} ${cols} is staged`).toBeDefined();
      checkLaunch(rows, cols, dtype, log, kernel!, (x, y) => softmax(backend(), x.view, y.view, rows, cols, log, false));
    }
  });
});

/**
 * f32 rows of 32K columns: 12 of each thread's elements in registers, 20 in shared memory, two
 * blocks per SM, each walking rows gridDim.x apart (300 rows: more than an H200 holds blocks).
 */
describe.skipIf(!gpuAvailable)('CUDA softmax over f32 rows of 32K columns, split between registers and shared memory', () => {
  it.for([false, true])('log=%s', (log, ctx) => {
    const cols = 32_768;
    const split = planSplitSoftmax(cols, 'f32', true)!;
    expect(split.kernel).toBe('softmax_split_3_5');
    const kernel = backend().kernel(`softmax|f32|${split.kernel}`, () => softmaxSpec('f32'), split.kernel, ['ptr', 'ptr', 'i32', 'i32']);
    // softmax() takes the split kernel only where two blocks fit an SM (not on an A100).
    if (kernel.residentGrid(split.block, split.sharedMemBytes) < 2 * backend().multiprocessorCount) ctx.skip();
    for (const rows of [1, 300]) {
      checkLaunch(rows, cols, 'f32', log, split.kernel, (x, y) => softmax(backend(), x.view, y.view, rows, cols, log, false));
    }
  });
});

/**
 * Rows past 32K columns split over the CTAs of a thread-block cluster (sm_90+), the row's max
 * and sum combined through distributed shared memory.
 */
describe.skipIf(!gpuAvailable)('CUDA softmax over long rows, thread-block clusters', () => {
  it.for([false, true])('the planned split, log=%s', (log, ctx) => {
    if (!clusters()) ctx.skip(); // a device without clusters (before sm_90)
    // 40_000 and 32_776 columns leave a short last slice.
    const SPLIT: [number, number, FloatDType][] = [
      [2, 40_000, 'f32'],
      [300, 65_536, 'f32'],
      [3, 32_776, 'f16'],
      [300, 65_536, 'bf16'],
      [2, 40_000, 'bf16'],
    ];
    for (const [rows, cols, dtype] of SPLIT) {
      expect(planClusterSoftmax(cols, dtype, true), `${dtype} ${cols} is split`).toBeDefined();
      checkLaunch(rows, cols, dtype, log, 'planned', (x, y) => softmax(backend(), x.view, y.view, rows, cols, log));
    }
  });

  it('every CTA size the benchmark tries, on rows a block would also hold', (ctx) => {
    if (!clusters()) ctx.skip();
    for (const dtype of ['f32', 'bf16'] as const) {
      for (const cols of [12_296, 32_768]) {
        for (const block of [128, 256, 512]) {
          const launch = clusterSoftmaxLaunch(cols, dtype, block);
          if (!launch) continue;
          const label = `b${block}c${launch.cluster}`;
          checkLaunch(3, cols, dtype, true, label, (x, y) => clusterSoftmax(backend(), x.view, y.view, 3, cols, true, launch));
        }
      }
    }
  });

  it('a NaN in one slice poisons the whole row; -inf entries get 0; other rows are untouched', (ctx) => {
    if (!clusters()) ctx.skip();
    const cols = 65_536;
    const values = randomValues(2 * cols, freshSeed(), 3);
    values[cols - 5] = Number.NaN; // the last CTA of row 0
    for (let j = 0; j < cols; j += 3) values[cols + j] = -Infinity; // row 1: a third masked
    using x = pair.cuda.tensor(Float32Array.from(values), [2, cols]);
    using y = pair.cuda.softmax(x);
    const got = valuesOf(y);
    expect(got.slice(0, cols).every(Number.isNaN)).toBe(true);
    const ref = softmaxRow(values.slice(cols), false);
    for (let j = 0; j < cols; j += 3) expect(got[cols + j]).toBe(0);
    expect(relError(got.slice(cols), ref, 'f32')).toBeLessThanOrEqual(1e-5);
  });
});

describe.skipIf(!gpuAvailable)('CUDA layerNorm', () => {
  for (const dtype of FLOAT_DTYPES) {
    it.each(['none', 'gamma', 'both'] as const)(`affine=%s (${dtype})`, (affine) => {
      for (const [rows, cols] of SHAPES) {
        // A shifted input: the variance pass must not lose precision to the mean.
        const [x, xc] = twin(pair, randomValues(rows * cols, freshSeed(), 2, 5), [rows, cols], dtype);
        const [g, gc] = twin(pair, randomValues(cols, freshSeed(), 0.5, 1), [cols], dtype);
        const [b, bc] = twin(pair, randomValues(cols, freshSeed()), [cols], dtype);
        const gamma = affine === 'none' ? null : g;
        const beta = affine === 'both' ? b : null;
        using y = pair.cuda.layerNorm(x, gamma, beta, 1e-5);
        using yc = pair.cpu.layerNorm(xc, affine === 'none' ? null : gc, affine === 'both' ? bc : null, 1e-5);
        const hg = affine === 'none' ? undefined : valuesOf(g);
        const hb = affine === 'both' ? valuesOf(b) : undefined;
        const ref = rowsRef(valuesOf(x), cols, (row) => layerNormRow(row, hg, hb, 1e-5));
        expectMatches(`layerNorm ${dtype} ${affine} [${rows}, ${cols}]`, valuesOf(y), ref, valuesOf(yc), dtype);
        for (const t of [x, xc, g, gc, b, bc]) t.dispose();
      }
    });
  }
});
