/**
 * WebGPU matmul and linear against the float64 reference and the CPU backend: transposes, batch
 * broadcasting, the fused epilogue (alpha, beta·C, bias, every activation), f16/bf16 storage,
 * every tile configuration on a shape off all tiles, and the autotuner's choice and record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MATMUL_ACTIVATIONS, type MatmulParams } from '../../../src/compute/core/matmul-plan.js';
import { AutotuneStore } from '../../../src/compute/gpu/autotune.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { configName, feasibleConfigs, heuristicConfig, MATMUL_CONFIGS, MIN_TUNED_WORK, threadsOf, workgroupBytes, type MatmulConfig } from '../../../src/compute/webgpu/matmul-configs.js';
import { webgpuMatmulWithConfig } from '../../../src/compute/webgpu/matmul.js';
import { referenceProduct, relativeError, type RefOptions } from '../matmul/reference.js';
import { closePair, FLOAT_DTYPES, freshSeed, openPair, randomValues, skipReason, suite, type Pair } from './setup.js';

const TOLERANCE = { f32: 2e-6, f16: 1e-3, bf16: 8e-3 } as const;
type Float = (typeof FLOAT_DTYPES)[number];

let pair: Pair;
beforeAll(async () => {
  if (skipReason === undefined) pair = await openPair({ autotuneStore: new AutotuneStore(undefined) });
});
afterAll(() => closePair(pair));

/** The same random values on both backends, and the values stored (rounded to the dtype). */
function rand(shape: number[], dtype: Float = 'f32'): { w: Tensor; c: Tensor; values: Float32Array; shape: number[] } {
  const size = shape.reduce((p, d) => p * d, 1);
  const data = Float32Array.from(randomValues(size, freshSeed()));
  const c = pair.cpu.tensor(data, shape, dtype);
  return { w: pair.webgpu.tensor(data, shape, dtype), c, values: c.toArraySync() as Float32Array, shape };
}

const ALL_TRANSPOSES = [[false, false], [true, true], [false, true], [true, false]] as const;

/** A row-major rows x cols matrix transposed (cols x rows). */
function transposeHost(values: Float32Array, rows: number, cols: number): Float32Array {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = values[r * cols + c]!;
  return t;
}

function expectProduct(label: string, got: Tensor, cpu: Tensor, ref: { values: Float64Array; shape: number[] }, dtype: Float): void {
  expect(got.shape, label).toEqual(ref.shape);
  const values = got.toArraySync();
  expect(relativeError(values, ref.values), `${label} vs float64`).toBeLessThan(TOLERANCE[dtype]);
  expect(relativeError(values, cpu.toArraySync()), `${label} vs CPU`).toBeLessThan(TOLERANCE[dtype]);
}

