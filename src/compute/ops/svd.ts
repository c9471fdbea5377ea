/**
 * `gpu.svd(a, options)`: truncated SVD of an m×n f32 matrix by randomized range finding
 * (Halko, Martinsson and Tropp, 2011), and `full: true`, the exact SVD of a small matrix.
 *
 * The truncated path is composed from GpuCompute ops, so it is the same algorithm on every
 * backend (the CPU backend runs it as the fallback):
 * 1. Sketch: Y = A·Ω with Ω an n×q Gaussian matrix (`gpu.randn`, keyed by `seed`),
 *    q = rank + oversample; Y = A where q = n (the sketch then spans A's columns exactly,
 *    and an ill-conditioned Ω would only add f32 rounding; `linalg/svd-plan.ts`).
 * 2. Power iterations: Z = Aᵀ·Q, Y = A·Z, re-orthonormalising after every product so the
 *    small singular directions survive f32 rounding (as torch.svd_lowrank's niter).
 * 3. Bᵀ = Aᵀ·Q (n×q), factored Bᵀ = P·R; the q×q core Rᵀ = X·Σ·Yᵀ is decomposed exactly, and
 *    U = Q·X, V = (P·Y)ᵀ are two more products.
 *
 * Two routes run the dense steps (orthonormalisations and the core):
 *
 * Device route (the default for q > `HOST_ROUTE_MAX_WIDTH` on a backend with
 * `DenseLinalg`: cuBLAS and cuSOLVER on CUDA), no read-back until the end. Every basis
 * is orthonormalised by CholeskyQR2 on the device: G = XᵀX (one product), G = RᵀR (potrf),
 * X ← X·R⁻¹ (trsm), twice. It replaced cuSOLVER's Householder QR (geqrf + orgqr, the panel
 * transposed in and out), which runs q dependent reflections as many short kernels. On an
 * H200 at q = 138 the six orthonormalisations take 1.5–1.6 ms with CholeskyQR2 against
 * 5.9–6.6 ms with Householder QR, the whole call 5.9–6.3 ms against 10.4–10.7 ms
 * (torch.svd_lowrank: 9.95–10.2 ms); at q = 42, 0.54–0.64 ms against 1.9 ms
 * (bench/notes/svd.md). CholeskyQR2 is optimistic: a rank-deficient or too ill-conditioned
 * sketch makes potrf meet a non-positive pivot, or leaves U or V off orthonormal (checked
 * before their polish, against 1e-3); every status is read once at the end, and a breakdown
 * runs the call again with Householder QR, which is orthonormal whatever the rank (so an
 * exactly low-rank input with rank < q costs both). The core is the Jacobi SVD (gesvdj) of
 * the q×q Rᵀ, 3.1 ms at q = 138: syevd of the q×q Gram matrix takes 0.93 ms but squares the
 * condition number, σ_k losing ~u·(σ₁/σ_k)² relative (1e-4 at σ₁/σ_k ≈ 60, inside the
 * accuracy target's range), so gesvdj stays.
 *
 * One-launch route (CUDA, q ≤ 32, m·n·q ≤ 2^21 and the panels in one block's shared memory;
 * `linalg.truncatedSvd`): the same algorithm, with the finiteness check folded in, in one kernel
 * (`small_rsvd`, one block: the products with A through L1, each orthonormalisation and the
 * core's SVD as the small route's kernels do them, the panels in shared memory; from sm_90
 * `small_rsvd_cluster`, which also draws Ω), then one read of its status: one launch and one
 * synchronisation, where the small route queues ~40 ops.
 *
 * Small route (CUDA, q ≤ `HOST_ROUTE_MAX_WIDTH` and max(m, n)·(q | 1) ≤ 2^15): the device route in its
 * 'householder' mode, every QR and the core's SVD one launch of a one-block kernel of ours
 * (`cuda/small-dense.ts`: CholeskyQR2 in f64 within the block, Householder where a pivot shows
 * dependence, so orthonormal whatever the rank): a short chain of launches with no read-back
 * until the status at the end, where the host route waits for the device at every pass.
 *
 * Host route (the CPU backend, CUDA without cuSOLVER, and other q ≤ `HOST_ROUTE_MAX_WIDTH`):
 * CholeskyQR on the device with its factor on the host (G = XᵀX with one product, R in
 * float64 on the host, Q = X·R⁻¹ with one product), the core decomposed on the host in
 * float64 (`linalg/core-svd.ts`). Each pass is guarded (`linalg/guarded-cholesky.ts`: Jacobi
 * scaling, dependent columns kept as residuals for the next pass, zero columns replaced by
 * random ones) and the final bases get passes until the input of the last one was already
 * near orthonormal (CholeskyQR2 at least), which leaves them orthonormal to f32 rounding
 * whatever the input's rank. Its host work grows as q³ (per pass a q×q read-back and ~q³/3
 * flops, the core ~7q³): small at q ≈ 40, most of the call at q ≈ 140 (32–35 ms on an
 * H200 host).
 *
 * The input is scaled by a power of two near 1/max|a| inside every product (through the
 * products' alpha), so the Gram matrices neither overflow nor underflow f32.
 */
