/**
 * `gpu.svd(a, options)`: truncated SVD of an m×n f32 matrix by randomized range finding
 * (Halko, Martinsson and Tropp, 2011), and `full: true`, the exact SVD of a small matrix.
 *
 * The truncated path is composed from GpuCompute ops, so it is the same algorithm on every
 * backend (the CPU backend runs it as the fallback):
 * 1. Sketch: Y = A·Ω with Ω an n×q Gaussian matrix (`gpu.randn`, keyed by `seed`),
 *    q = rank + oversample.
 * 2. Power iterations: Z = Aᵀ·Q, Y = A·Z, re-orthonormalising after every product so the
 *    small singular directions survive f32 rounding (as torch.svd_lowrank's niter).
 * 3. Bᵀ = Aᵀ·Q (n×q), factored Bᵀ = P·R; the q×q core Rᵀ = X·Σ·Yᵀ is decomposed exactly, and
 *    U = Q·X, V = (P·Y)ᵀ are two more products.
 *
 * Two routes run the dense steps (orthonormalisations and the core):
 *
 * Device route (the default for q > {@link HOST_ROUTE_MAX_WIDTH} on a backend with
 * {@link DenseLinalg}: cuBLAS and cuSOLVER on CUDA), no read-back until the end. Every basis
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
 * Host route (the CPU backend, CUDA without cuSOLVER, and q ≤ {@link HOST_ROUTE_MAX_WIDTH}):
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
import { InvalidArgumentError } from '../errors.js';
import { DenseLinalgError, type DenseLinalg } from './backend/dense-linalg.js';
import type { GpuCompute } from './gpu-compute.js';
import { appliedR, choleskyStep, type CholeskyStep } from './linalg/guarded-cholesky.js';
import { coreSvd } from './linalg/core-svd.js';
import { jacobiSvd } from './linalg/jacobi-svd.js';
import { multiplyUpper } from './linalg/triangular.js';
import type { MatmulOptions } from './matmul-op.js';
import type { Tensor } from './tensor.js';
import { validateSeed } from './core/validation.js';

/** Options of {@link svd}. */
export interface SvdOptions {
  /** Singular triplets to return, 1 ≤ rank ≤ min(m, n). Default: min(6, m, n); with `full`, min(m, n). */
  rank?: number;
  /** Extra sketch columns beyond `rank` (q = rank + oversample, at most min(m, n)). Default 10. */
  oversample?: number;
  /** Power iterations (torch.svd_lowrank's niter). Default 2; more sharpen a slowly decaying spectrum. */
  powerIterations?: number;
  /** Philox key of the Gaussian test matrix; the result is deterministic for a seed. Default 0. */
  seed?: number;
  /** Exact SVD in float64 on the host (one-sided Jacobi), for small matrices (min(m, n) ≤ 512). Default false. */
  full?: boolean;
}

/** a ≈ u·diag(s)·v. */
export interface SvdResult {
  /** m×k, orthonormal columns (left singular vectors). */
  u: Tensor<'f32'>;
  /** k singular values, descending. */
  s: Tensor<'f32'>;
  /** k×n, orthonormal rows (right singular vectors, transposed, like torch's Vh). */
  v: Tensor<'f32'>;
}

/** Defaults of {@link SvdOptions}. */
export const SVD_DEFAULTS = { rank: 6, oversample: 10, powerIterations: 2, seed: 0 } as const;
/** The largest min(m, n) `full: true` accepts (its host Jacobi work grows as m·n·min(m, n)). */
export const FULL_SVD_MAX_DIM = 512;

const PRODUCT: MatmulOptions = { precision: 'highest' };
/** A pass whose input had every scaled pivot above this leaves its output orthonormal to rounding. */
const WELL_CONDITIONED_PIVOT = 0.5;
/**
 * Sketches at most this wide keep the host route even where the device has dense routines:
 * its q³ host work is small there, and the device route's core SVD alone (gesvdj, 0.8 ms at
 * q = 42) costs more than the host's whole core. H200, 4096×4096 and 8192×1024: q = 42, host
 * route 2.2–2.8 ms, device route 2.1–3.0 ms (even); q = 48, 2.4–3.0 ms against 2.3 ms; q = 64,
 * 4.5 ms against 2.2–2.4 ms; q = 138, 32–35 ms against 5.9–6.3 ms.
 */
