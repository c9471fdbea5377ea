/**
 * cuBLAS through koffi: library discovery, the bound entry points, errors, and a
 * per-context handle that runs row-major (batched) products. It is the matmul
 * benchmark's baseline and the `engine: 'cublas'` path of GpuCompute's matmul.
 */
export { cublasSpec, openCublas } from './library.js';
export { cublas, CublasStatus, CublasOperation, CudaDataType, CublasComputeType, CublasMath, CUBLAS_GEMM_DEFAULT } from './bindings.js';
export { CublasError, checkCublas } from './cublas-error.js';
export { CublasHandle, type CublasDType, type RowMajorGemm } from './handle.js';
