/**
 * The device route of a truncated SVD (backends with device dense routines, cuSOLVER on CUDA,
 * for sketches wider than `HOST_ROUTE_MAX_WIDTH`): the same range finder with every basis
 * orthonormalised on the device (CholeskyQR2, Householder QR as the fallback) and the core
 * decomposed by the device SVD, nothing read back until the end. See `ops/svd.ts`.
 */
import { DenseLinalgError, type DenseLinalg } from '../backend/dense-linalg.js';
import { copy, full, tensor } from '../ops/creation.js';
import { binary, unary } from '../ops/elementwise.js';
import { matmul } from '../ops/matmul.js';
import { reduce } from '../ops/reduce.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { firstSketch, PRODUCT, productScale, sketchSpansColumns, sketchWidth, type SvdProblem, type SvdResult, type SvdStageProbe } from './svd-plan.js';

/** How the device route orthonormalises its bases. */
export type DeviceQr = 'cholesky' | 'householder';

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
export class DeviceRandomizedSvd {
  private readonly q: number;
  private readonly alpha: number;
  private readonly powerIterations: number;
  private readonly steps: { name: string; cholesky: boolean }[] = [];
  private readonly infos: Tensor<'i32'>;

  constructor(
    private readonly s: Session,
    private readonly a: Tensor<'f32'>,
    private readonly o: SvdProblem,
    maxAbs: number,
    private readonly linalg: DenseLinalg,
    private readonly qr: DeviceQr,
    private readonly probe: SvdStageProbe | undefined,
  ) {
    this.q = sketchWidth(o);
    this.alpha = productScale(maxAbs);
    this.powerIterations = sketchSpansColumns(o) ? 0 : o.powerIterations;
    // Statuses: per orthonormalisation (the sketch, two per power iteration, Bᵀ) one for
    // Householder or two for CholeskyQR2's factors; then the core's SVD.
    const perBasis = qr === 'cholesky' ? 2 : 1;
    this.infos = full<'i32'>(s, 'svd', [perBasis * (2 * this.powerIterations + 2) + 1], 0, 'i32');
  }

  /** The factors, or undefined when CholeskyQR2 broke down (only with `qr` 'cholesky'). */
  run(): SvdResult | undefined {
    const { s, o, q } = this;
    const k = o.rank;
    try {
      const sketch = firstSketch(s, this.a, o, this.alpha);
      this.mark('products A·X');
      let basis = this.orthonormalize(sketch, 'the sketch');
      try {
        for (let i = 0; i < this.powerIterations; i++) {
          using z = this.orthonormalize(this.product(basis, true), `power iteration ${i + 1} (Aᵀ·Q)`);
          const next = this.orthonormalize(this.product(z, false), `power iteration ${i + 1} (A·Z)`);
          basis.dispose();
          basis = next;
        }
        using bt = this.product(basis, true);
        using p = this.orthonormalize(copy(s, bt), 'Aᵀ·Q');
        using core = matmul(s, bt, p, { ...PRODUCT, transA: true });
        this.mark('core R = Pᵀ·Bᵀ');
        using left = s.empty<'f32'>('svd', [q, q], 'f32');
        using right = s.empty<'f32'>('svd', [q, q], 'f32');
        using sigma = s.empty<'f32'>('svd', [q], 'f32');
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
    const { s } = this;
    const k = this.o.rank;
    const made: Tensor<'f32'>[] = [];
    let keep = false;
    // CholeskyQR2's breakdown check measures U and V against the identity.
    let identity: Tensor<'f32'> | undefined;
    if (this.qr === 'cholesky') {
      const eye = new Float32Array(k * k);
      for (let i = 0; i < k; i++) eye[i * k + i] = 1;
      identity = tensor<'f32'>(s, eye, [k, k], 'f32');
    }
    const deviations: Tensor<'f32'>[] = [];
    try {
      const u = this.polish(matmul(s, basis, leftK, { ...PRODUCT, transB: true }), false, identity, deviations);
      made.push(u);
      const v = this.polish(matmul(s, rightK, p, { ...PRODUCT, transB: true }), true, identity, deviations);
      made.push(v);
      const scaled = binary(s, 'mul', sigmaK, 1 / this.alpha, 'svd');
      made.push(scaled);
      this.mark('outputs U, V (products, polish)');
      keep = this.checkStatus(deviations);
      this.mark('status read-back');
      return keep ? { u, s: scaled, v } : undefined;
    } finally {
      identity?.dispose();
      for (const d of deviations) d.dispose();
      if (!keep) for (const t of made) t.dispose();
    }
  }

  /**
   * One Newton–Schulz step towards orthonormal columns (rows with `byRows`): X ← X·(3I − XᵀX)/2,
   * computed as 1.5·X − 0.5·X·(XᵀX), one product with X as the added term. The f32 bases, the
   * f32 Jacobi vectors and the product of the two each leave ~1e-5 of non-orthogonality δ at
   * q ≈ 140; the step leaves O(δ²) plus rounding, for two k×k-sized products. With `identity`,
   * also appends max|XᵀX − I| before the step to `deviations` (a one-element tensor left on the
   * device): CholeskyQR2's breakdown check. Takes ownership of x.
   */
  private polish(x: Tensor<'f32'>, byRows: boolean, identity: Tensor<'f32'> | undefined, deviations: Tensor<'f32'>[]): Tensor<'f32'> {
    const { s } = this;
    try {
      using gram = matmul(s, x, x, byRows ? { ...PRODUCT, transB: true } : { ...PRODUCT, transA: true });
      if (identity) {
        using difference = binary(s, 'sub', gram, identity, 'svd');
        using magnitude = unary(s, 'abs', difference);
        deviations.push(reduce(s, 'max', magnitude, undefined));
      }
      const step = { ...PRODUCT, alpha: -0.5, c: x, beta: 1.5 };
      return byRows ? matmul(s, gram, x, step) : matmul(s, x, gram, step);
    } finally {
      x.dispose();
    }
  }

  /** alpha·A·x, or alpha·Aᵀ·x with `transpose`. */
  private product(x: Tensor<'f32'>, transpose: boolean): Tensor<'f32'> {
    const out = matmul(this.s, this.a, x, { ...PRODUCT, transA: transpose, alpha: this.alpha });
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
    const { s, q } = this;
    try {
      const rows = x.shape[0]!;
      for (const pass of [1, 2]) {
        using gram = matmul(s, x, x, { ...PRODUCT, transA: true });
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
      const out = this.s.empty<'f32'>('svd', [rows, this.q], 'f32');
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
    const out = this.s.empty<'f32'>('svd', shape, 'f32');
    const size = shape.reduce((x, y) => x * y, 1);
    this.s.backend.copy(out.view, { ...t.view, shape, size });
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