const HOST_ROUTE_MAX_WIDTH = 44;
/** Passes allowed for a final basis (exactly dependent columns need about four). */
const MAX_FINAL_PASSES = 6;

interface Resolved {
  m: number;
  n: number;
  rank: number;
  oversample: number;
  powerIterations: number;
  seed: number;
  full: boolean;
}

/**
 * Truncated (or, with `full`, exact) SVD of the f32 matrix `a`: a ≈ u·diag(s)·v with u m×k,
 * s [k], v k×n. Synchronous: it reads small q×q matrices back from the device between steps.
 */
export function svd(gpu: GpuCompute, a: Tensor<'f32'>, options: SvdOptions = {}, route?: SvdRoute, probe?: SvdStageProbe): SvdResult {
  const o = resolve(gpu, a, options);
  const maxAbs = checkFinite(gpu, a);
  if (o.full) return fullSvd(gpu, a, o);
  const onDevice = route === 'device' || route === 'householder' || (route === undefined && sketchWidth(o) > HOST_ROUTE_MAX_WIDTH);
  const linalg = onDevice ? gpu.backend.denseLinalg?.() : undefined;
  if (onDevice && route !== undefined && !linalg) throw new InvalidArgumentError(`svd: the ${gpu.backend.kind} backend has no device dense linear algebra`);
  if (!linalg) return new RandomizedSvd(gpu, a, o, maxAbs).run();
  if (route !== 'householder') {
    const result = new DeviceRandomizedSvd(gpu, a, o, maxAbs, linalg, 'cholesky', probe).run();
    if (result) return result;
    gpu.logger.debug(`svd: CholeskyQR2 broke down on ${a.toString()} (rank-deficient or ill-conditioned sketch); running again with Householder QR`);
  }
  return new DeviceRandomizedSvd(gpu, a, o, maxAbs, linalg, 'householder', probe).run()!;
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

/** Observes a device-route call, for `bench/svd.ts`'s stage timing and the tests; never needed otherwise. */
export interface SvdStageProbe {
  /** The work of `stage` has just been queued (the next stage's starts after it). */
  mark(stage: string): void;
  /** max|XᵀX − I| of U or V before their polish, read back at the end of a CholeskyQR2 attempt. */
  orthonormality?(deviation: number): void;
  /** The CholeskyQR2 attempt broke down for `reason`; the call runs again with Householder QR. */
  fallback?(reason: string): void;
}

function resolve(gpu: GpuCompute, a: Tensor, options: SvdOptions): Resolved {
  const op = 'svd';
  gpu.checkTensor(op, a, 'a');
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`${op}: options must be an object`);
  if (a.dtype !== 'f32') {
    throw new InvalidArgumentError(`${op}: a must be f32, got ${a.toString()}; cast it first, e.g. gpu.cast(a, 'f32')`);
  }
  if (a.rank !== 2) throw new InvalidArgumentError(`${op}: a must be a 2-D matrix [m, n], got ${a.toString()}`);
  const [m, n] = a.shape as [number, number];
  if (m === 0 || n === 0) throw new InvalidArgumentError(`${op}: a ${a.toString()} is empty`);
  const full = options.full ?? false;
  if (typeof full !== 'boolean') throw new InvalidArgumentError(`${op}: full must be a boolean, got ${String(full)}`);
  const smaller = Math.min(m, n);
  const rank = options.rank ?? (full ? smaller : Math.min(SVD_DEFAULTS.rank, smaller));
  if (!Number.isSafeInteger(rank) || rank < 1 || rank > smaller) {
    throw new InvalidArgumentError(`${op}: rank must be an integer in [1, min(m, n) = ${smaller}] for a ${a.toString()}, got ${String(rank)}`);
  }
  const oversample = options.oversample ?? SVD_DEFAULTS.oversample;
  if (!Number.isSafeInteger(oversample) || oversample < 0) {
    throw new InvalidArgumentError(`${op}: oversample must be an integer ≥ 0, got ${String(oversample)}`);
  }
  const powerIterations = options.powerIterations ?? SVD_DEFAULTS.powerIterations;
  if (!Number.isSafeInteger(powerIterations) || powerIterations < 0) {
    throw new InvalidArgumentError(`${op}: powerIterations must be an integer ≥ 0, got ${String(powerIterations)}`);
  }
  const seed = validateSeed(op, options.seed ?? SVD_DEFAULTS.seed);
  if (full && smaller > FULL_SVD_MAX_DIM) {
    throw new InvalidArgumentError(
      `${op}: full: true is for small matrices (min(m, n) ≤ ${FULL_SVD_MAX_DIM}), got ${a.toString()}; pass a rank for a truncated SVD`,
    );
  }
  return { m, n, rank, oversample, powerIterations, seed, full };
}

