/**
 * The one-block kernels of `kernels/small_dense.cu` on the GPU: Householder QR of narrow panels
 * (full rank, rank-deficient, zero columns) and the Jacobi SVD of small cores (against float64,
 * with exact zeros), gpu.svd's small route that chains them (against the host route), and the
 * one-launch route (`small_rsvd`, and from sm_90 its cluster form `small_rsvd_cluster`) against the
 * chained device route and each other, on odd and degenerate inputs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import { smallQr, smallSvd } from '../../../src/compute/cuda/small-dense.js';
import { svd } from '../../../src/compute/ops/svd.js';
import { jacobiSvd } from '../../../src/compute/linalg/jacobi-svd.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { freshSeed, randomValues } from '../../unit/compute/helpers.js';
import { knownMatrix, orthonormalityError } from '../../unit/svd/known-spectrum.js';
import { expectOrthonormal, maxRelativeError, reconstruction, recorder, relativeDistance, runSvd, toHost } from '../../unit/svd/svd-checks.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, openPair, type Pair } from '../compute/setup.js';

describe.skipIf(!gpuAvailable)('small dense kernels on CUDA', () => {
  let pair: Pair;
  let backend: CudaBackend;
  beforeAll(async () => {
    pair = await openPair();
    backend = pair.cuda.backend as unknown as CudaBackend;
  });
  afterAll(() => closePair(pair));

  const host = (t: Tensor) => Array.from(t.toArraySync());

  it('small_qr: Q is orthonormal and spans the panel, whatever its rank', () => {
    const g = pair.cuda;
    const seed = freshSeed();
    for (const [rows, cols, kind] of [[1, 1, 'full'], [7, 3, 'full'], [320, 18, 'full'], [128, 64, 'full'], [1000, 30, 'rank 4'], [64, 9, 'zero columns']] as const) {
      const values = randomValues(rows * cols, seed + rows + cols);
      if (kind === 'rank 4') {
        // Columns beyond the fourth are combinations of the first four.
        for (let r = 0; r < rows; r++) for (let c = 4; c < cols; c++) values[r * cols + c] = values[r * cols + (c % 4)]! * (c + 1) - values[r * cols + ((c + 1) % 4)]!;
      }
      if (kind === 'zero columns') for (let r = 0; r < rows; r++) for (const c of [0, 5]) values[r * cols + c] = 0;
      using x = g.tensor(values, [rows, cols]);
      using q = g.empty([rows, cols]);
      smallQr(backend, x.view, q.view, rows, cols);
      const qh = host(q);
      const label = `${rows}×${cols} ${kind}, seed ${seed}`;
      expect(orthonormalityError(Float32Array.from(qh), rows, cols), label).toBeLessThanOrEqual(2e-6 * Math.sqrt(cols));
      // Each column of x lies in the span of Q: ‖x − Q·Qᵀx‖ ≤ 1e-5·‖x‖.
      let residual = 0;
      let norm = 0;
      for (let c = 0; c < cols; c++) {
        const coef = new Float64Array(cols);
        for (let p = 0; p < cols; p++) for (let r = 0; r < rows; r++) coef[p]! += qh[r * cols + p]! * values[r * cols + c]!;
        for (let r = 0; r < rows; r++) {
          let proj = 0;
          for (let p = 0; p < cols; p++) proj += qh[r * cols + p]! * coef[p]!;
          residual += (values[r * cols + c]! - proj) ** 2;
          norm += values[r * cols + c]! ** 2;
        }
      }
      expect(Math.sqrt(residual / Math.max(norm, 1e-300)), label).toBeLessThanOrEqual(1e-5);
    }
  });

  it('small_svd: matches float64 Jacobi, with orthonormal vectors, exact zeros included', () => {
    const g = pair.cuda;
    const seed = freshSeed();
    for (const [n, kind] of [[1, 'full'], [2, 'full'], [7, 'full'], [18, 'full'], [44, 'full'], [48, 'graded'], [13, 'rank 5'], [6, 'zero']] as const) {
      let values = randomValues(n * n, seed + n);
      if (kind === 'graded') values = values.map((v, i) => v * 10 ** -((i % n) / 6)); // columns from 1 down to 1e-8
      if (kind === 'rank 5') {
        const b = randomValues(n * 5, seed + 1);
        const c = randomValues(5 * n, seed + 2);
        values = Array.from({ length: n * n }, (_, i) => {
          let sum = 0;
          for (let p = 0; p < 5; p++) sum += b[Math.floor(i / n) * 5 + p]! * c[p * n + (i % n)]!;
          return sum;
        });
      }
      if (kind === 'zero') values = new Array<number>(n * n).fill(0);
      const stored = Array.from(Float32Array.from(values));
      using a = g.tensor(stored, [n, n]);
      using left = g.empty([n, n]);
      using right = g.empty([n, n]);
      using s = g.empty([n]);
      using info = g.full([1], 7, 'i32');
      smallSvd(backend, a.view, left.view, s.view, right.view, n, info.view);
      const label = `${n}×${n} ${kind}, seed ${seed}`;
      expect(host(info), label).toEqual([0]);
      const sh = host(s);
      const reference = jacobiSvd(stored, n, n).s;
      const scale = Math.max(reference[0]!, 1e-30);
      for (let j = 0; j < n; j++) expect(Math.abs(sh[j]! - reference[j]!) / scale, `${label}: σ${j}`).toBeLessThanOrEqual(2e-7);
      for (let j = 1; j < n; j++) expect(sh[j]!, `${label}: descending`).toBeLessThanOrEqual(sh[j - 1]!);
      const lh = Float32Array.from(host(left));
      const rh = Float32Array.from(host(right));
      expect(orthonormalityError(lh, n, n, true), `${label}: left`).toBeLessThanOrEqual(1e-6 * Math.sqrt(n));
      expect(orthonormalityError(rh, n, n, true), `${label}: right`).toBeLessThanOrEqual(1e-6 * Math.sqrt(n));
      // a = leftᵀ·diag(s)·right.
      let diff = 0;
      let norm = 0;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          let sum = 0;
          for (let k = 0; k < n; k++) sum += lh[k * n + i]! * sh[k]! * rh[k * n + j]!;
          diff += (sum - stored[i * n + j]!) ** 2;
          norm += stored[i * n + j]! ** 2;
        }
      }
      expect(Math.sqrt(diff / Math.max(norm, 1e-300)), `${label}: reconstruction`).toBeLessThanOrEqual(kind === 'zero' ? 0 : 1e-6);
    }
  });

  it('gpu.svd takes the one-launch or the small route for narrow sketches of small matrices and agrees with the host route', () => {
    const seed = freshSeed();
    for (const [m, n, k] of [[320, 128, 8], [128, 320, 8], [200, 40, 30], [1000, 700, 5]] as const) {
      const km = knownMatrix(m, n, Array.from({ length: Math.min(m, n, 60) }, (_, i) => 0.8 ** i), seed);
      const small = runSvd(pair.cuda, km, { rank: k, seed }, undefined);
      const hostRoute = runSvd(pair.cuda, km, { rank: k, seed }, 'host');
      const label = `${m}×${n} rank ${k}, seed ${seed}`;
      expectOrthonormal(small, m, n, k, label);
      expect(maxRelativeError(small.s, Array.from(hostRoute.s)), label).toBeLessThanOrEqual(1e-5);
      const a = reconstruction(small, m, n);
      const b = reconstruction(hostRoute, m, n);
      let diff = 0;
      let ref = 0;
      for (let i = 0; i < a.length; i++) {
        diff += (a[i]! - b[i]!) ** 2;
        ref += b[i]! ** 2;
      }
      expect(Math.sqrt(diff / ref), label).toBeLessThanOrEqual(1e-5);
    }
  });

  /**
   * Largest difference of two spectra, relative to each singular value down to 1% of the largest
   * and to that 1% below it: f32 rounding in the products moves every σ by about ε·σ₁, which is
   * a large part of the smallest ones (rank 30 of a 0.75ⁱ spectrum reaches 2.5e-4·σ₁).
   */
  const spectrumError = (s: Float32Array, reference: Float32Array) =>
    s.reduce((worst, v, j) => Math.max(worst, Math.abs(v - reference[j]!) / Math.max(reference[j]!, 1e-2 * reference[0]!)), 0);

  it('one launch: the whole truncated SVD in small_rsvd agrees with the chained device route', () => {
    const seed = freshSeed();
    const cases = [
      { m: 320, n: 128, k: 8, options: {} },
      { m: 128, n: 320, k: 8, options: {} },
      { m: 64, n: 64, k: 20, options: { powerIterations: 0 } },
      { m: 300, n: 40, k: 30, options: { oversample: 2, powerIterations: 3 } },
      { m: 50, n: 7, k: 3, options: {} },
      { m: 1, n: 1, k: 1, options: {} },
      { m: 2, n: 513, k: 1, options: { oversample: 0 } },
    ];
    for (const { m, n, k, options } of cases) {
      const km = knownMatrix(m, n, Array.from({ length: Math.min(m, n) }, (_, i) => 3 * 0.75 ** i), seed + m + n);
      const probe = recorder();
      using a = pair.cuda.tensor(Float32Array.from(km.a), [m, n]);
      const one = toHost(svd(pair.cuda.session, a, { rank: k, seed, ...options }, undefined, probe));
      const chained = toHost(svd(pair.cuda.session, a, { rank: k, seed, ...options }, 'householder'));
      const label = `${m}×${n} rank ${k} ${JSON.stringify(options)}, seed ${seed}`;
      expect(probe.stages, label).toEqual(['one launch', 'status read-back']);
      expectOrthonormal(one, m, n, k, label);
      expect(spectrumError(one.s, chained.s), label).toBeLessThanOrEqual(1e-5);
      for (let j = 1; j < k; j++) expect(one.s[j]!, `${label}: descending`).toBeLessThanOrEqual(one.s[j - 1]!);
      expect(relativeDistance(reconstruction(one, m, n), reconstruction(chained, m, n)), label).toBeLessThanOrEqual(1e-5);
    }
  });

  it("one launch draws gpu.randn's Ω for the seed: on a flat spectrum, where the sketch alone decides the subspace, it matches the chained route", () => {
    const seed = freshSeed();
    // Singular values all 1, no power iteration and the whole sketch kept (rank = q = 18): the
    // result is A projected on range(A·Ω), which another Ω would move by a distance near 1. A·Ω is
    // well conditioned (its σ within about 2x of each other), so the routes' different roundings
    // move it by ~1e-6. (A rank below q would pick among equal singular values of the core.)
    const km = knownMatrix(320, 128, new Array<number>(128).fill(1), seed);
    using a = pair.cuda.tensor(Float32Array.from(km.a), [320, 128]);
    const options = { rank: 18, oversample: 0, seed, powerIterations: 0 };
    const one = toHost(svd(pair.cuda.session, a, options));
    const chained = toHost(svd(pair.cuda.session, a, options, 'householder'));
    expect(relativeDistance(reconstruction(one, 320, 128), reconstruction(chained, 320, 128)), `seed ${seed}`).toBeLessThanOrEqual(1e-4);
  });

  it('one launch: the cluster form (sm_90+) agrees with the one-block kernel on the same sketch', (ctx) => {
    if (!backend.clusterLaunch) ctx.skip();
    const linalg = backend.denseLinalg()!;
    const seed = freshSeed();
    const cases = [
      { m: 320, n: 128, q: 18, k: 8, iters: 2 },
      { m: 37, n: 301, q: 13, k: 5, iters: 1 },
      { m: 500, n: 9, q: 9, k: 9, iters: 0 },
      { m: 3, n: 5, q: 3, k: 2, iters: 2 },
      { m: 257, n: 64, q: 32, k: 32, iters: 3 },
    ];
    for (const { m, n, q, k, iters } of cases) {
      const label = `${m}×${n} q ${q} rank ${k} iterations ${iters}, seed ${seed}`;
      const km = knownMatrix(m, n, Array.from({ length: Math.min(m, n) }, (_, i) => 2 * 0.8 ** i), seed + m);
      using a = pair.cuda.tensor(Float32Array.from(km.a), [m, n]);
      const run = (householderFallback: boolean) => {
        using u = pair.cuda.zeros([m, k]);
        using sv = pair.cuda.zeros([k]);
        using v = pair.cuda.zeros([k, n]);
        using status = pair.cuda.zeros([3]);
        const views = { a: a.view, u: u.view, s: sv.view, v: v.view, status: status.view };
        linalg.truncatedSvd!.run(views, { m, n, q, rank: k, powerIterations: iters, seed, householderFallback });
        return { status: Array.from(status.toArraySync()), r: { u: u.toArraySync(), s: sv.toArraySync(), v: v.toArraySync() } };
      };
      const cluster = run(false);
      const block = run(true);
      expect(cluster.status, label).toEqual(block.status);
      expect(cluster.status[2], label).toBe(0);
      expectOrthonormal(cluster.r, m, n, k, label);
      expect(spectrumError(cluster.r.s, block.r.s), label).toBeLessThanOrEqual(1e-5);
      expect(relativeDistance(reconstruction(cluster.r, m, n), reconstruction(block.r, m, n)), label).toBeLessThanOrEqual(1e-5);
    }
  });

  it('one launch: exactly low-rank and zero inputs stay orthonormal (CholeskyQR2 gives way to Householder in the block)', () => {
    const seed = freshSeed();
    const [m, n, k] = [320, 128, 8];
    const km = knownMatrix(m, n, [5, 3, 2, 1], seed);
    const probe = recorder();
    using a = pair.cuda.tensor(Float32Array.from(km.a), [m, n]);
    const r = toHost(svd(pair.cuda.session, a, { rank: k, seed }, undefined, probe));
    const label = `rank 4 of ${m}×${n}, seed ${seed}`;
    expect(probe.stages, label).toContain('one launch');
    expect(maxRelativeError(r.s.subarray(0, 4), km.singularValues), label).toBeLessThanOrEqual(1e-5);
    for (let j = 4; j < k; j++) expect(Math.abs(r.s[j]!), `${label}: s[${j}]`).toBeLessThanOrEqual(1e-5 * 5);
    expectOrthonormal(r, m, n, k, label);

    using zero = pair.cuda.zeros([100, 60]);
    const z = toHost(svd(pair.cuda.session, zero, { rank: 5 }));
    expect(Array.from(z.s)).toEqual([0, 0, 0, 0, 0]);
    expectOrthonormal(z, 100, 60, 5, 'zero matrix');
  });

  it('one launch: NaN, ±Infinity and an f32-overflowing σ are refused, and nothing stays allocated', () => {
    const g = pair.cuda;
    const values = randomValues(96 * 40, freshSeed());
    const baseline = g.memoryStats().inUseBytes;
    for (const [at, bad] of [[0, Number.NaN], [3839, Number.POSITIVE_INFINITY], [1000, Number.NEGATIVE_INFINITY]] as const) {
      const poisoned = Float32Array.from(values);
      poisoned[at] = bad;
      using a = g.tensor(poisoned, [96, 40]);
      expect(() => g.svd(a, { rank: 4 }), `${bad} at ${at}`).toThrow(/^svd: a Tensor\(f32 \[96, 40\]\) contains NaN or ±Infinity/);
    }
    {
      using huge = g.full([96, 40], 3e38);
      expect(() => g.svd(huge, { rank: 4 })).toThrow(/beyond f32's range/);
    }
    expect(g.memoryStats().inUseBytes).toBe(baseline);
  });
});
