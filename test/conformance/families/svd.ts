/**
 * svd on matrices of known spectrum (`test/unit/svd`): truncated, from an exactly low-rank matrix
 * (tall and wide) and with a sketch wide enough (q > 44) for a backend's device dense routines,
 * recovering the singular values, with orthonormal factors and a reconstruction at the optimal
 * error and near the CPU backend's; and full, the exact SVD, identical to the CPU's (it runs on
 * the host from the same f32 values).
 */
import { expect, it } from 'vitest';
import { knownMatrix, reconstructionError } from '../../unit/svd/known-spectrum.js';
import { expectOrthonormal, expectRecovered, maxRelativeError, runSvd } from '../../unit/svd/svd-checks.js';
import type { ConformanceContext } from '../context.js';
import { Case } from '../seeds.js';

const TRUNCATED: { name: string; m: number; n: number; spectrum: number[]; rank: number; oversample?: number }[] = [
  { name: 'tall, exactly rank 8', m: 48, n: 36, spectrum: Array.from({ length: 8 }, (_, i) => 10 * 0.7 ** i), rank: 5 },
  { name: 'wide, exactly rank 6', m: 30, n: 45, spectrum: Array.from({ length: 6 }, (_, i) => 3 * 0.8 ** i), rank: 6 },
  { name: 'sketch of 46 columns', m: 64, n: 48, spectrum: Array.from({ length: 48 }, (_, i) => 0.9 ** i), rank: 36, oversample: 10 },
];

export function describeSvd(ctx: ConformanceContext): void {
  ctx.describeOps('svd', ['svd'], () => {
    if (!ctx.dtypes.includes('f32')) return;
    for (const t of TRUNCATED) {
      it(`truncated: ${t.name}`, () => {
        const c = new Case(`svd ${t.name}`);
        const km = knownMatrix(t.m, t.n, t.spectrum, c.subSeed());
        const options = { rank: t.rank, seed: c.subSeed(), ...(t.oversample === undefined ? {} : { oversample: t.oversample }) };
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