/**
 * Refuses NaN and ±Infinity with two reductions on the device (max and min propagate NaN and
 * show an infinity), reading back two numbers instead of the matrix. Returns max|a|.
 */
function checkFinite(gpu: GpuCompute, a: Tensor): number {
  using largest = gpu.max(a);
  using smallest = gpu.min(a);
  const hi = largest.toArraySync()[0]!;
  const lo = smallest.toArraySync()[0]!;
  if (!Number.isFinite(hi) || !Number.isFinite(lo)) {
    throw new InvalidArgumentError(`svd: a ${a.toString()} contains NaN or ±Infinity (max ${hi}, min ${lo})`);
  }
  return Math.max(Math.abs(hi), Math.abs(lo));
}

/** Exact SVD on the host: the matrix is small, so one-sided Jacobi in float64 is both exact and simple. */
function fullSvd(gpu: GpuCompute, a: Tensor, o: Resolved): SvdResult {
  const { m, n, rank: k } = o;
  const { u, s, v } = jacobiSvd(a.toArraySync() as Float32Array, m, n);
  const p = Math.min(m, n);
  const uk = new Float32Array(m * k);
  for (let i = 0; i < m; i++) for (let j = 0; j < k; j++) uk[i * k + j] = u[i * p + j]!;
  const vk = new Float32Array(k * n);
  for (let j = 0; j < k; j++) for (let i = 0; i < n; i++) vk[j * n + i] = v[i * p + j]!;
  return { u: gpu.tensor(uk, [m, k]), s: gpu.tensor(Float32Array.from(s.subarray(0, k)), [k]), v: gpu.tensor(vk, [k, n]) };
}

/** Columns of the sketch: q = rank + oversample, at most min(m, n). */
function sketchWidth(o: Resolved): number {
  return Math.min(o.rank + o.oversample, o.m, o.n);
}

/** alpha of every product with A: a power of two near 1/max|a|, clamped so alpha and 1/alpha stay normal f32 numbers. */
function productScale(maxAbs: number): number {
  const exponent = maxAbs > 0 ? Math.min(Math.max(Math.round(Math.log2(maxAbs)), -100), 100) : 0;
  return 2 ** -exponent;
}

/** How many CholeskyQR passes a basis gets. */
interface PassPolicy {
  /** Passes always made (2 for a final basis: CholeskyQR2). */
  min: number;
  /** Passes at most. */
  max: number;
  /** Also return R with X = Q·R (float64). */
  wantR: boolean;
}

const INTERMEDIATE: PassPolicy = { min: 1, max: 1, wantR: false };
const FINAL: PassPolicy = { min: 2, max: MAX_FINAL_PASSES, wantR: false };
const FINAL_WITH_R: PassPolicy = { ...FINAL, wantR: true };

/** One truncated SVD: the range finder, the core and the two output products. */
class RandomizedSvd {
  private readonly q: number;
  /** alpha of every product with A: a power of two near 1/max|a|. */
  private readonly alpha: number;
  private randomColumns = 0;

  constructor(
    private readonly gpu: GpuCompute,
    private readonly a: Tensor<'f32'>,
    private readonly o: Resolved,
    maxAbs: number,
  ) {
    this.q = sketchWidth(o);
    this.alpha = productScale(maxAbs);
  }

