/**
 * Dense factorizations a backend may run on the device for the small and tall matrices of
 * `gpu.svd` (cuSOLVER on CUDA). A backend without them (the CPU, or CUDA without cuSOLVER)
 * returns none from `Backend.denseLinalg`, and the SVD then takes its host path: CholeskyQR
 * with the factor computed on the host and the core decomposed on the host, in float64.
 *
 * Every matrix here is a dense row-major f32 view, as everywhere in the library; how a
 * backend maps that onto a column-major library is its own business. Failures a routine can
 * only report on the device (cuSOLVER's devInfo) land in `info`, an i32 view of one element
 * (0 on success), so the caller reads all of them back with one synchronisation at the end.
 */
import { GpuError } from '../../errors.js';
import type { TensorView } from '../core/view.js';

/** Device dense linear algebra (see the file comment). */
export interface DenseLinalg {
  /** What runs it, for logs and benchmarks, e.g. "cuSOLVER 12000". */
  readonly name: string;
  /**
   * Sizes factored by one launch each, without a library call or workspace: `orthonormalize` of
   * panels with rows·(cols | 1) ≤ `qrElements` (cols made odd: the row stride the kernel keeps)
   * and cols ≤ `qrColumns`, `svd` up to n = `svdOrder`.
   * There a truncated SVD of a narrow sketch runs on the device faster than on the host.
   */
  readonly small?: { readonly qrElements: number; readonly qrColumns: number; readonly svdOrder: number };
  /**
   * `out` (rows×cols, rows ≥ cols) ← an orthonormal basis of the columns of `x` (rows×cols,
   * left unchanged), by Householder QR: orthonormal whatever x's rank, each column j in the
   * span of x's columns 0..j when they are independent.
   */
  orthonormalize(x: TensorView, out: TensorView, rows: number, cols: number, info: TensorView): void;
  /**
   * Cholesky factorisation in place of the symmetric positive definite n×n `g`: its upper
   * triangle becomes R with g = Rᵀ·R (the strict lower triangle is left as it was). `info`
   * gets j > 0 when the leading j×j minor is not positive definite (R is then incomplete).
   */
  cholesky(g: TensorView, n: number, info: TensorView): void;
  /** x (rows×cols) ← x·R⁻¹ in place, for R the cols×cols upper triangle of `r` (its strict lower triangle is not read). */
  solveUpperRight(x: TensorView, r: TensorView, rows: number, cols: number): void;
  /**
   * The SVD of the n×n matrix `a` (destroyed): a = leftᵀ·diag(s)·right, with s (n) descending
   * and the singular vectors stored as rows, so the leading k of them are a contiguous prefix:
   * row j of `left` (n×n) is the j-th left singular vector and row j of `right` the j-th right one.
   */
  svd(a: TensorView, left: TensorView, s: TensorView, right: TensorView, n: number, info: TensorView): void;
  /**
   * The whole truncated SVD of a small matrix in one device call, where `fits` says so: the
   * algorithm of `gpu.svd` (ops/svd.ts) from the Gaussian test matrix (drawn by the call: the
   * values `gpu.randn([n, q], { seed })` holds) to the polished factors, with its finiteness
   * check folded in. `status` (3 f32 elements) ← [max a, min a, 1 if the
   * core's SVD did not converge, 2 if it stopped at a CholeskyQR2 breakdown (see
   * {@link TruncatedSvdShape.householderFallback}), else 0]; max or min non-finite means nothing
   * else was written.
   */
  readonly truncatedSvd?: {
    fits(m: number, n: number, q: number): boolean;
    run(views: TruncatedSvdViews, problem: TruncatedSvdShape): void;
  };
}

/** The tensors of {@link DenseLinalg.truncatedSvd}: a (m×n), u (m×k), s (k), v (k×n), status (3). */
export interface TruncatedSvdViews {
  readonly a: TensorView;
  readonly u: TensorView;
  readonly s: TensorView;
  readonly v: TensorView;
  readonly status: TensorView;
}

/** The extents of {@link DenseLinalg.truncatedSvd}: q sketch columns, k = rank ≤ q. */
export interface TruncatedSvdShape {
  readonly m: number;
  readonly n: number;
  readonly q: number;
  readonly rank: number;
  readonly powerIterations: number;
  /** The Philox key of the n×q Gaussian test matrix Ω (as `gpu.randn`'s `seed`). */
  readonly seed: number;
  /**
   * Every orthonormalisation falls back to Householder QR where CholeskyQR2 breaks down. Without
   * it an implementation may instead stop there with status[2] = 2, nothing else written, and
   * the caller asks again with it.
   */
  readonly householderFallback?: boolean;
}

/** A device factorization reported a failure through its devInfo (read back once, after the whole call). */
export class DenseLinalgError extends GpuError {
  /** Which step failed, e.g. "svd of the 138×138 core". */
  readonly step: string;
  /** The devInfo it wrote. */
  readonly info: number;

  constructor(step: string, info: number, linalg: string) {
    super('DENSE_LINALG_FAILED', `${step} failed on ${linalg}: devInfo ${info}${info > 0 ? ' (did not converge)' : ' (invalid argument)'}`);
    this.step = step;
    this.info = info;
  }
}
