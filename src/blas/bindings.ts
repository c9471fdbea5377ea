import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openBlas } from './library.js';

/**
 * The CBLAS entry points the CPU backend's products use, bound on first use. Matrices are
 * `float *`: pass a Float32Array (a view at any byte offset, into an ArrayBuffer,
 * SharedArrayBuffer or shared WebAssembly memory), whose data koffi hands over in place, without
 * a copy, for the duration of the call. Integers are 32-bit (LP64 builds; ILP64 ones are refused
 * at load). The calls return nothing: a bad argument makes the library print through its xerbla
 * (or worse), so check arguments first, as `Blas` does.
 */
export const cblas = lazyFunctions(openBlas, {
  cblas_sgemm:
    'void cblas_sgemm(int order, int transA, int transB, int m, int n, int k, float alpha, ' +
    'const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)',
  cblas_sgemv:
    'void cblas_sgemv(int order, int trans, int m, int n, float alpha, const float *a, int lda, ' +
    'const float *x, int incx, float beta, float *y, int incy)',
});

/** CBLAS_ORDER (cblas.h). */
export const CblasOrder = { ROW_MAJOR: 101, COL_MAJOR: 102 } as const;

/** CBLAS_TRANSPOSE (cblas.h). */
export const CblasTranspose = { NO_TRANS: 111, TRANS: 112 } as const;
