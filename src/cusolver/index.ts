/**
 * cuSOLVER (dense) through koffi: library discovery, the bound entry points, errors, and a
 * per-context handle running Householder QR, Cholesky, the Jacobi SVD and the symmetric
 * eigensolver on column-major f32 matrices.
 * The CUDA backend's dense steps of `gpu.svd` run on it (`compute/cuda/dense-linalg.ts`).
 */
export { cusolverSpec, openCusolver } from './library.js';
export { cusolver, CusolverStatus, CusolverEigMode, CusolverFillMode } from './bindings.js';
export { CusolverError, checkCusolver } from './cusolver-error.js';
export { CusolverHandle, type Workspace } from './handle.js';
