/**
 * The device route of gpu.svd without a GPU: the CPU backend is given a DenseLinalg that
 * behaves as cuSOLVER does on the CUDA backend's operands (column-major matrices, gesvdj's
 * A = U·Σ·Vᵀ, with the buffers the CUDA implementation hands over as U and V), computed in
 * float64 on the host. The known-spectrum proofs passing through it check the layout logic:
 * which buffer holds which singular vectors, the prefix rows taken for rank k, R = Pᵀ·Bᵀ, the
 * triangle potrf writes and trsm reads; and CholeskyQR2's breakdown handling: a pivot failure,
 * or a factor that "succeeded" on a singular Gram matrix, sends the call to Householder QR.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { cpuBuffer } from '../../../src/compute/cpu/element-io.js';
import { DenseLinalgError, type DenseLinalg } from '../../../src/compute/backend/dense-linalg.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { jacobiSvd } from '../../../src/compute/linalg/jacobi-svd.js';
import { orthonormalizeTail } from '../../../src/compute/linalg/orthonormal-columns.js';
import { svd } from '../../../src/compute/ops/svd.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { cpuCompute, freshSeed } from '../compute/helpers.js';
import { knownMatrix, optimalError, reconstructionError } from './known-spectrum.js';
import { expectOrthonormal, expectRecovered, maxRelativeError, recorder, runSvd, toHost } from './svd-checks.js';

const f32 = (v: TensorView) => cpuBuffer(v).f32.subarray(v.offset, v.offset + v.size);

/** cuSOLVER's semantics on the CUDA backend's operands, in float64 on the host. */
class ColumnMajorHostLinalg implements DenseLinalg {
  readonly name = 'column-major host emulation';
  failSvd = false;
  /** Replace non-positive Cholesky pivots by a tiny positive one and report success, as rounding can make potrf do. */
  hidePivotFailures = false;
  /** Factorisations made, and how many reported a pivot failure. */
  choleskyCalls = 0;
  choleskyFailures = 0;

  cholesky(g: TensorView, n: number, info: TensorView): void {
    this.choleskyCalls++;
    // potrf (lower) on the column-major matrix in g's buffer: element (i, j) at j·n + i, so L's
    // entry (i ≥ j) lands in row-major (j, i), the upper triangle; the strict upper column-major
    // triangle (row-major lower) is neither read nor written.
    const buf = f32(g);
    const at = (i: number, j: number) => j * n + i;
    const l = new Float64Array(n * n);
    for (let j = 0; j < n; j++) for (let i = j; i < n; i++) l[i * n + j] = buf[at(i, j)]!;
    let failed = 0;
    for (let j = 0; j < n && failed === 0; j++) {
      let pivot = l[j * n + j]!;
      for (let p = 0; p < j; p++) pivot -= l[j * n + p]! ** 2;
      if (!(pivot > 0)) {
        if (!this.hidePivotFailures) {
          failed = j + 1;
          break;
        }
        pivot = 1e-30;
      }
      const d = Math.sqrt(pivot);
      l[j * n + j] = d;
      for (let i = j + 1; i < n; i++) {
        let sum = l[i * n + j]!;
        for (let p = 0; p < j; p++) sum -= l[i * n + p]! * l[j * n + p]!;
        l[i * n + j] = sum / d;
      }
    }
    const done = failed === 0 ? n : failed - 1;
    for (let j = 0; j < done; j++) for (let i = j; i < n; i++) buf[at(i, j)] = l[i * n + j]!;
    if (failed > 0) this.choleskyFailures++;
    cpuBuffer(info).i32[info.offset] = failed;
  }

  solveUpperRight(x: TensorView, r: TensorView, rows: number, cols: number): void {
    // trsm (left, lower, no transpose) on the column-major M = xᵀ (cols×rows, ld = cols), with
    // L in the column-major lower triangle of r's buffer: M ← L⁻¹·M by forward substitution.
    const m = f32(x);
    const a = f32(r);
    for (let c = 0; c < rows; c++) {
      const col = c * cols;
      for (let i = 0; i < cols; i++) {
        let sum = m[col + i]!;
        for (let p = 0; p < i; p++) sum -= a[p * cols + i]! * m[col + p]!;
        m[col + i] = sum / a[i * cols + i]!;
      }
    }
  }