describe.skipIf(skipReason)(suite('WebGPU matmul'), () => {
  for (const dtype of FLOAT_DTYPES) {
    it(`transposes, odd shapes and batch broadcasting (${dtype})`, () => {
      const cases: [number[], number[], boolean, boolean][] = [
        [[1, 1], [1, 1], false, false],
        [[37, 53], [53, 29], false, false],
        [[53, 37], [53, 29], true, false],
        [[37, 53], [29, 53], false, true],
        [[53, 37], [29, 53], true, true],
        [[3, 17, 9], [9, 11], false, false],
        [[3, 9, 17], [9, 11], true, false],
        [[2, 1, 5, 7], [1, 3, 7, 6], false, false],
        [[4, 6, 5], [4, 5, 7], false, false],
      ];
      for (const [aShape, bShape, transA, transB] of cases) {
        const a = rand(aShape, dtype);
        const b = rand(bShape, dtype);
        using y = pair.webgpu.matmul(a.w, b.w, { transA, transB });
        using yc = pair.cpu.matmul(a.c, b.c, { transA, transB });
        expectProduct(`${JSON.stringify(aShape)}${transA ? 'ᵀ' : ''} · ${JSON.stringify(bShape)}${transB ? 'ᵀ' : ''} ${dtype}`, y, yc, referenceProduct(a, b, { transA, transB }), dtype);
        for (const t of [a.w, a.c, b.w, b.c]) t.dispose();
      }
    });

    it(`the fused epilogue: alpha, beta·C (broadcast), bias, every activation (${dtype})`, () => {
      const a = rand([2, 19, 23], dtype);
      const b = rand([23, 13], dtype);
      const c = rand([19, 13], dtype);
      const bias = rand([13], dtype);
      // Every activation in f32; one in the 16-bit types (the epilogue's math is the same, only the store differs).
      for (const activation of dtype === 'f32' ? [undefined, ...MATMUL_ACTIVATIONS] : (['gelu'] as const)) {
        const o: RefOptions = { alpha: 0.75, beta: -1.5, c, bias: bias.values, ...(activation ? { activation } : {}) };
        using y = pair.webgpu.matmul(a.w, b.w, { alpha: 0.75, beta: -1.5, c: c.w, bias: bias.w, activation: activation ?? 'none' });
        using yc = pair.cpu.matmul(a.c, b.c, { alpha: 0.75, beta: -1.5, c: c.c, bias: bias.c, activation: activation ?? 'none' });
        expectProduct(`epilogue ${activation ?? 'none'} ${dtype}`, y, yc, referenceProduct(a, b, o), dtype);
      }
      for (const t of [a, b, c, bias]) {
        t.w.dispose();
        t.c.dispose();
      }
    });
  }

  it('linear: x·Wᵀ + b with a fused activation, on a [.., in] input', () => {
    const x = rand([2, 3, 21]);
    const w = rand([17, 21]);
    const bias = rand([17]);
    using y = pair.webgpu.linear(x.w, w.w, bias.w, 'silu');
    using yc = pair.cpu.linear(x.c, w.c, bias.c, 'silu');
    const ref = referenceProduct({ values: x.values, shape: [6, 21] }, w, { transB: true, bias: bias.values, activation: 'silu' });
    expectProduct('linear', y.reshape([6, 17]), yc.reshape([6, 17]), ref, 'f32');
    for (const t of [x, w, bias]) {
      t.w.dispose();
      t.c.dispose();
    }
  });

  it('beta = 0 ignores C (NaN in C does not leak)', () => {
    const a = rand([5, 6]);
    const b = rand([6, 7]);
    using c = pair.webgpu.full([5, 7], Number.NaN);
    using y = pair.webgpu.matmul(a.w, b.w, { c, beta: 0 });
    expect((y.toArraySync() as Float32Array).every(Number.isFinite)).toBe(true);
    for (const t of [a, b]) {
      t.w.dispose();
      t.c.dispose();
    }
  });

  it('every tile configuration gives the product (checked edges and full tiles)', { timeout: 240_000 }, () => {
    const backend = pair.backend;
    const limit = backend.dev.limits.maxComputeWorkgroupStorageSize;
    const configs = feasibleConfigs(limit, backend.dev.limits.maxComputeInvocationsPerWorkgroup);
    // lavapipe (32 KB) runs every configuration but those staging more; each code path (double buffering, BK 32, 512 invocations) has one it runs.
    expect(configs.map(configName), 'the configurations this device runs').toEqual(MATMUL_CONFIGS.filter((c) => workgroupBytes(c) <= limit).map(configName));
    for (const has of [(c: MatmulConfig) => c.db === true, (c: MatmulConfig) => c.bk === 32, (c: MatmulConfig) => threadsOf(c) === 512]) expect(configs.some(has)).toBe(true);
    // Every configuration on a shape off all tiles, with transposes; full tiles (no bounds tests) on a shape every tile divides.
    for (const [m, n, k] of [[130, 67, 33], [256, 256, 64]]) {
      const a = rand([m, k]);
      const b = rand([k, n]);
      using out = pair.webgpu.empty([m, n]);
      const ref = referenceProduct(a, b, { transB: false });
      // A stored k x m and B n x k (the same values transposed on the host) for the transposed loads.
      const at = pair.webgpu.tensor(transposeHost(a.values, m, k), [k, m]);
      const bt = pair.webgpu.tensor(transposeHost(b.values, k, n), [n, k]);
      for (const config of configs) {
        // Every transpose on the checked shape for one plain and one double-buffered configuration (the staging differs per transpose).
        const transposes = m === 130 && (configName(config) === 't64x64x16r4x4' || configName(config) === 't128x128x8r8x8d') ? ALL_TRANSPOSES : ([[false, false]] as const);
        for (const [transA, transB] of transposes) {
          backend.fill(out.view, Number.NaN);
          const params: MatmulParams = {
            a: (transA ? at : a.w).view, b: (transB ? bt : b.w).view, out: out.view, m, n, k, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0,
            transA, transB, alpha: 1, beta: 0, precision: 'highest', engine: 'auto', autotune: false,
          };
          webgpuMatmulWithConfig(backend, params, configName(config));
          expect(relativeError(out.toArraySync(), ref.values), `${configName(config)} ${m}x${n}x${k} ${transA ? 't' : 'n'}${transB ? 't' : 'n'}`).toBeLessThan(TOLERANCE.f32);
        }
      }
      at.dispose();
      bt.dispose();
      for (const t of [a, b]) {
        t.w.dispose();
        t.c.dispose();
      }
    }
  });

  it('the heuristic takes smaller tiles for smaller products, and never one only the autotuner takes', () => {
    expect(heuristicConfig(MATMUL_CONFIGS, 4096, 4096, 1).bm).toBe(128);
    expect(heuristicConfig(MATMUL_CONFIGS, 64, 64, 1).bm).toBe(32);
    for (const side of [64, 512, 4096, 16384]) expect(heuristicConfig(MATMUL_CONFIGS, side, side, 1).tunedOnly).toBeUndefined();
  });

  it('autotunes a large enough product once per class and keeps the winner', async () => {
    const store = new AutotuneStore(undefined);
    const tuned = await openPair({ autotuneStore: store });
    try {
      const side = Math.ceil(Math.cbrt(MIN_TUNED_WORK));
      const a = tuned.webgpu.randn([side, side], { seed: 1 });
      const b = tuned.webgpu.randn([side, side], { seed: 2 });
      using y = tuned.webgpu.matmul(a, b);
      const entries = store.entries();
      expect(entries.length).toBe(1);
      const [key, record] = entries[0]!;
      expect(key).toContain(tuned.backend.deviceKey);
      expect(Object.keys(record.candidates).length).toBeGreaterThanOrEqual(2);
      expect(record.kernel).toBe(record.choice);
      // The chosen configuration gives the product, and a second call reuses the record.
      const ac = tuned.cpu.tensor(a.toArraySync() as Float32Array, [side, side]);
      const bc = tuned.cpu.tensor(b.toArraySync() as Float32Array, [side, side]);
      using yc = tuned.cpu.matmul(ac, bc);
      expect(relativeError(y.toArraySync(), yc.toArraySync())).toBeLessThan(TOLERANCE.f32);
      using y2 = tuned.webgpu.matmul(a, b);
      expect(store.entries().length).toBe(1);
      for (const t of [a, b, ac, bc]) t.dispose();
    } finally {
      closePair(tuned);
    }
  });
});