  run(): SvdResult {
    const { a, o } = this;
    let basis = this.sketch();
    try {
      for (let i = 0; i < o.powerIterations; i++) {
        const z = this.orthonormalize(this.product(a, basis, true), INTERMEDIATE).q;
        try {
          const next = this.orthonormalize(this.product(a, z, false), i === o.powerIterations - 1 ? FINAL : INTERMEDIATE).q;
          basis.dispose();
          basis = next;
        } finally {
          z.dispose();
        }
      }
      const { q: p, r } = this.orthonormalize(this.product(a, basis, true), FINAL_WITH_R);
      try {
        return this.outputs(basis, p, r!);
      } finally {
        p.dispose();
      }
    } finally {
      basis.dispose();
    }
  }

  /** U = Q·X, S = Σ, V = (P·Y)ᵀ from the core SVD of Rᵀ, where Aᵀ·Q = P·R. */
  private outputs(basis: Tensor<'f32'>, p: Tensor<'f32'>, r: Float64Array): SvdResult {
    const { gpu, q } = this;
    const k = this.o.rank;
    const core = coreSvd(r, q, k);
    const sigma = new Float32Array(k);
    for (let j = 0; j < k; j++) sigma[j] = core.sigma[j]! / this.alpha;
    const yTransposed = new Float32Array(k * q);
    for (let i = 0; i < q; i++) for (let j = 0; j < k; j++) yTransposed[j * q + i] = core.y[i * k + j]!;
    using x = gpu.tensor(Float32Array.from(core.x), [q, k]);
    using y = gpu.tensor(yTransposed, [k, q]);
    const u = gpu.matmul(basis, x, PRODUCT);
    try {
      const v = gpu.matmul(y, p, { ...PRODUCT, transB: true });
      return { u, s: gpu.tensor(sigma, [k]), v };
    } catch (err) {
      u.dispose();
      throw err;
    }
  }

  /** Q of the first sketch A·Ω. */
  private sketch(): Tensor<'f32'> {
    const { gpu, a, o, q } = this;
    using omega = gpu.randn([o.n, q], { seed: o.seed });
    return this.orthonormalize(this.product(a, omega, false), o.powerIterations === 0 ? FINAL : INTERMEDIATE).q;
  }

  /** alpha·A·x, or alpha·Aᵀ·x with `transpose`. */
  private product(a: Tensor<'f32'>, x: Tensor<'f32'>, transpose: boolean): Tensor<'f32'> {
    return this.gpu.matmul(a, x, { ...PRODUCT, transA: transpose, alpha: this.alpha });
  }

  /**
   * An orthonormal basis of x's columns by guarded CholeskyQR passes (see the file comment),
   * and with `policy.wantR` the R of x = Q·R. Takes ownership of x.
   */
  private orthonormalize(x: Tensor<'f32'>, policy: PassPolicy): { q: Tensor<'f32'>; r?: Float64Array } {
    const q = this.q;
    let current = x;
    let r: Float64Array | undefined;
    let dependent: number[] = [];
    try {
      for (let pass = 0; pass < policy.max; pass++) {
        const step = this.factor(current, dependent);
        dependent = step.dependentColumns;
        const t32 = Float32Array.from(step.t);
        const next = this.applyStep(current, t32, step);
        current.dispose();
        current = next;
        if (policy.wantR) {
          const applied = appliedR(step, t32, q);
          r = r === undefined ? applied : multiplyUpper(applied, r, q);
        }
        if (pass + 1 >= policy.min && step.minPivot >= WELL_CONDITIONED_PIVOT) break;
      }
      return r === undefined ? { q: current } : { q: current, r };
    } catch (err) {
      current.dispose();
      throw err;
    }
  }

  /** The host factor of one pass, from the Gram matrix computed on the device. */
  private factor(x: Tensor<'f32'>, previouslyDependent: readonly number[]): CholeskyStep {
    using gram = this.gpu.matmul(x, x, { ...PRODUCT, transA: true });
    try {
      return choleskyStep(gram.toArraySync(), this.q, previouslyDependent);
    } catch (err) {
      if (err instanceof RangeError) {
        throw new InvalidArgumentError(`svd: the products of a ${this.a.toString()} overflowed f32; scale a down`);
      }
      throw err;
    }
  }

