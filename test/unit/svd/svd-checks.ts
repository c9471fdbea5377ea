/** Running `svd` on a known matrix and checking its factors, shared by the CPU and GPU svd tests. */
import { expect } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { svd, type SvdOptions, type SvdResult, type SvdRoute, type SvdStageProbe } from '../../../src/compute/ops/svd.js';
import { optimalError, orthonormalityError, reconstructionError, type KnownMatrix } from './known-spectrum.js';

/** The factors of one svd call, on the host. */
export interface HostSvd {
  u: Float32Array;
  s: Float32Array;
  v: Float32Array;
}

/** Copies the factors to the host and disposes them. */
export function toHost(r: SvdResult): HostSvd {
  try {
    return { u: r.u.toArraySync(), s: r.s.toArraySync(), v: r.v.toArraySync() };
  } finally {
    r.u.dispose();
    r.s.dispose();
    r.v.dispose();
  }
}

/** `svd` of the known matrix on `gpu` (through `route` when given, else as `gpu.svd` chooses). */
export function runSvd(gpu: GpuCompute, km: KnownMatrix, options?: SvdOptions, route?: SvdRoute): HostSvd {
  using a = gpu.tensor(Float32Array.from(km.a), [km.m, km.n]);
  return toHost(svd(gpu.session, a, options, route));
}

/** ‖x − y‖ / ‖y‖ (Frobenius): how far `x` is from `y`, relative to `y`. */
export function relativeDistance(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < x.length; i++) {
    diff += (x[i]! - y[i]!) ** 2;
    norm += y[i]! ** 2;
  }
  return Math.sqrt(diff / Math.max(norm, 1e-300));
}

/** U·diag(S)·V on the host, in float64. */
export function reconstruction(r: HostSvd, m: number, n: number): Float64Array {
  const k = r.s.length;
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const scaled = r.u[i * k + p]! * r.s[p]!;
      for (let j = 0; j < n; j++) out[i * n + j]! += scaled * r.v[p * n + j]!;
    }
  }
  return out;
}

/** Largest |got − want| / want over want's entries. */
export function maxRelativeError(got: ArrayLike<number>, want: readonly number[]): number {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / want[i]!);
  return worst;
}

/** U (m×k) has orthonormal columns and V (k×n) orthonormal rows, to 1e-5. */
export function expectOrthonormal(r: HostSvd, m: number, n: number, k: number, label: string): void {
  expect(orthonormalityError(r.u, m, k), `${label}: U`).toBeLessThanOrEqual(1e-5);
  expect(orthonormalityError(r.v, k, n, true), `${label}: V`).toBeLessThanOrEqual(1e-5);
}

/** A probe recording the fallbacks and orthonormality checks of one call. */
export function recorder(): SvdStageProbe & { fallbacks: string[]; deviations: number[]; stages: string[] } {
  const fallbacks: string[] = [];
  const deviations: number[] = [];
  const stages: string[] = [];
  return {
    fallbacks,
    deviations,
    stages,
    mark: (stage) => stages.push(stage),
    orthonormality: (d) => deviations.push(d),
    fallback: (reason) => fallbacks.push(reason),
  };
}

/**
 * The targets on a matrix of known spectrum: the first `rank` singular values within 1e-4
 * relative, U and V orthonormal, and the reconstruction error at the optimal rank-`rank` error
 * (to 1e-4 relative, plus f32 rounding of the whole matrix).
 */
export function expectRecovered(r: HostSvd, km: KnownMatrix, m: number, n: number, rank: number, label: string): void {
  expect(maxRelativeError(r.s, km.singularValues.slice(0, rank)), label).toBeLessThanOrEqual(1e-4);
  expectOrthonormal(r, m, n, rank, label);
  const norm = Math.hypot(...km.singularValues);
  expect(reconstructionError(km.a, m, n, r.u, r.s, r.v), label).toBeLessThanOrEqual(optimalError(km.singularValues, rank) * 1.0001 + 1e-5 * norm);
}
