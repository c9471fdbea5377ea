/** The typed error a failing WebAssembly kernel becomes on the calling thread. */
import { GpuError } from '../../../errors.js';

/**
 * A kernel trapped or threw (on the calling thread or on a worker): an out-of-bounds address, a
 * worker that could not start. The pool stays usable after it.
 */
export class SimdKernelError extends GpuError {
  /** The kernel's export name. */
  readonly kernel: string;
  /** 0 for the calling thread, else the worker's number (1-based). */
  readonly thread: number;
  constructor(kernel: string, thread: number, message: string, options?: ErrorOptions) {
    super('SIMD_KERNEL_FAILED', `WebAssembly kernel ${kernel} failed on ${thread === 0 ? 'the calling thread' : `worker ${thread}`}: ${message}`, options);
    this.kernel = kernel;
    this.thread = thread;
  }
}
