/**
 * gpu.svd's one-launch route without a GPU: the CPU backend is given a DenseLinalg whose
 * `truncatedSvd` does what the CUDA kernel promises (status [max, min, info], the leading
 * triplets of a float64 SVD) on the host, so the route's own logic is checked here: when it is
 * taken, what it reads back, the errors a non-finite input, an f32-overflowing σ and a core that
 * did not converge give, and that none of them leaves a tensor allocated. The kernel's numbers
 * are checked on the GPU (test/gpu/svd/small-dense.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { cpuBuffer } from '../../../src/compute/cpu/element-io.js';
import { DenseLinalgError, type DenseLinalg, type TruncatedSvdShape, type TruncatedSvdViews } from '../../../src/compute/backend/dense-linalg.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { jacobiSvd } from '../../../src/compute/linalg/jacobi-svd.js';
import { svd } from '../../../src/compute/ops/svd.js';
import { cpuCompute, freshSeed } from '../compute/helpers.js';
import { knownMatrix } from './known-spectrum.js';
import { expectOrthonormal, maxRelativeError, recorder, toHost } from './svd-checks.js';

const f32 = (v: TensorView) => cpuBuffer(v).f32.subarray(v.offset, v.offset + v.size);

/** A one-launch SVD on the host; the chained routines are not expected to run. */
class OneLaunchHostLinalg implements DenseLinalg {
  readonly name = 'one-launch host emulation';
  runs: TruncatedSvdShape[] = [];
  /** What the next call reports as the core's status. */
  info = 0;
  /** Whether a call without `householderFallback` stops at a CholeskyQR2 breakdown (status 2), as the CUDA cluster form does. */
  breaksDown = false;
  readonly truncatedSvd = {
    fits: (m: number, n: number, q: number) => q <= 32 && m * n <= 4096,
    run: (views: TruncatedSvdViews, problem: TruncatedSvdShape) => this.run(views, problem),
  };

  private run(views: TruncatedSvdViews, problem: TruncatedSvdShape): void {
    this.runs.push(problem);
    const { m, n, rank } = problem;
    const a = f32(views.a);
    const status = f32(views.status);
    let hi = -Infinity;
    let lo = Infinity;
    for (const x of a) {
      hi = Number.isNaN(x) || Number.isNaN(hi) ? NaN : Math.max(hi, x);
      lo = Number.isNaN(x) || Number.isNaN(lo) ? NaN : Math.min(lo, x);
    }
    status.set([hi, lo, this.info]);
    if (!Number.isFinite(hi) || !Number.isFinite(lo)) return;
    if (this.breaksDown && !problem.householderFallback) {
      status[2] = 2;
      f32(views.u).fill(NaN); // what the caller must not return
      return;
    }
    const r = jacobiSvd(a, m, n);
    const p = r.s.length;
    const u = f32(views.u);
    const v = f32(views.v);
    for (let i = 0; i < m; i++) for (let t = 0; t < rank; t++) u[i * rank + t] = r.u[i * p + t]!;
    for (let t = 0; t < rank; t++) for (let j = 0; j < n; j++) v[t * n + j] = r.v[j * p + t]!;
    f32(views.s).set(r.s.subarray(0, rank));
  }

  orthonormalize(): void {
    throw new Error('orthonormalize: the one-launch route runs none');
  }
  cholesky(): void {
    throw new Error('cholesky: the one-launch route runs none');
  }
  solveUpperRight(): void {
    throw new Error('solveUpperRight: the one-launch route runs none');
  }
  svd(): void {
    throw new Error('svd: the one-launch route runs none');
  }
}

let gpu: GpuCompute;
const linalg = new OneLaunchHostLinalg();
beforeAll(async () => {
  gpu = await cpuCompute();
  (gpu.backend as { denseLinalg?: () => DenseLinalg }).denseLinalg = () => linalg;
});
afterAll(() => gpu.dispose());