  /** Q = X·T, plus a fresh random column (norm ≈ 1) at each replaced column. */
  private applyStep(x: Tensor<'f32'>, t32: Float32Array, step: CholeskyStep): Tensor<'f32'> {
    const { gpu, q } = this;
    using t = gpu.tensor(t32, [q, q]);
    if (step.replacedColumns.length === 0) return gpu.matmul(x, t, PRODUCT);
    const rows = x.shape[0]!;
    const mask = new Float32Array(q);
    for (const j of step.replacedColumns) mask[j] = 1;
    using maskRow = gpu.tensor(mask, [q]);
    using noise = gpu.randn([rows, q], { seed: this.nextRandomSeed(), std: 1 / Math.sqrt(rows) });
    using fill = gpu.mul(noise, maskRow);
    return gpu.matmul(x, t, { ...PRODUCT, c: fill });
  }

  /** Seeds of the random replacement columns: after the sketch's, deterministic for a seed. */
  private nextRandomSeed(): number {
    this.randomColumns++;
    return (this.o.seed + this.randomColumns) % Number.MAX_SAFE_INTEGER;
  }
}

/** How the device route orthonormalises its bases. */
type DeviceQr = 'cholesky' | 'householder';

/**
 * Pre-polish max|XᵀX − I| of U or V above which a CholeskyQR2 attempt counts as broken down.
 * Where it worked, the bases and gesvdj's f32 vectors together leave 1e-5 at q = 42 and
 * 4e-5–1.6e-4 at q = 138 (H200, random 4096×4096 and 8192×1024), which the polish takes to
 * O(δ²); a Gram matrix that potrf factored although it was numerically singular leaves O(1).
 * At 1e-3 the polished factors are still orthonormal to ~1e-6.
 */
const CHOLESKY_BREAKDOWN_DEVIATION = 1e-3;

/**
 * One truncated SVD with the dense steps on the device: the same range finder, every basis
 * orthonormalised on the device (CholeskyQR2, or Householder QR as the fallback), Bᵀ = Aᵀ·Q =
 * P·R with R = Pᵀ·Bᵀ from one small product (P spans Bᵀ, so R need not come out of the QR),
 * and the q×q core Rᵀ decomposed by the device SVD. The only synchronisation is the read-back
 * of every routine's status at the end.
 *
 * CholeskyQR2 (G = XᵀX, G = RᵀR by potrf, X ← X·R⁻¹ by trsm, twice) is optimistic: a
 * rank-deficient or too ill-conditioned basis makes potrf report a non-positive pivot, or
 * leaves U or V visibly non-orthonormal; `run` then returns undefined and the caller runs the
 * call again with Householder QR, which is orthonormal whatever the rank.
 */
class DeviceRandomizedSvd {
  private readonly q: number;
  private readonly alpha: number;
  private readonly steps: { name: string; cholesky: boolean }[] = [];
  private readonly infos: Tensor<'i32'>;

  constructor(
    private readonly gpu: GpuCompute,
    private readonly a: Tensor<'f32'>,
    private readonly o: Resolved,
    maxAbs: number,
    private readonly linalg: DenseLinalg,
    private readonly qr: DeviceQr,
    private readonly probe: SvdStageProbe | undefined,
  ) {
    this.q = sketchWidth(o);
    this.alpha = productScale(maxAbs);
    // Statuses: per orthonormalisation (the sketch, two per power iteration, Bᵀ) one for
    // Householder or two for CholeskyQR2's factors; then the core's SVD.
    const perBasis = qr === 'cholesky' ? 2 : 1;
    this.infos = gpu.zeros([perBasis * (2 * o.powerIterations + 2) + 1], 'i32');
  }