import { InvalidArgumentError } from '../../errors.js';
import { planReduction } from '../core/reduce-plan.js';
import { checkFlag, checkInteger, checkOptions, describeValue, optionKeys, validateSeed } from '../core/validation.js';
import { DenseLinalgError, type DenseLinalg } from '../backend/dense-linalg.js';
import { DeviceRandomizedSvd } from '../linalg/device-randomized-svd.js';
import { jacobiSvd } from '../linalg/jacobi-svd.js';
import { RandomizedSvd } from '../linalg/randomized-svd.js';
import { sketchWidth, type SvdProblem, type SvdResult, type SvdStageProbe } from '../linalg/svd-plan.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { tensor } from './creation.js';

export type { SvdResult, SvdStageProbe };

/** Options of `gpu.svd`. */
export interface SvdOptions {
  /** Singular triplets to return, 1 ≤ rank ≤ min(m, n). Default: min(6, m, n); with `full`, min(m, n). */
  rank?: number;
  /**
   * Extra sketch columns beyond `rank` (q = rank + oversample, at most min(m, n)). Default 10.
   * Keep at least 2 beyond the matrix's numerical rank, or a power iteration: with neither,
   * an unlucky seed can lose a direction to f32 rounding (a 1e-4–1e-3 relative error in a few
   * seeds in a thousand at q = rank).
   */
  oversample?: number;
  /** Power iterations (torch.svd_lowrank's niter). Default 2; more sharpen a slowly decaying spectrum. */
  powerIterations?: number;
  /** Philox key of the Gaussian test matrix; the result is deterministic for a seed. Default 0. */
  seed?: number;
  /** Exact SVD in float64 on the host (one-sided Jacobi), for small matrices (min(m, n) ≤ 512). Default false. */
  full?: boolean;
}

/** The keys {@link SvdOptions} takes. */
export const SVD_OPTIONS = optionKeys<SvdOptions>({ rank: true, oversample: true, powerIterations: true, seed: true, full: true });

/** Defaults of {@link SvdOptions}. */
export const SVD_DEFAULTS = { rank: 6, oversample: 10, powerIterations: 2, seed: 0 } as const;
/** The largest min(m, n) `full: true` accepts (its host Jacobi work grows as m·n·min(m, n)). */
export const FULL_SVD_MAX_DIM = 512;

/**
 * Sketches at most this wide keep the host route even where the device has dense routines:
 * its q³ host work is small there, and the device route's core SVD alone (gesvdj, 0.8 ms at
 * q = 42) costs more than the host's whole core. H200, 4096×4096 and 8192×1024: q = 42, host
 * route 2.2–2.8 ms, device route 2.1–3.0 ms (even); q = 48, 2.4–3.0 ms against 2.3 ms; q = 64,
 * 4.5 ms against 2.2–2.4 ms; q = 138, 32–35 ms against 5.9–6.3 ms.
 */
export const HOST_ROUTE_MAX_WIDTH = 44;
/**
 * Truncated (or, with `full`, exact) SVD of the f32 matrix `a`: a ≈ u·diag(s)·v with u m×k,
 * s [k], v k×n. Synchronous: it reads small q×q matrices back from the device between steps.
 */
export function svd(s: Session, a: Tensor<'f32'>, options?: unknown, route?: SvdRoute, probe?: SvdStageProbe): SvdResult {
  const o = resolve(s, a, options);
  s.assertSupports('svd', 'matmul');
  const linalg = route === undefined && !o.full ? s.backend.denseLinalg?.() : undefined;
  const oneLaunch = linalg?.truncatedSvd?.fits(o.m, o.n, sketchWidth(o)) ? linalg : undefined;
  let maxAbs: number;
  let result: SvdResult;
  if (oneLaunch) {
    ({ result, maxAbs } = oneLaunchSvd(s, a, o, oneLaunch, probe));
  } else {
    maxAbs = checkFinite(s, a);
    result = decompose(s, a, o, maxAbs, route, probe);
  }
  try {
    // σ₁ ≤ ‖a‖_F ≤ √(m·n)·max|a|: only a bound beyond f32's range needs the largest value read back.
    if (Math.sqrt(o.m * o.n) * maxAbs > F32_MAX && !Number.isFinite(result.s.toArraySync()[0]!)) {
      throw new InvalidArgumentError(
        `svd: the largest singular value of a ${a.toString()} (max |a| ${maxAbs.toExponential(3)}) is beyond f32's range (${F32_MAX.toExponential(3)}); scale a down`,
      );
    }
  } catch (err) {
    for (const t of [result.u, result.s, result.v]) t.dispose();
    throw err;
  }
  return result;
}

