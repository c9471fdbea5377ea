/**
 * The CPU BLAS through koffi: discovery (OpenBLAS, MKL, BLIS, Accelerate, other CBLAS), the
 * bound CBLAS entry points, vendor identification and thread control, the checked `Blas`
 * object, and a probe for `gpucompute info`. The CPU backend's products run here.
 */
export { blasSpec, openBlas, blasRefusal } from './library.js';
export { cblas, CblasOrder, CblasTranspose } from './bindings.js';
export { identifyBlas, type BlasVendor, type BlasIdentity } from './vendor.js';
export { resolveThreadCount, threadControl, CPU_THREADS_ENV, type BlasThreadControl } from './threads.js';
export type { SgemmArgs } from './sgemm.js';
export { Blas, type BlasOptions } from './blas.js';
export { probeBlas, type BlasProbe } from './probe.js';