  orthonormalize(x: TensorView, out: TensorView, rows: number, cols: number, info: TensorView): void {
    // The CUDA backend transposes x into a column-major rows×cols panel (lda = rows) ...
    const src = f32(x);
    const panel = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) panel[j * rows + i] = src[i * cols + j]!;
    // ... whose Householder Q is an orthonormal basis spanning columns 0..j at each j (completed where x is rank-deficient) ...
    const q = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) q[i * cols + j] = panel[j * rows + i]!;
    orthonormalizeTail(q, rows, cols, 0);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) panel[j * rows + i] = q[i * cols + j]!;
    // ... transposed back into the row-major out.
    const dst = f32(out);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) dst[i * cols + j] = panel[j * rows + i]!;
    cpuBuffer(info).i32[info.offset] = 0;
  }

  svd(a: TensorView, left: TensorView, s: TensorView, right: TensorView, n: number, info: TensorView): void {
    // gesvdj on the column-major M stored in a's buffer: M[i][j] = a[j·n + i].
    const buf = f32(a);
    const m = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) m[i * n + j] = buf[j * n + i]!;
    const r = jacobiSvd(m, n, n);
    // M = U·Σ·Vᵀ, U and V written column-major: the CUDA backend passes `right` as U and `left` as V.
    const uOut = f32(right);
    const vOut = f32(left);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        uOut[j * n + i] = r.u[i * n + j]!;
        vOut[j * n + i] = r.v[i * n + j]!;
      }
    }
    f32(s).set(r.s);
    cpuBuffer(a).f32.fill(NaN, a.offset, a.offset + a.size); // gesvdj destroys its input
    cpuBuffer(info).i32[info.offset] = this.failSvd ? n + 1 : 0;
  }
}

let gpu: GpuCompute;
const linalg = new ColumnMajorHostLinalg();
beforeAll(async () => {
  gpu = await cpuCompute();
  (gpu.backend as { denseLinalg?: () => DenseLinalg }).denseLinalg = () => linalg;
});
afterAll(() => gpu.dispose());