/**
 * The small route in one launch (`linalg.truncatedSvd`; CUDA: `small_rsvd_cluster` or
 * `small_rsvd`): one device call drawing Ω and running the whole algorithm and the finiteness
 * check, then one read of its status. Returns the factors and max|a|.
 */
function oneLaunchSvd(
  s: Session,
  a: Tensor<'f32'>,
  o: SvdProblem,
  linalg: DenseLinalg,
  probe: SvdStageProbe | undefined,
): { result: SvdResult; maxAbs: number } {
  const q = sketchWidth(o);
  const k = o.rank;
  // Indexed reads and try/finally, not destructuring and `using`: before V8 optimises this path
  // (a pipeline calls it once a pass) their iterator and disposal helpers cost more than the rest.
  const status = s.empty<'f32'>('svd', [3], 'f32');
  const made: Tensor<'f32'>[] = [];
  try {
    const u = s.empty<'f32'>('svd', [o.m, k], 'f32');
    made.push(u);
    const sv = s.empty<'f32'>('svd', [k], 'f32');
    made.push(sv);
    const v = s.empty<'f32'>('svd', [k, o.n], 'f32');
    made.push(v);
    const views = { a: a.view, u: u.view, s: sv.view, v: v.view, status: status.view };
    const shape = { m: o.m, n: o.n, q, rank: k, powerIterations: o.powerIterations, seed: o.seed };
    linalg.truncatedSvd!.run(views, shape);
    probe?.mark('one launch');
    let read = status.toArraySync() as Float32Array;
    probe?.mark('status read-back');
    if (read[2] === 2) {
      // CholeskyQR2 broke down (a rank-deficient sketch) where the launch has no fallback.
      linalg.truncatedSvd!.run(views, { ...shape, householderFallback: true });
      read = status.toArraySync() as Float32Array;
    }
    const hi = read[0]!;
    const lo = read[1]!;
    const info = read[2]!;
    refuseNonFinite(a, hi, lo);
    if (info !== 0) throw new DenseLinalgError(`the Jacobi SVD of the ${q}×${q} core`, info, linalg.name);
    return { result: { u, s: sv, v }, maxAbs: Math.max(Math.abs(hi), Math.abs(lo)) };
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  } finally {
    status.dispose();
  }
}

/** The largest finite f32. */
const F32_MAX = 3.4028234663852886e38;

function decompose(s: Session, a: Tensor<'f32'>, o: SvdProblem, maxAbs: number, route: SvdRoute | undefined, probe: SvdStageProbe | undefined): SvdResult {
  if (o.full) return fullSvd(s, a, o);
  const q = sketchWidth(o);
  if (route === undefined && q <= HOST_ROUTE_MAX_WIDTH) {
    // Narrow sketches of small matrices: one-launch factorizations beat the host's round trips.
    const linalg = s.backend.denseLinalg?.();
    const small = linalg?.small;
    if (linalg && small && Math.max(o.m, o.n) * (q | 1) <= small.qrElements && q <= small.qrColumns && q <= small.svdOrder) {
      return new DeviceRandomizedSvd(s, a, o, maxAbs, linalg, 'householder', probe).run()!;
    }
  }
  const onDevice = route === 'device' || route === 'householder' || (route === undefined && q > HOST_ROUTE_MAX_WIDTH);
  const linalg = onDevice ? s.backend.denseLinalg?.() : undefined;
  if (onDevice && route !== undefined && !linalg) throw new InvalidArgumentError(`svd: the ${s.backend.kind} backend has no device dense linear algebra`);
  if (!linalg) return new RandomizedSvd(s, a, o, maxAbs).run();
  if (route !== 'householder') {
    const result = new DeviceRandomizedSvd(s, a, o, maxAbs, linalg, 'cholesky', probe).run();
    if (result) return result;
    s.logger.debug(`svd: CholeskyQR2 broke down on ${a.toString()} (rank-deficient or ill-conditioned sketch); running again with Householder QR`);
  }
  return new DeviceRandomizedSvd(s, a, o, maxAbs, linalg, 'householder', probe).run()!;
}

/**
 * Where the dense steps of a truncated SVD run: 'device' (the backend's {@link DenseLinalg}:
 * CholeskyQR2 with a Householder QR fallback, and a Jacobi SVD of the core; cuSOLVER and
 * cuBLAS on CUDA), 'householder' (the device with Householder QR throughout) or 'host'
 * (CholeskyQR with its factor and the core in float64 on the host). Default: 'device' where
 * the backend has it and the sketch is wider than {@link HOST_ROUTE_MAX_WIDTH}. For benchmarks
 * and tests; `gpu.svd` always takes the default.
 */
