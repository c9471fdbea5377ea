import { GpuError } from '../errors.js';
import { cuda } from './bindings.js';
import { stickyCudaResults } from './generated/result-code.js';
import { cudaResultName } from './result-code.js';

/** Result codes after which the CUDA context is corrupt (see {@link stickyCudaResults}). */
const STICKY_RESULTS: ReadonlySet<number> = new Set(stickyCudaResults);

/** Whether a CUresult leaves its context unusable for the rest of the process. */
export function isStickyResult(result: number): boolean {
  return STICKY_RESULTS.has(result);
}

/** A CUDA driver call returned an error. */
export class CudaError extends GpuError {
  /** The CUresult code. */
  readonly result: number;
  /** Its C name, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS` (from cuGetErrorName when the driver answers). */
  readonly errorName: string;
  /** The driver's description (cuGetErrorString), or a placeholder when the driver cannot be asked. */
  readonly description: string;
  /** The driver entry point that failed, e.g. `cuMemAlloc_v2`. */
  readonly call: string;
  /** True when the error corrupted the context (an illegal address, say): later work on it fails too. */
  readonly sticky: boolean;

  /**
   * @param detail - extra text appended to the message (a JIT log, a hint).
   */
  constructor(result: number, call: string, detail?: string) {
    const errorName = driverString('cuGetErrorName', result) ?? cudaResultName(result) ?? `CUresult ${result}`;
    const description = driverString('cuGetErrorString', result) ?? 'no description (the driver could not be asked)';
    const sticky = isStickyResult(result);
    super(
      'CUDA_ERROR',
      `${call} failed with ${errorName} (${result}): ${description}` +
        (sticky ? '. The CUDA context is now unusable; restart the process to use this GPU again.' : '') +
        (detail ? `\n${detail}` : ''),
    );
    this.result = result;
    this.errorName = errorName;
    this.description = description;
    this.call = call;
    this.sticky = sticky;
  }
}

/**
 * A context was used after a sticky error (see {@link CudaError.sticky})
 * corrupted it. `cause` is the error that did.
 */
export class ContextUnusableError extends GpuError {
  /** The sticky error that made the context unusable. */
  declare readonly cause: CudaError;
  constructor(what: string, cause: CudaError) {
    super(
      'CONTEXT_UNUSABLE',
      `${what} is unusable since ${cause.call} failed with ${cause.errorName}; ` +
        'CUDA cannot recover a context from this error, so restart the process to use the GPU again.',
      { cause },
    );
  }
}

type StickyListener = (error: CudaError) => void;
let stickyListener: StickyListener | undefined;

/**
 * Registers the one function told about every sticky error as it is thrown,
 * so the safe tier can mark the context that broke. Replaces any previous one.
 */
export function onStickyError(listener: StickyListener | undefined): void {
  stickyListener = listener;
}

/** Throws a {@link CudaError} for a failed result; returns normally on CUDA_SUCCESS. */
export function check(result: number, call: string): void {
  if (result !== 0) throw cudaError(result, call);
}

/** Builds the {@link CudaError} for `result` and reports it when sticky. */
export function cudaError(result: number, call: string, detail?: string): CudaError {
  const error = new CudaError(result, call, detail);
  if (error.sticky) stickyListener?.(error);
  return error;
}

const stringOut: [string | null] = [null];

/** Asks the driver for an error's name or description; undefined when it cannot answer. */
function driverString(call: 'cuGetErrorName' | 'cuGetErrorString', result: number): string | undefined {
  try {
    stringOut[0] = null;
    const status = cuda[call](result, stringOut) as number;
    return status === 0 && stringOut[0] ? stringOut[0] : undefined;
  } catch {
    // The library is missing (no driver) or lacks the symbol: fall back to the static table.
    return undefined;
  }
}
