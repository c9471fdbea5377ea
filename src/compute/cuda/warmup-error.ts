/** The error of a kernel warmup: a module that did not compile, or a warmup that could not run. */
import { GpuError } from '../../errors.js';

/**
 * A kernel module a warmup could not compile (`module` names it: `softmax.cu?GC_DTYPE=GC_F32`,
 * with `@sm_90a` for the Hopper kernels), or a warmup that could not run at all (`module`
 * undefined: the kernel cache is off or not writable, or its compile workers could not start).
 * `reason` is the compiler's (or the worker's) message; `errorName` the original error's class,
 * e.g. `CompileError`.
 */
export class WarmupError extends GpuError {
  /** The module key, or undefined for an error of the whole warmup. */
  readonly module: string | undefined;
  /** The device arch warmed for, e.g. `sm_90`. */
  readonly arch: string;
  readonly reason: string;
  /** The class name of the error behind it (`CompileError`, `InvalidArgumentError`, …), when there was one. */
  readonly errorName: string | undefined;

  constructor(details: { module?: string; arch: string; reason: string; errorName?: string }, options?: ErrorOptions) {
    const what = details.module === undefined ? `kernel warmup for ${details.arch}` : `kernel module ${details.module} (for ${details.arch})`;
    super('WARMUP', `${what} failed: ${details.reason}`, options);
    this.module = details.module;
    this.arch = details.arch;
    this.reason = details.reason;
    this.errorName = details.errorName;
  }
}
