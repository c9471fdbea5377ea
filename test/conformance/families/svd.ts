/**
 * svd on matrices of known spectrum (`test/unit/svd`): truncated, from an exactly low-rank matrix
 * (tall and wide) and with a sketch wide enough (q > 44) for a backend's device dense routines,
 * recovering the singular values, with orthonormal factors and a reconstruction at the optimal
 * error and near the CPU backend's; its sketch is `gpu.randn`'s Ω for the seed on every route; and
 * full, the exact SVD, identical to the CPU's (it runs on the host from the same f32 values).
 */
import { expect, it } from 'vitest';
import { knownMatrix, reconstructionError } from '../../unit/svd/known-spectrum.js';
import { expectOrthonormal, expectRecovered, maxRelativeError, reconstruction, relativeDistance, runSvd } from '../../unit/svd/svd-checks.js';
import type { ConformanceContext } from '../context.js';
import { Case } from '../seeds.js';

const TRUNCATED: { name: string; m: number; n: number; spectrum: number[]; rank: number; oversample?: number; powerIterations?: number }[] = [
  { name: 'tall, exactly rank 8', m: 48, n: 36, spectrum: Array.from({ length: 8 }, (_, i) => 10 * 0.7 ** i), rank: 5 },
  { name: 'wide, exactly rank 6', m: 30, n: 45, spectrum: Array.from({ length: 6 }, (_, i) => 3 * 0.8 ** i), rank: 6 },
  // σ₄₇/σ₃₆ = 0.31: with the default 2 power iterations σ₃₆ misses 1e-4 for 1.3% of seeds (4 of
  // 300 on the CPU, up to 2.2e-4); with 3, for about 3 draws in a million (an exact-arithmetic
  // simulation of the sketch's error tail); with 4, the worst of 100,000 simulated draws is 7e-7.
  { name: 'sketch of 46 columns', m: 64, n: 48, spectrum: Array.from({ length: 48 }, (_, i) => 0.9 ** i), rank: 36, oversample: 10, powerIterations: 4 },
];

export function describeSvd(ctx: ConformanceContext): void {
  ctx.describeOps('svd', ['svd'], () => {
    if (!ctx.dtypes.includes('f32')) return;
    for (const t of TRUNCATED) {
      it(`truncated: ${t.name}`, () => {
        const c = new Case(`svd ${t.name}`);
        const km = knownMatrix(t.m, t.n, t.spectrum, c.subSeed());
        const options = { rank: t.rank, seed: c.subSeed(), oversample: t.oversample, powerIterations: t.powerIterations };
        const before = ctx.gpu.memoryStats().inUseBytes;
        const got = runSvd(ctx.gpu, km, options);
        expect(ctx.gpu.memoryStats().inUseBytes, c.msg('bytes in use after the factors are disposed')).toBe(before);
        expectRecovered(got, km, t.m, t.n, t.rank, c.msg('vs the known spectrum'));
        if (!ctx.cpu) return;
        const cpu = runSvd(ctx.cpu, km, options);
        const norm = Math.hypot(...km.singularValues);
        expect(maxRelativeError(got.s, Array.from(cpu.s)), c.msg('singular values vs the CPU backend')).toBeLessThanOrEqual(1e-4);
        const error = reconstructionError(km.a, t.m, t.n, got.u, got.s, got.v);
        const cpuError = reconstructionError(km.a, t.m, t.n, cpu.u, cpu.s, cpu.v);
        expect(Math.abs(error - cpuError) / norm, c.msg('reconstruction error vs the CPU backend')).toBeLessThanOrEqual(1e-5);
      });
    }

    it("truncated: the sketch is gpu.randn's Ω for the seed", () => {
      // A flat spectrum with the whole sketch kept (rank = q, no power iteration): the result is A
      // projected on range(A·Ω), which only the same Ω reproduces (another seed moves it by a
      // relative distance near 1). The sketch's σ are within about 3x of each other, so rounding
      // moves the result by ~1e-6.
      const [m, n, q] = [96, 40, 10];
      const c = new Case('svd sketch');
      const km = knownMatrix(m, n, new Array<number>(n).fill(1), c.subSeed());
      const seed = c.subSeed();
      const got = reconstruction(runSvd(ctx.gpu, km, { rank: q, oversample: 0, powerIterations: 0, seed }), m, n);
      using omega = ctx.gpu.randn([n, q], { seed });
      const expected = projectOnSketch(km.a, m, n, Float64Array.from(omega.toArraySync()), q);
      expect(relativeDistance(got, expected), c.msg('vs A projected on range(A·Ω) in float64')).toBeLessThanOrEqual(1e-5);
      const other = reconstruction(runSvd(ctx.gpu, km, { rank: q, oversample: 0, powerIterations: 0, seed: seed + 1 }), m, n);
      expect(relativeDistance(other, expected), c.msg('another seed')).toBeGreaterThan(0.5);
    });

    it('full: the exact SVD, tall and wide', () => {
      for (const [m, n] of [[12, 9], [7, 10]] as const) {
        const c = new Case(`svd full ${m}x${n}`);
        const p = Math.min(m, n);
        const km = knownMatrix(m, n, Array.from({ length: p }, (_, i) => 5 * 0.8 ** i), c.subSeed());
        const got = runSvd(ctx.gpu, km, { full: true });
        expect(maxRelativeError(got.s, km.singularValues), c.msg('singular values')).toBeLessThanOrEqual(1e-5);
        expectOrthonormal(got, m, n, p, c.msg('factors'));
        const norm = Math.hypot(...km.singularValues);
        expect(reconstructionError(km.a, m, n, got.u, got.s, got.v) / norm, c.msg('reconstruction')).toBeLessThanOrEqual(1e-6);
        if (ctx.cpu) expect(got, c.msg('vs the CPU backend')).toEqual(runSvd(ctx.cpu, km, { full: true }));
      }
    });
  });
}

/** Q·Qᵀ·a in float64, Q an orthonormal basis of a·omega (m×n times n×q), by Gram–Schmidt twice. */
function projectOnSketch(a: ArrayLike<number>, m: number, n: number, omega: Float64Array, q: number): Float64Array {
  // The basis column-major: column t is basis[t·m, (t+1)·m).
  const basis = new Float64Array(m * q);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) for (let t = 0; t < q; t++) basis[t * m + i]! += a[i * n + j]! * omega[j * q + t]!;
  const col = (t: number) => basis.subarray(t * m, (t + 1) * m);
  const dot = (x: Float64Array, y: Float64Array) => x.reduce((sum, v, i) => sum + v * y[i]!, 0);
  for (let pass = 0; pass < 2; pass++) {
    for (let t = 0; t < q; t++) {
      const c = col(t);
      for (let p = 0; p < t; p++) {
        const d = dot(col(p), c);
        col(p).forEach((v, i) => (c[i]! -= d * v));
      }
      const norm = Math.sqrt(dot(c, c));
      c.forEach((v, i) => (c[i] = v / norm));
    }
  }
  const projected = new Float64Array(m * n);
  for (let t = 0; t < q; t++) {
    const c = col(t);
    const row = new Float64Array(n); // (Qᵀ·a)[t]
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) row[j]! += c[i]! * a[i * n + j]!;
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) projected[i * n + j]! += c[i]! * row[j]!;
  }
  return projected;
}
