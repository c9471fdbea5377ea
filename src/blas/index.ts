/**
 * The CPU BLAS through koffi: discovery (OpenBLAS, MKL, BLIS, Accelerate, other CBLAS), the
 * bound CBLAS entry points (raw tier), the checked `Blas` object with its vendor, version and
 * thread count (safe tier), and a probe for `gpucompute info`. The CPU backend's products run here.
 */
export { blasRefusal, blasSpec, openBlas } from './library.js';
export { cblas, CblasOrder, CblasTranspose } from './bindings.js';
export type { BlasVendor, BlasIdentity } from './vendor.js';
export { CPU_THREADS_ENV } from './threads.js';
export type { SgemmArgs } from './sgemm.js';
export { Blas, type BlasOptions } from './blas.js';
export { probeBlas, type BlasProbe } from './probe.js';
