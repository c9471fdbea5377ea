import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openCusolver } from './library.js';

/**
 * The dense cuSOLVER entry points this library calls, bound on first use: a handle, Householder
 * QR (geqrf, then orgqr to form Q), the Cholesky factorisation (potrf), the Jacobi SVD (gesvdj)
 * and the divide-and-conquer symmetric eigensolver (syevd). Handles, parameter objects and
 * device pointers are `void*` (BigInt in koffi); workspace sizes come back through host ints.
 * Every matrix is column-major.
 */
export const cusolver = lazyFunctions(openCusolver, {
  cusolverDnCreate: 'int cusolverDnCreate(_Out_ void **handle)',
  cusolverDnDestroy: 'int cusolverDnDestroy(void *handle)',
  cusolverDnSetStream: 'int cusolverDnSetStream(void *handle, void *stream)',
  cusolverGetVersion: 'int cusolverGetVersion(_Out_ int *version)',
  cusolverDnSgeqrf_bufferSize: 'int cusolverDnSgeqrf_bufferSize(void *handle, int m, int n, void *A, int lda, _Out_ int *lwork)',
  cusolverDnSgeqrf: 'int cusolverDnSgeqrf(void *handle, int m, int n, void *A, int lda, void *tau, void *work, int lwork, void *devInfo)',
  cusolverDnSorgqr_bufferSize:
    'int cusolverDnSorgqr_bufferSize(void *handle, int m, int n, int k, void *A, int lda, void *tau, _Out_ int *lwork)',
  cusolverDnSorgqr: 'int cusolverDnSorgqr(void *handle, int m, int n, int k, void *A, int lda, void *tau, void *work, int lwork, void *devInfo)',
  cusolverDnSpotrf_bufferSize: 'int cusolverDnSpotrf_bufferSize(void *handle, int uplo, int n, void *A, int lda, _Out_ int *lwork)',
  cusolverDnSpotrf: 'int cusolverDnSpotrf(void *handle, int uplo, int n, void *A, int lda, void *work, int lwork, void *devInfo)',
  cusolverDnSsyevd_bufferSize:
    'int cusolverDnSsyevd_bufferSize(void *handle, int jobz, int uplo, int n, void *A, int lda, void *W, _Out_ int *lwork)',
  cusolverDnSsyevd: 'int cusolverDnSsyevd(void *handle, int jobz, int uplo, int n, void *A, int lda, void *W, void *work, int lwork, void *devInfo)',
  cusolverDnCreateGesvdjInfo: 'int cusolverDnCreateGesvdjInfo(_Out_ void **info)',
  cusolverDnDestroyGesvdjInfo: 'int cusolverDnDestroyGesvdjInfo(void *info)',
  cusolverDnXgesvdjSetTolerance: 'int cusolverDnXgesvdjSetTolerance(void *info, double tolerance)',
  cusolverDnXgesvdjSetMaxSweeps: 'int cusolverDnXgesvdjSetMaxSweeps(void *info, int maxSweeps)',
  cusolverDnSgesvdj_bufferSize:
    'int cusolverDnSgesvdj_bufferSize(void *handle, int jobz, int econ, int m, int n, void *A, int lda, void *S, ' +
    'void *U, int ldu, void *V, int ldv, _Out_ int *lwork, void *params)',
  cusolverDnSgesvdj:
    'int cusolverDnSgesvdj(void *handle, int jobz, int econ, int m, int n, void *A, int lda, void *S, ' +
    'void *U, int ldu, void *V, int ldv, void *work, int lwork, void *devInfo, void *params)',
});

/** cusolverStatus_t values (cusolver_common.h). */
export const CusolverStatus = {
  SUCCESS: 0,
  NOT_INITIALIZED: 1,
  ALLOC_FAILED: 2,
  INVALID_VALUE: 3,
  ARCH_MISMATCH: 4,
  MAPPING_ERROR: 5,
  EXECUTION_FAILED: 6,
  INTERNAL_ERROR: 7,
  MATRIX_TYPE_NOT_SUPPORTED: 8,
  NOT_SUPPORTED: 9,
  ZERO_PIVOT: 10,
  INVALID_LICENSE: 11,
} as const;

/** cublasFillMode_t, which cuSOLVER takes for `uplo`. */
export const CusolverFillMode = { LOWER: 0, UPPER: 1 } as const;

/** cusolverEigMode_t. */
export const CusolverEigMode = { NO_VECTOR: 0, VECTOR: 1 } as const;