  /** The factors, or undefined when CholeskyQR2 broke down (only with `qr` 'cholesky'). */
  run(): SvdResult | undefined {
    const { gpu, o, q } = this;
    const k = o.rank;
    try {
      let basis: Tensor<'f32'>;
      {
        using omega = gpu.randn([o.n, q], { seed: o.seed });
        this.mark('random Ω');
        basis = this.orthonormalize(this.product(omega, false), 'the sketch');
      }
      try {
        for (let i = 0; i < o.powerIterations; i++) {
          using z = this.orthonormalize(this.product(basis, true), `power iteration ${i + 1} (Aᵀ·Q)`);
          const next = this.orthonormalize(this.product(z, false), `power iteration ${i + 1} (A·Z)`);
          basis.dispose();
          basis = next;
        }
        using bt = this.product(basis, true);
        using p = this.orthonormalize(gpu.copy(bt), 'Aᵀ·Q');
        using core = gpu.matmul(bt, p, { ...PRODUCT, transA: true });
        this.mark('core R = Pᵀ·Bᵀ');
        using left = gpu.empty([q, q]);
        using right = gpu.empty([q, q]);
        using sigma = gpu.empty([q]);
        this.linalg.svd(core.view, left.view, sigma.view, right.view, q, this.info(`the SVD of the ${q}×${q} core`, false));
        this.mark('core SVD');
        using leftK = this.leadingRows(left, k);
        using rightK = this.leadingRows(right, k);
        using sigmaK = this.leadingRows(sigma, k);
        return this.outputs(basis, p, leftK, rightK, sigmaK);
      } finally {
        basis.dispose();
      }
    } finally {
      this.infos.dispose();
    }
  }

  /**
   * U = Q·X and V = (P·Y)ᵀ polished, S = Σ/alpha; then the statuses (and with CholeskyQR2 the
   * orthonormality of U and V) are read and checked.
   */
  private outputs(basis: Tensor<'f32'>, p: Tensor<'f32'>, leftK: Tensor<'f32'>, rightK: Tensor<'f32'>, sigmaK: Tensor<'f32'>): SvdResult | undefined {
    const { gpu } = this;
    const k = this.o.rank;
    const deviations: Tensor<'f32'>[] | undefined = this.qr === 'cholesky' ? [] : undefined;
    const made: Tensor<'f32'>[] = [];
    let keep = false;
    const eye = new Float32Array(k * k);
    for (let i = 0; i < k; i++) eye[i * k + i] = 1;
    using identity = gpu.tensor(eye, [k, k]);
    try {
      const u = this.polish(gpu.matmul(basis, leftK, { ...PRODUCT, transB: true }), false, identity, deviations);
      made.push(u);
      const v = this.polish(gpu.matmul(rightK, p, { ...PRODUCT, transB: true }), true, identity, deviations);
      made.push(v);
      const s = gpu.mul(sigmaK, 1 / this.alpha);
      made.push(s);
      this.mark('outputs U, V (products, polish)');
      keep = this.checkStatus(deviations ?? []);
      this.mark('status read-back');
      return keep ? { u, s, v } : undefined;
    } finally {
      for (const d of deviations ?? []) d.dispose();
      if (!keep) for (const t of made) t.dispose();
    }
  }

  /**
   * One Newton–Schulz step towards orthonormal columns (rows with `byRows`): X ← X·(3I − XᵀX)/2.
   * The f32 bases, the f32 Jacobi vectors and the product of the two each leave ~1e-5 of
   * non-orthogonality δ at q ≈ 140; the step leaves O(δ²) plus rounding, for two k×k-sized
   * products. With `deviations`, also appends max|XᵀX − I| before the step there (a
   * one-element tensor left on the device): CholeskyQR2's breakdown check. Takes ownership of x.
   */
  private polish(x: Tensor<'f32'>, byRows: boolean, identity: Tensor<'f32'>, deviations: Tensor<'f32'>[] | undefined): Tensor<'f32'> {
    const { gpu } = this;
    try {
      using gram = gpu.matmul(x, x, byRows ? { ...PRODUCT, transB: true } : { ...PRODUCT, transA: true });
      if (deviations) {
        using difference = gpu.sub(gram, identity);
        using magnitude = gpu.abs(difference);
        deviations.push(gpu.max(magnitude));
      }
      using shifted = gpu.mul(identity, 1.5);
      using half = gpu.mul(gram, 0.5);
      using factor = gpu.sub(shifted, half);
      return byRows ? gpu.matmul(factor, x, PRODUCT) : gpu.matmul(x, factor, PRODUCT);
    } finally {
      x.dispose();
    }
  }

  /** alpha·A·x, or alpha·Aᵀ·x with `transpose`. */
  private product(x: Tensor<'f32'>, transpose: boolean): Tensor<'f32'> {
    const out = this.gpu.matmul(this.a, x, { ...PRODUCT, transA: transpose, alpha: this.alpha });
    this.mark(transpose ? 'products Aᵀ·X' : 'products A·X');
    return out;
  }

