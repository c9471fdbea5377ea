import type { Context } from '../driver/context.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import { cusolver, CusolverEigMode, CusolverFillMode } from './bindings.js';
import { checkCusolver } from './cusolver-error.js';
import { openCusolver } from './library.js';

/** Device memory a routine borrows for one call (the caller releases it after queueing). */
export type Workspace = (bytes: number) => bigint;

/** Jacobi sweeps allowed before gesvdj reports non-convergence (typical inputs need well under 20). */
const GESVDJ_MAX_SWEEPS = 100;
const INT32_MAX = 2 ** 31 - 1;

/**
 * A dense cuSOLVER handle bound to one CUDA context (created with it current), plus the
 * gesvdj parameter object (tolerance: f32 machine precision). Every routine is queued on the
 * stream it is given and writes its devInfo (an int in device memory) without being read back.
 * All matrices are column-major. `dispose()` (or `using`) destroys it; it must go before its context.
 */
export class CusolverHandle implements Disposable {
  readonly context: Context;
  /** cuSOLVER version, e.g. 12000 for 12.0.0. */
  readonly version: number;
  #handle: bigint;
  #gesvdjParams: bigint;
  #stream: bigint | undefined;
  /** Workspace sizes (in elements) by routine and shape: each query costs a call. */
  readonly #lworks = new Map<string, number>();

