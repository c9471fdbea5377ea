/** The typed error a failing WebAssembly kernel becomes on the calling thread. */
import { GpuError } from '../../../errors.js';

/**
 * A kernel trapped or threw (on the calling thread or on a worker): an out-of-bounds address, a
 * worker that could not start or that exited. A queued kernel's failure is thrown by the next
 * wait for the queue (a read, `synchronize`), naming the op it served. The pool stays usable
 * after it.
 */
export class SimdKernelError extends GpuError {
  /** The kernel's export name. */
  readonly kernel: string;
  /** 0 for the calling thread, else the worker's number (1-based). */
  readonly thread: number;
  /** The backend op the failed kernel ran for, when it was queued by one. */
  readonly op: string | undefined;
  constructor(kernel: string, thread: number, message: string, options?: ErrorOptions & { op?: string }) {
    const what = options?.op ? ` (queued by ${options.op})` : '';
    super('SIMD_KERNEL_FAILED', `WebAssembly kernel ${kernel}${what} failed on ${thread === 0 ? 'the calling thread' : `worker ${thread}`}: ${message}`, options);
    this.kernel = kernel;
    this.thread = thread;
    this.op = options?.op;
  }
}