describe('svd one-launch route (host emulation on the CPU)', () => {
  it('takes the route where it fits, with the sketch width and options it resolved, and returns its factors', () => {
    const seed = freshSeed();
    const km = knownMatrix(60, 40, Array.from({ length: 40 }, (_, i) => 2 * 0.7 ** i), seed);
    using a = gpu.tensor(Float32Array.from(km.a), [60, 40]);
    linalg.runs = [];
    const probe = recorder();
    const r = toHost(svd(gpu.session, a, { rank: 5, oversample: 3, powerIterations: 1, seed }, undefined, probe));
    expect(linalg.runs).toEqual([{ m: 60, n: 40, q: 8, rank: 5, powerIterations: 1, seed }]);
    expect(probe.stages).toEqual(['one launch', 'status read-back']);
    expect(maxRelativeError(r.s, km.singularValues.slice(0, 5)), `seed ${seed}`).toBeLessThanOrEqual(1e-6);
    expectOrthonormal(r, 60, 40, 5, `seed ${seed}`);
  });

  it('asks again with the Householder fallback where the launch stopped at a CholeskyQR2 breakdown', () => {
    const seed = freshSeed();
    const km = knownMatrix(50, 30, [3, 2, 1], seed); // rank 3: a sketch of 8 columns is rank-deficient
    using a = gpu.tensor(Float32Array.from(km.a), [50, 30]);
    linalg.runs = [];
    linalg.breaksDown = true;
    try {
      const r = toHost(svd(gpu.session, a, { rank: 3, oversample: 5, seed }));
      const shape = { m: 50, n: 30, q: 8, rank: 3, powerIterations: 2, seed };
      expect(linalg.runs).toEqual([shape, { ...shape, householderFallback: true }]);
      expect(maxRelativeError(r.s, [3, 2, 1]), `seed ${seed}`).toBeLessThanOrEqual(1e-6);
      expectOrthonormal(r, 50, 30, 3, `seed ${seed}`);
    } finally {
      linalg.breaksDown = false;
    }
  });

  it('leaves the route to the others where it does not fit, and where a route is asked for', () => {
    linalg.runs = [];
    using large = gpu.randn([100, 100], { seed: 1 });
    expectOrthonormal(toHost(svd(gpu.session, large, { rank: 4 })), 100, 100, 4, 'past fits: the host route');
    using small = gpu.randn([20, 10], { seed: 2 });
    expectOrthonormal(toHost(svd(gpu.session, small, { rank: 3 }, 'host')), 20, 10, 3, "route 'host'");
    expect(() => svd(gpu.session, small, { rank: 3 }, 'device')).toThrow(/the one-launch route runs none/);
    expect(linalg.runs).toEqual([]);
  });

  it('refuses NaN, ±Infinity, an f32-overflowing σ and a core that did not converge, and leaves nothing allocated', () => {
    const before = gpu.memoryStats().inUseBytes;
    for (const bad of [NaN, Infinity, -Infinity]) {
      const values = new Float32Array(30 * 20).fill(0.5);
      values[123] = bad;
      using a = gpu.tensor(values, [30, 20]);
      expect(() => gpu.svd(a, { rank: 3 }), String(bad)).toThrow(InvalidArgumentError);
      expect(() => gpu.svd(a, { rank: 3 }), String(bad)).toThrow(/^svd: a Tensor\(f32 \[30, 20\]\) contains NaN or ±Infinity/);
    }
    {
      using huge = gpu.full([30, 20], 3e38);
      expect(() => gpu.svd(huge, { rank: 3 })).toThrow(/beyond f32's range/);
    }
    {
      using a = gpu.randn([30, 20], { seed: 3 });
      linalg.info = 1;
      try {
        expect(() => gpu.svd(a, { rank: 3 })).toThrow(DenseLinalgError);
      } finally {
        linalg.info = 0;
      }
    }
    expect(gpu.memoryStats().inUseBytes).toBe(before);
  });
});
