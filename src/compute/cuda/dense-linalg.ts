/**
 * The CUDA backend's {@link DenseLinalg}: cuSOLVER (and cuBLAS for the triangular solve), on
 * the backend's current stream, and one-block kernels of ours for the QR of small panels and the
 * SVD of small cores (`small-dense.ts`), with one handle of each per backend created on first use.
 * Without either library the backend offers none (logged once at debug level) and `gpu.svd`
 * takes its host path.
 *
 * Layout: cuSOLVER is column-major and a row-major r×c view is the column-major c×r matrix of
 * its transpose.
 * - orthonormalize: geqrf/orgqr want the tall matrix itself, so x is transposed into a pool
 *   buffer (row-major c×r, i.e. column-major r×c with lda = r), factored in place, and Q
 *   transposed back into out: two transposes of an r×c panel, small next to the QR.
 * - svd: no copy. The row-major a is the column-major M = aᵀ; gesvdj gives M = U·Σ·Vᵀ, so
 *   a = V·Σ·Uᵀ: a's left singular vectors are V's columns, which column-major storage keeps
 *   contiguous, i.e. the rows of the row-major buffer handed over as V; likewise U's columns
 *   are a's right singular vectors.
 * - cholesky: a symmetric row-major g is the same column-major matrix; potrf's lower factor L
 *   (column-major) is stored as the row-major upper triangle R = Lᵀ, so g = Rᵀ·R.
 * - solveUpperRight: the row-major x (rows×cols) is the column-major M = xᵀ (cols×rows), and
 *   x·R⁻¹ = (R⁻ᵀ·M)ᵀ = (L⁻¹·M)ᵀ: one left, lower, non-transposed trsm on M in place.
 */
import { CublasHandle } from '../../cublas/handle.js';
import { CusolverHandle } from '../../cusolver/handle.js';
import type { DenseLinalg } from '../backend/dense-linalg.js';
import type { TensorView } from '../core/view.js';
import type { OpStateKey } from '../backend/op-states.js';
import type { CudaContext } from './cuda-context.js';
import { smallDenseLimits, smallQr, smallRandomizedSvd, smallRandomizedSvdFits, smallSvd, type SmallDenseLimits } from './small-dense.js';

/** The backend's dense linear algebra, created on first use; none when cuSOLVER or cuBLAS cannot be loaded. */
const DENSE_LINALG: OpStateKey<{ linalg: CudaDenseLinalg | undefined; dispose(): void }, CudaContext> = {
  name: 'cuSOLVER handle',
  create: (backend) => {
    let linalg: CudaDenseLinalg | undefined;
    try {
      const solver = new CusolverHandle(backend.context);
      try {
        linalg = new CudaDenseLinalg(backend, solver, new CublasHandle(backend.context));
      } catch (err) {
        solver.dispose();
        throw err;
      }
      backend.logger?.debug(`svd: dense steps on the device (${linalg.name})`);
    } catch (err) {
      backend.logger?.debug(`svd: cuSOLVER unavailable, dense steps on the host: ${err instanceof Error ? err.message : String(err)}`);
    }
    return { linalg, dispose: () => linalg?.dispose() };
  },
};

/** The backend's cuSOLVER-backed dense linear algebra, or undefined when cuSOLVER cannot be loaded. */
export function cudaDenseLinalg(backend: CudaContext): DenseLinalg | undefined {
  return backend.states.get(DENSE_LINALG).linalg;
}


class CudaDenseLinalg implements DenseLinalg {
  readonly name: string;
  readonly small: SmallDenseLimits;
  readonly truncatedSvd: NonNullable<DenseLinalg['truncatedSvd']>;

  constructor(
    private readonly backend: CudaContext,
    readonly handle: CusolverHandle,
    readonly blas: CublasHandle,
  ) {
    this.name = `cuSOLVER ${handle.version}`;
    this.small = smallDenseLimits(backend.device.sharedMemoryPerBlockOptin);
    const optin = backend.device.sharedMemoryPerBlockOptin;
    this.truncatedSvd = {
      fits: (m, n, q) => smallRandomizedSvdFits(m, n, q, optin),
      run: (views, problem) => smallRandomizedSvd(backend, views, problem),
    };
  }

  /** Destroys both handles (they belong to the backend's context). */
  dispose(): void {
    this.handle.dispose();
    this.blas.dispose();
  }

  orthonormalize(x: TensorView, out: TensorView, rows: number, cols: number, info: TensorView): void {
    const { backend } = this;
    const size = rows * cols;
    if (rows * (cols | 1) <= this.small.qrElements && cols <= this.small.qrColumns) {
      smallQr(backend, x, out, rows, cols); // it cannot fail: info stays 0
      return;
    }
    const buffer = backend.alloc(size * 4);
    const panel: TensorView = { buffer, dtype: 'f32', shape: [cols, rows], offset: 0, size };
    const scratch: { release(): void }[] = [];
    try {
      backend.transpose(x, panel, 1, rows, cols);
      const stream = backend.enqueue(panel, info);
      const tau = backend.scratch(cols * 4);
      scratch.push(tau);
      this.handle.householderQ(stream.handle, rows, cols, backend.address(panel), tau.address, backend.address(info), (bytes) => {
        const work = backend.scratch(bytes);
        scratch.push(work);
        return work.address;
      });
      backend.transpose(panel, out, 1, cols, rows);
    } finally {
      // Stream-ordered pool: later work on this stream may reuse the memory once queued here.
      for (const s of scratch) s.release();
      backend.free(buffer);
    }
  }

  cholesky(g: TensorView, n: number, info: TensorView): void {
    const { backend } = this;
    const stream = backend.enqueue(g, info);
    let work: { release(): void } | undefined;
    try {
      this.handle.cholesky(stream.handle, n, backend.address(g), backend.address(info), (bytes) => {
        const w = backend.scratch(bytes);
        work = w;
        return w.address;
      });
    } finally {
      work?.release();
    }
  }

  solveUpperRight(x: TensorView, r: TensorView, rows: number, cols: number): void {
    const { backend } = this;
    const stream = backend.enqueue(x, r);
    this.blas.triangularSolve({
      left: true,
      lower: true,
      transA: false,
      m: cols,
      n: rows,
      alpha: 1,
      a: backend.address(r),
      lda: cols,
      b: backend.address(x),
      ldb: cols,
      stream: stream.handle,
    });
  }

  svd(a: TensorView, left: TensorView, s: TensorView, right: TensorView, n: number, info: TensorView): void {
    const { backend } = this;
    if (n <= this.small.svdOrder) {
      smallSvd(backend, a, left, s, right, n, info);
      return;
    }
    const stream = backend.enqueue(a, left, s, right, info);
    let work: { release(): void } | undefined;
    try {
      this.handle.jacobiSvd(
        stream.handle,
        n,
        backend.address(a),
        backend.address(s),
        backend.address(right),
        backend.address(left),
        backend.address(info),
        (bytes) => {
          const w = backend.scratch(bytes);
          work = w;
          return w.address;
        },
      );
    } finally {
      work?.release();
    }
  }
}
