/**
 * Which errors mean "this kernel configuration (or this graph capture) cannot run here", so a
 * caller with alternatives may try the next one. Everything else — a fault that broke the context,
 * running out of memory, a failure inside the library's own code — must reach the user, never be
 * mistaken for a configuration that does not fit.
 */
import { CudaError } from '../../driver/cuda-error.js';
import { CompileError } from '../../nvrtc/nvrtc-error.js';

/** Whether `err` rules out one configuration only (a compile error or a non-sticky driver refusal other than memory). */
export function isConfigurationFailure(err: unknown): boolean {
  if (err instanceof CompileError) return true;
  return err instanceof CudaError && !err.sticky && err.errorName !== 'CUDA_ERROR_OUT_OF_MEMORY';
}