describe('svd device route (column-major emulation on the CPU)', () => {
  it('recovers an exactly low-rank spectrum with orthonormal U and V, wide and tall', () => {
    const seed = freshSeed();
    for (const [m, n] of [[150, 110], [90, 170]] as const) {
      const km = knownMatrix(m, n, Array.from({ length: 12 }, (_, i) => 40 * 0.8 ** i), seed);
      for (const rank of [12, 5]) {
        const label = `seed ${seed} ${m}x${n} rank ${rank}`;
        const r = runSvd(gpu, km, { rank, seed }, 'device');
        expectRecovered(r, km, m, n, rank, label);
      }
    }
  });

  it('keeps U and V orthonormal when the rank asked exceeds the matrix rank', () => {
    const seed = freshSeed();
    const km = knownMatrix(120, 80, [3, 2, 1], seed);
    const r = runSvd(gpu, km, { rank: 10, seed }, 'device');
    expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
    expectOrthonormal(r, 120, 80, 10, `seed ${seed}`);
  });

  it('sketches with a itself where the sketch is as wide as a (q = n)', () => {
    // Seed 15's 6×6 Gaussian Ω has cond 5.8e4: A·Ω in f32 left a 7.4e-4 reconstruction error.
    const km = knownMatrix(36, 6, [0.1, 0.1, 0.1, 0.1197, 0.1, 0.1], 15);
    const norm = Math.hypot(...km.a);
    for (const route of ['device', 'householder'] as const) {
      const r = runSvd(gpu, km, { rank: 6, oversample: 0, powerIterations: 0, seed: 15 }, route);
      expect(reconstructionError(km.a, 36, 6, r.u, r.s, r.v) / norm, route).toBeLessThanOrEqual(1e-6);
      expectOrthonormal(r, 36, 6, 6, route);
    }
  });

  it('agrees with the host route on a decaying spectrum', () => {
    const seed = freshSeed();
    const [m, n, k] = [140, 100, 8];
    const km = knownMatrix(m, n, Array.from({ length: n }, (_, i) => 0.85 ** i), seed);
    const device = runSvd(gpu, km, { rank: k, seed }, 'device');
    const host = runSvd(gpu, km, { rank: k, seed }, 'host');
    expect(maxRelativeError(device.s, Array.from(host.s)), `seed ${seed}`).toBeLessThanOrEqual(1e-5);
    const ratio = reconstructionError(km.a, m, n, device.u, device.s, device.v) / optimalError(km.singularValues, k);
    expect(ratio, `seed ${seed}`).toBeLessThanOrEqual(1.05);
  });

  it('orthonormalises by CholeskyQR2 when the sketch has full rank: no fallback, the checks measured', () => {
    const seed = freshSeed();
    // Exactly rank q = 20: the sketch spans the whole range (exact σ) and has full rank (no breakdown).
    const [m, n, rank] = [130, 100, 10];
    const km = knownMatrix(m, n, Array.from({ length: 20 }, (_, i) => 30 * 0.9 ** i), seed);
    const probe = recorder();
    using a = gpu.tensor(Float32Array.from(km.a), [m, n]);
    linalg.choleskyCalls = 0;
    const r = toHost(svd(gpu.session, a, { rank, seed }, 'device', probe));
    expect(probe.fallbacks, `seed ${seed}`).toEqual([]);
    // The sketch, 2 power iterations of 2 bases, Bᵀ: 6 bases of 2 passes.
    expect(linalg.choleskyCalls).toBe(12);
    expect(probe.stages.filter((st) => st === 'orthonormalise (CholeskyQR2)')).toHaveLength(6);
    expect(probe.deviations).toHaveLength(2);
    for (const d of probe.deviations) expect(d).toBeLessThanOrEqual(1e-4);
    expect(maxRelativeError(r.s, km.singularValues.slice(0, rank)), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
    expectOrthonormal(r, m, n, rank, `seed ${seed}`);
    const ratio = reconstructionError(km.a, m, n, r.u, r.s, r.v) / optimalError(km.singularValues, rank);
    expect(ratio, `seed ${seed}`).toBeLessThanOrEqual(1.05);
  });

  it('falls back to Householder QR when potrf meets a non-positive pivot (rank-deficient sketch)', () => {
    const seed = freshSeed();
    const km = knownMatrix(110, 90, [6, 4, 2, 1], seed);
    const probe = recorder();
    using a = gpu.tensor(Float32Array.from(km.a), [110, 90]);
    linalg.choleskyFailures = 0;
    const r = toHost(svd(gpu.session, a, { rank: 8, seed }, 'device', probe));
    expect(linalg.choleskyFailures).toBeGreaterThan(0);
    expect(probe.fallbacks).toHaveLength(1);
    expect(probe.fallbacks[0]).toMatch(/CholeskyQR pass 1 of the sketch: the leading \d+×\d+ Gram minor is not positive definite/);
    expect(probe.stages).toContain('orthonormalise (Householder)');
    expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
    for (const extra of r.s.slice(4)) expect(Math.abs(extra)).toBeLessThanOrEqual(1e-4 * 6);
    expectOrthonormal(r, 110, 90, 8, `seed ${seed}`);
  });

  it('falls back when potrf "succeeds" on a singular Gram matrix and leaves U or V off orthonormal', () => {
    const seed = freshSeed();
    const km = knownMatrix(100, 80, [5, 3, 1], seed);
    const probe = recorder();
    using a = gpu.tensor(Float32Array.from(km.a), [100, 80]);
    linalg.hidePivotFailures = true;
    try {
      const r = toHost(svd(gpu.session, a, { rank: 6, seed }, 'device', probe));
      expect(probe.fallbacks).toHaveLength(1);
      expect(probe.fallbacks[0]).toMatch(/U or V is off orthonormal by/);
      expect(maxRelativeError(r.s, km.singularValues), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
      expectOrthonormal(r, 100, 80, 6, `seed ${seed}`);
    } finally {
      linalg.hidePivotFailures = false;
    }
  });

  it('turns a failure reported on the device into a DenseLinalgError after the call', () => {
    const km = knownMatrix(60, 40, [2, 1], 5);
    linalg.failSvd = true;
    try {
      expect(() => runSvd(gpu, km, { rank: 2 }, 'device')).toThrow(DenseLinalgError);
      expect(() => runSvd(gpu, km, { rank: 2 }, 'device')).toThrow(/SVD of the 12×12 core.*did not converge/);
    } finally {
      linalg.failSvd = false;
    }
  });

  it("refuses route 'device' on a backend without device dense linear algebra", async () => {
    const plain = await cpuCompute();
    try {
      using a = plain.randn([20, 10], { seed: 1 });
      expect(() => svd(plain.session, a, { rank: 2 }, 'device')).toThrow(InvalidArgumentError);
    } finally {
      plain.dispose();
    }
  });
});
