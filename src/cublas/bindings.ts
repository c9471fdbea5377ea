import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openCublas } from './library.js';

/**
 * The cuBLAS (API v2) entry points this library calls, bound on first use. Handles and
 * device pointers are `void*` (BigInt in koffi); scalars alpha/beta are host pointers
 * (the default CUBLAS_POINTER_MODE_HOST), passed as typed arrays.
 */
export const cublas = lazyFunctions(openCublas, {
  cublasCreate: 'int cublasCreate_v2(_Out_ void **handle)',
  cublasDestroy: 'int cublasDestroy_v2(void *handle)',
  cublasGetVersion: 'int cublasGetVersion_v2(void *handle, _Out_ int *version)',
  cublasSetStream: 'int cublasSetStream_v2(void *handle, void *stream)',
  cublasSetMathMode: 'int cublasSetMathMode(void *handle, int mode)',
  cublasGetStatusName: 'const char *cublasGetStatusName(int status)',
  cublasGetStatusString: 'const char *cublasGetStatusString(int status)',
  cublasGemmEx:
    'int cublasGemmEx(void *handle, int transa, int transb, int m, int n, int k, const void *alpha, ' +
    'const void *A, int Atype, int lda, const void *B, int Btype, int ldb, const void *beta, ' +
    'void *C, int Ctype, int ldc, int computeType, int algo)',
  cublasGemmStridedBatchedEx:
    'int cublasGemmStridedBatchedEx(void *handle, int transa, int transb, int m, int n, int k, const void *alpha, ' +
    'const void *A, int Atype, int lda, int64_t strideA, const void *B, int Btype, int ldb, int64_t strideB, ' +
    'const void *beta, void *C, int Ctype, int ldc, int64_t strideC, int batchCount, int computeType, int algo)',
  cublasStrsm:
    'int cublasStrsm_v2(void *handle, int side, int uplo, int trans, int diag, int m, int n, const float *alpha, ' +
    'const void *A, int lda, void *B, int ldb)',
});

/** cublasStatus_t values (cublas_api.h). */
export const CublasStatus = {
  SUCCESS: 0,
  NOT_INITIALIZED: 1,
  ALLOC_FAILED: 3,
  INVALID_VALUE: 7,
  ARCH_MISMATCH: 8,
  MAPPING_ERROR: 11,
  EXECUTION_FAILED: 13,
  INTERNAL_ERROR: 14,
  NOT_SUPPORTED: 15,
  LICENSE_ERROR: 16,
} as const;

/** cublasOperation_t. */
export const CublasOperation = { N: 0, T: 1 } as const;

/** cudaDataType values of the element types this library uses (library_types.h). */
export const CudaDataType = { R_32F: 0, R_16F: 2, R_16BF: 14 } as const;

/** cublasComputeType_t values used here. */
export const CublasComputeType = {
  /** Full f32 arithmetic: no TF32, whatever the math mode. */
  COMPUTE_32F: 68,
  /** f32 data through TF32 tensor cores. */
  COMPUTE_32F_FAST_TF32: 77,
} as const;

/** cublasSideMode_t. */
export const CublasSideMode = { LEFT: 0, RIGHT: 1 } as const;

/** cublasFillMode_t. */
export const CublasFillMode = { LOWER: 0, UPPER: 1 } as const;

/** cublasDiagType_t. */
export const CublasDiagType = { NON_UNIT: 0, UNIT: 1 } as const;

/** cublasMath_t. */
export const CublasMath = { DEFAULT: 0, PEDANTIC: 2, TF32_TENSOR_OP: 3 } as const;

/** cublasGemmAlgo_t: let cuBLAS choose (its heuristics pick tensor cores where allowed). */
export const CUBLAS_GEMM_DEFAULT = -1;