export type SvdRoute = 'device' | 'householder' | 'host';

function resolve(s: Session, a: Tensor, options: unknown): SvdProblem {
  const op = 'svd';
  s.checkTensor(op, a, 'a');
  const o = checkOptions<SvdOptions>(op, options, SVD_OPTIONS);
  if (a.dtype !== 'f32') {
    throw new InvalidArgumentError(`${op}: a must be f32, got ${a.toString()}; cast it first, e.g. gpu.cast(a, 'f32')`);
  }
  if (a.rank !== 2) throw new InvalidArgumentError(`${op}: a must be a 2-D matrix [m, n], got ${a.toString()}`);
  const m = a.shape[0]!;
  const n = a.shape[1]!;
  if (m === 0 || n === 0) throw new InvalidArgumentError(`${op}: a ${a.toString()} is empty`);
  const full = checkFlag(op, 'full', o.full, false);
  const smaller = Math.min(m, n);
  const rank = o.rank ?? (full ? smaller : Math.min(SVD_DEFAULTS.rank, smaller));
  if (!Number.isSafeInteger(rank) || rank < 1 || rank > smaller) {
    throw new InvalidArgumentError(`${op}: rank must be an integer in [1, min(m, n) = ${smaller}] for a ${a.toString()}, got ${describeValue(rank)}`);
  }
  const oversample = checkInteger(op, 'oversample', o.oversample ?? SVD_DEFAULTS.oversample, 0);
  const powerIterations = checkInteger(op, 'powerIterations', o.powerIterations ?? SVD_DEFAULTS.powerIterations, 0);
  const seed = validateSeed(op, o.seed ?? SVD_DEFAULTS.seed);
  if (full && smaller > FULL_SVD_MAX_DIM) {
    throw new InvalidArgumentError(
      `${op}: full: true is for small matrices (min(m, n) ≤ ${FULL_SVD_MAX_DIM}), got ${a.toString()}; pass a rank for a truncated SVD`,
    );
  }
  return { m, n, rank, oversample, powerIterations, seed, full };
}

/**
 * Refuses NaN and ±Infinity with two reductions on the device (max and min propagate NaN and
 * show an infinity) into one two-element tensor, read back at once: two numbers and one
 * synchronisation instead of the matrix. Returns max|a|.
 */
function checkFinite(s: Session, a: Tensor): number {
  const { plan } = planReduction(a.shape, undefined, false);
  using extremes = s.produce<'f32'>('svd', [2], 'f32', (out) => {
    s.backend.reduce('max', a.view, { ...out.view, shape: [], size: 1 }, plan);
    s.backend.reduce('min', a.view, { ...out.view, shape: [], offset: out.view.offset + 1, size: 1 }, plan);
  });
  const [hi, lo] = extremes.toArraySync() as Float32Array;
  refuseNonFinite(a, hi!, lo!);
  return Math.max(Math.abs(hi!), Math.abs(lo!));
}

/** Throws the error of an input with NaN or ±Infinity, told by its max and min. */
function refuseNonFinite(a: Tensor, hi: number, lo: number): void {
  if (!Number.isFinite(hi) || !Number.isFinite(lo)) {
    throw new InvalidArgumentError(`svd: a ${a.toString()} contains NaN or ±Infinity (max ${hi}, min ${lo})`);
  }
}

/** Exact SVD on the host: the matrix is small, so one-sided Jacobi in float64 is both exact and simple. */
function fullSvd(s: Session, a: Tensor, o: SvdProblem): SvdResult {
  const { m, n, rank: k } = o;
  const { u, s: sigma, v } = jacobiSvd(a.toArraySync() as Float32Array, m, n);
  const p = Math.min(m, n);
  const uk = new Float32Array(m * k);
  for (let i = 0; i < m; i++) for (let j = 0; j < k; j++) uk[i * k + j] = u[i * p + j]!;
  const vk = new Float32Array(k * n);
  for (let j = 0; j < k; j++) for (let i = 0; i < n; i++) vk[j * n + i] = v[i * p + j]!;
  return hostResult(s, [uk, [m, k]], [Float32Array.from(sigma.subarray(0, k)), [k]], [vk, [k, n]]);
}

/** u, s and v as tensors from host values; none is left allocated when one cannot be. */
function hostResult(s: Session, ...parts: [values: Float32Array, shape: number[]][]): SvdResult {
  const made: Tensor<'f32'>[] = [];
  try {
    for (const [values, shape] of parts) made.push(tensor<'f32'>(s, values, shape, 'f32'));
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  }
  const [u, sigma, v] = made as [Tensor<'f32'>, Tensor<'f32'>, Tensor<'f32'>];
  return { u, s: sigma, v };
}
