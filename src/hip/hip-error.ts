import { GpuError } from '../errors.js';
import { hip } from './bindings.js';
import { HipResult, hipResultDescription, hipResultName } from './hip-result.js';

/**
 * Codes after which the device's state is lost for this process (a fault in
 * a kernel): later work on it fails too.
 */
const STICKY_RESULTS: ReadonlySet<number> = new Set([
  HipResult.hipErrorIllegalAddress,
  HipResult.hipErrorLaunchFailure,
  HipResult.hipErrorLaunchTimeOut,
  HipResult.hipErrorAssert,
  HipResult.hipErrorECCNotCorrectable,
]);

/** A HIP runtime call returned an error. */
export class HipError extends GpuError {
  /** The hipError_t code. */
  readonly result: number;
  /** Its C name, e.g. `hipErrorNoDevice`. */
  readonly errorName: string;
  /** What it means (from this library's table: HIP's hipGetErrorString returns the name). */
  readonly description: string;
  /** The runtime entry point that failed, e.g. `hipMalloc`. */
  readonly call: string;
  /** True when a kernel fault left the device unusable for the rest of the process. */
  readonly sticky: boolean;

  constructor(result: number, call: string, detail?: string) {
    const errorName = hipResultName(result) ?? runtimeName(result) ?? `hipError ${result}`;
    const description = hipResultDescription(result);
    const sticky = STICKY_RESULTS.has(result);
    super(
      'HIP_ERROR',
      `${call} failed with ${errorName} (${result}): ${description}` +
        (sticky ? '. The device is now unusable by this process; restart it to use this GPU again.' : '') +
        (detail ? `\n${detail}` : ''),
    );
    this.result = result;
    this.errorName = errorName;
    this.description = description;
    this.call = call;
    this.sticky = sticky;
  }
}

/** Throws a {@link HipError} for a failed result; returns normally on hipSuccess. */
export function check(result: number, call: string): void {
  if (result !== 0) throw new HipError(result, call);
}

/** Asks the runtime for a code this table lacks (a newer ROCm's); undefined when it cannot answer. */
function runtimeName(result: number): string | undefined {
  try {
    const name = hip.hipGetErrorName(result) as string | null;
    // HIP answers "hipErrorUnknown" for codes it does not know either.
    return name && name !== 'hipErrorUnknown' ? name : undefined;
  } catch {
    return undefined;
  }
}
