/**
 * Runs the SVD's device routes on small matrices for compute-sanitizer (cuBLAS trsm, cuSOLVER
 * potrf/geqrf/orgqr/gesvdj and the library's own kernels around them):
 *
 *   compute-sanitizer --tool memcheck --report-api-errors no node --import tsx test/gpu/svd/sanitize.ts [name prefix]
 *
 * CholeskyQR2 on a full-rank sketch, its fallback to Householder QR on a rank-deficient one,
 * the Householder route itself, and the one-launch kernel (`small_rsvd`) on a full-rank and a
 * rank-deficient small matrix; every result is checked (singular values within 1e-4 of
 * the known ones, U and V orthonormal to 1e-5). Exits non-zero on a wrong result.
 */
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { SvdRoute } from '../../../src/compute/ops/svd.js';
import { svd } from '../../../src/compute/ops/svd.js';
import { freshSeed } from '../../unit/compute/helpers.js';
import { knownMatrix, orthonormalityError } from '../../unit/svd/known-spectrum.js';
import { maxRelativeError, toHost } from '../../unit/svd/svd-checks.js';

const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const seed = freshSeed();
let failures = 0;
const cases: { name: string; values: number[]; rank: number; route: SvdRoute | undefined; fallback: boolean; shape?: [number, number] }[] = [
  { name: 'CholeskyQR2, exactly rank q', values: Array.from({ length: 80 }, (_, i) => 5 * 0.97 ** i), rank: 70, route: 'device', fallback: false },
  { name: 'CholeskyQR2 breakdown -> Householder', values: [4, 3, 2, 1], rank: 70, route: 'device', fallback: true },
  { name: 'Householder route', values: Array.from({ length: 80 }, (_, i) => 5 * 0.97 ** i), rank: 70, route: 'householder', fallback: false },
  { name: 'one launch', values: Array.from({ length: 128 }, (_, i) => 3 * 0.75 ** i), rank: 8, route: undefined, fallback: false, shape: [320, 128] },
  { name: 'one launch, rank 4 (Householder in the block)', values: [5, 3, 2, 1], rank: 8, route: undefined, fallback: false, shape: [320, 128] },
];
// An argument keeps only the cases whose name starts with it (e.g. `one launch` for racecheck's slower runs).
const only = process.argv[2];
for (const c of cases.filter((x) => only === undefined || x.name.startsWith(only))) {
  const [m, n] = c.shape ?? [300, 200];
  const km = knownMatrix(m, n, c.values, seed);
  const fallbacks: string[] = [];
  using a = gpu.tensor(Float32Array.from(km.a), [m, n]);
  const r = toHost(svd(gpu.session, a, { rank: c.rank, seed }, c.route, { mark: () => {}, fallback: (reason) => fallbacks.push(reason) }));
  const known = Math.min(c.rank, c.values.length);
  const sError = maxRelativeError(r.s.subarray(0, known), km.singularValues.slice(0, known));
  const orthogonality = Math.max(orthonormalityError(r.u, m, c.rank), orthonormalityError(r.v, c.rank, n, true));
  // A rank-deficient sketch breaks potrf down in practice, but rounding decides: only the numbers are checked.
  const ok = sError <= 1e-4 && orthogonality <= 1e-5;
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${c.name}: σ error ${sError.toExponential(2)}, orthonormality ${orthogonality.toExponential(2)}, fallbacks ${fallbacks.length} (expected ${c.fallback ? 'one' : 'none'})`);
}
gpu.dispose();
console.log(`svd sanitize: ${only === undefined ? cases.length : `'${only}'`} checks (seed ${seed}), ${failures} wrong`);
process.exit(failures === 0 ? 0 : 1);