  /** An orthonormal basis of x's columns; takes ownership of x. */
  private orthonormalize(x: Tensor<'f32'>, step: string): Tensor<'f32'> {
    const out = this.qr === 'cholesky' ? this.choleskyQr2(x, step) : this.householderQr(x, step);
    this.mark(this.qr === 'cholesky' ? 'orthonormalise (CholeskyQR2)' : 'orthonormalise (Householder)');
    return out;
  }

  /** Two CholeskyQR passes in place on x (returned): G = XᵀX = RᵀR, X ← X·R⁻¹. */
  private choleskyQr2(x: Tensor<'f32'>, step: string): Tensor<'f32'> {
    const { gpu, q } = this;
    try {
      const rows = x.shape[0]!;
      for (const pass of [1, 2]) {
        using gram = gpu.matmul(x, x, { ...PRODUCT, transA: true });
        this.linalg.cholesky(gram.view, q, this.info(`CholeskyQR pass ${pass} of ${step}`, true));
        this.linalg.solveUpperRight(x.view, gram.view, rows, q);
      }
      return x;
    } catch (err) {
      x.dispose();
      throw err;
    }
  }

  /** Householder QR of x into a new tensor; takes ownership of x. */
  private householderQr(x: Tensor<'f32'>, step: string): Tensor<'f32'> {
    try {
      const rows = x.shape[0]!;
      const out = this.gpu.empty([rows, this.q]);
      try {
        this.linalg.orthonormalize(x.view, out.view, rows, this.q, this.info(`the QR of ${step}`, false));
        return out;
      } catch (err) {
        out.dispose();
        throw err;
      }
    } finally {
      x.dispose();
    }
  }

  /** The first `count` rows (elements, for a vector) of t, as a tensor of their own. */
  private leadingRows(t: Tensor<'f32'>, count: number): Tensor<'f32'> {
    const shape = t.rank === 1 ? [count] : [count, t.shape[1]!];
    const out = this.gpu.empty(shape);
    const size = shape.reduce((x, y) => x * y, 1);
    this.gpu.backend.copy(out.view, { ...t.view, shape, size });
    return out;
  }

  /** The status slot of the next device routine, named for the error message; `cholesky`: a potrf whose pivot failure means breakdown. */
  private info(name: string, cholesky: boolean) {
    const index = this.steps.length;
    this.steps.push({ name, cholesky });
    return { ...this.infos.view, shape: [1], offset: this.infos.view.offset + index, size: 1 };
  }

  /**
   * Reads every routine's status back (the call's one synchronisation). Returns false when
   * CholeskyQR2 broke down: a potrf pivot failure, or a `deviations` entry (max|XᵀX − I| of U
   * or V) above {@link CHOLESKY_BREAKDOWN_DEVIATION}. Throws on any other failure.
   */
  private checkStatus(deviations: readonly Tensor<'f32'>[]): boolean {
    const infos = this.infos.toArraySync();
    let breakdown: string | undefined;
    this.steps.forEach((step, i) => {
      const info = infos[i]!;
      if (info === 0) return;
      if (step.cholesky && info > 0) breakdown ??= `${step.name}: the leading ${info}×${info} Gram minor is not positive definite`;
      // After a breakdown the later routines ran on garbage: their statuses mean nothing.
      else if (breakdown === undefined) throw new DenseLinalgError(step.name, info, this.linalg.name);
    });
    for (const deviation of breakdown === undefined ? deviations : []) {
      const value = deviation.toArraySync()[0]!;
      this.probe?.orthonormality?.(value);
      if (!(value <= CHOLESKY_BREAKDOWN_DEVIATION)) breakdown ??= `U or V is off orthonormal by ${value.toExponential(2)}`;
    }
    if (breakdown !== undefined) this.probe?.fallback?.(breakdown);
    return breakdown === undefined;
  }

  /** Tells the probe (the benchmark's stage timer) that the work of `stage` has been queued. */
  private mark(stage: string): void {
    this.probe?.mark(stage);
  }
}