  constructor(context: Context) {
    this.context = context;
    // Load (or fail) through the library cache even when the symbols were bound before: a handle
    // never outlives the library it was made with, and GPUCOMPUTE_LIBCUSOLVER is honoured.
    openCusolver();
    context.makeCurrent();
    const version = new Int32Array(1);
    checkCusolver('cusolverGetVersion', cusolver.cusolverGetVersion(version));
    this.version = version[0]!;
    const out = new BigUint64Array(1);
    checkCusolver('cusolverDnCreate', cusolver.cusolverDnCreate(out));
    this.#handle = out[0]!;
    try {
      checkCusolver('cusolverDnCreateGesvdjInfo', cusolver.cusolverDnCreateGesvdjInfo(out));
      this.#gesvdjParams = out[0]!;
      checkCusolver('cusolverDnXgesvdjSetTolerance', cusolver.cusolverDnXgesvdjSetTolerance(this.#gesvdjParams, 2 ** -24));
      checkCusolver('cusolverDnXgesvdjSetMaxSweeps', cusolver.cusolverDnXgesvdjSetMaxSweeps(this.#gesvdjParams, GESVDJ_MAX_SWEEPS));
    } catch (err) {
      cusolver.cusolverDnDestroy(this.#handle);
      throw err;
    }
  }

  /** True after {@link dispose}. */
  get disposed(): boolean {
    return this.#handle === 0n;
  }

  /**
   * Overwrites the column-major m×n matrix `a` (lda = m, m ≥ n) with the first n columns of Q
   * of its Householder QR: orthonormal columns spanning a's columns, whatever a's rank.
   * `tau` holds n floats; `info` receives geqrf's devInfo, then orgqr's (0 on success).
   */
  householderQ(stream: bigint, m: number, n: number, a: bigint, tau: bigint, info: bigint, workspace: Workspace): void {
    const handle = this.#ready(stream, m, n);
    if (m < n) throw new InvalidArgumentError(`cuSOLVER householderQ: needs m ≥ n, got ${m}×${n}`);
    const lwork = Math.max(
      this.#lwork(`geqrf|${m}|${n}`, (out) => cusolver.cusolverDnSgeqrf_bufferSize(handle, m, n, a, m, out), 'cusolverDnSgeqrf_bufferSize'),
      this.#lwork(`orgqr|${m}|${n}`, (out) => cusolver.cusolverDnSorgqr_bufferSize(handle, m, n, n, a, m, tau, out), 'cusolverDnSorgqr_bufferSize'),
      1,
    );
    const work = workspace(lwork * 4);
    checkCusolver('cusolverDnSgeqrf', cusolver.cusolverDnSgeqrf(handle, m, n, a, m, tau, work, lwork, info));
    checkCusolver('cusolverDnSorgqr', cusolver.cusolverDnSorgqr(handle, m, n, n, a, m, tau, work, lwork, info));
  }

  /**
   * Cholesky factorisation in place of the symmetric positive definite column-major n×n `a`:
   * a = L·Lᵀ with L written over a's lower triangle (the strict upper one is neither read nor
   * written). `info` receives potrf's devInfo: 0 on success, j > 0 when the leading j×j minor
   * is not positive definite (the factor is then incomplete).
   */
  cholesky(stream: bigint, n: number, a: bigint, info: bigint, workspace: Workspace): void {
    const handle = this.#ready(stream, n, n);
    const lower = CusolverFillMode.LOWER;
    const lwork = Math.max(
      this.#lwork(`potrf|${n}`, (out) => cusolver.cusolverDnSpotrf_bufferSize(handle, lower, n, a, n, out), 'cusolverDnSpotrf_bufferSize'),
      1,
    );
    const work = workspace(lwork * 4);
    checkCusolver('cusolverDnSpotrf', cusolver.cusolverDnSpotrf(handle, lower, n, a, n, work, lwork, info));
  }

  /**
   * Eigen-decomposition of the symmetric column-major n×n `a` (lower triangle read) by divide
   * and conquer: eigenvalues ascending into `w` (n floats), the eigenvectors over a's columns.
   * `info` receives syevd's devInfo (0 on success, > 0 when it did not converge).
   */
  symmetricEigen(stream: bigint, n: number, a: bigint, w: bigint, info: bigint, workspace: Workspace): void {
    const handle = this.#ready(stream, n, n);
    const mode = CusolverEigMode.VECTOR;
    const lower = CusolverFillMode.LOWER;
    const lwork = Math.max(
      this.#lwork(`syevd|${n}`, (out) => cusolver.cusolverDnSsyevd_bufferSize(handle, mode, lower, n, a, n, w, out), 'cusolverDnSsyevd_bufferSize'),
      1,
    );
    const work = workspace(lwork * 4);
    checkCusolver('cusolverDnSsyevd', cusolver.cusolverDnSsyevd(handle, mode, lower, n, a, n, w, work, lwork, info));
  }

  /**
   * Jacobi SVD of the column-major n×n matrix `a` (destroyed): a = U·diag(s)·Vᵀ with U and V
   * column-major n×n, s descending. `info` receives gesvdj's devInfo: 0 on success, n + 1
   * when it did not converge within the sweeps allowed.
   */
  jacobiSvd(stream: bigint, n: number, a: bigint, s: bigint, u: bigint, v: bigint, info: bigint, workspace: Workspace): void {
    const handle = this.#ready(stream, n, n);
    const params = this.#gesvdjParams;
    const mode = CusolverEigMode.VECTOR;
    const lwork = Math.max(
      this.#lwork(
        `gesvdj|${n}`,
        (out) => cusolver.cusolverDnSgesvdj_bufferSize(handle, mode, 0, n, n, a, n, s, u, n, v, n, out, params),
        'cusolverDnSgesvdj_bufferSize',
      ),
      1,
    );
    const work = workspace(lwork * 4);
    checkCusolver('cusolverDnSgesvdj', cusolver.cusolverDnSgesvdj(handle, mode, 0, n, n, a, n, s, u, n, v, n, work, lwork, info, params));
  }

  /** Destroys the handle (idempotent). Its context must still be alive. */
  dispose(): void {
    if (this.#handle === 0n) return;
    const handle = this.#handle;
    const params = this.#gesvdjParams;
    this.#handle = 0n;
    if (this.context.disposed || this.context.unusable) return; // the context took the handle's resources with it
    this.context.makeCurrent();
    checkCusolver('cusolverDnDestroyGesvdjInfo', cusolver.cusolverDnDestroyGesvdjInfo(params));
    checkCusolver('cusolverDnDestroy', cusolver.cusolverDnDestroy(handle));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** The live handle, on `stream`, with the context current and the extents checked. */
  #ready(stream: bigint, m: number, n: number): bigint {
    if (this.#handle === 0n) throw new DisposedError('CusolverHandle');
    for (const v of [m, n]) {
      if (!Number.isInteger(v) || v < 1 || v > INT32_MAX) throw new InvalidArgumentError(`cuSOLVER: ${v} is not a positive int32 extent`);
    }
    if (m * n > INT32_MAX) throw new InvalidArgumentError(`cuSOLVER: a ${m}×${n} matrix exceeds the 32-bit API`);
    this.context.makeCurrent();
    if (stream !== this.#stream) {
      checkCusolver('cusolverDnSetStream', cusolver.cusolverDnSetStream(this.#handle, stream));
      this.#stream = stream;
    }
    return this.#handle;
  }

  #lwork(key: string, query: (out: Int32Array) => number, call: string): number {
    const known = this.#lworks.get(key);
    if (known !== undefined) return known;
    const out = new Int32Array(1);
    checkCusolver(call, query(out));
    this.#lworks.set(key, out[0]!);
    return out[0]!;
  }
}
