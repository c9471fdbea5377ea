import { GpuError } from '../errors.js';
import { nccl } from './bindings.js';
import { ncclResultName } from './types.js';

/** An NCCL call returned something other than ncclSuccess. */
export class NcclError extends GpuError {
  /** The ncclResult_t code. */
  readonly result: number;
  /** Its C name, e.g. `ncclInvalidArgument`. */
  readonly resultName: string;
  /** NCCL's description of the code (ncclGetErrorString). */
  readonly description: string;
  /** NCCL's own message about what went wrong (ncclGetLastError); empty when it says nothing. */
  readonly lastError: string;
  /** The NCCL entry point that failed, e.g. `ncclAllReduce`. */
  readonly call: string;

  /**
   * @param comm - the communicator the call was about (its last error is asked for), 0n for none.
   */
  constructor(result: number, call: string, comm: bigint = 0n) {
    const resultName = ncclResultName(result) ?? `ncclResult_t ${result}`;
    const description = ncclString(() => nccl.ncclGetErrorString(result)) ?? 'no description (NCCL could not be asked)';
    const lastError = ncclString(() => nccl.ncclGetLastError(comm)) ?? '';
    super('NCCL_ERROR', `${call} failed with ${resultName} (${result}): ${description}${lastError ? `: ${lastError}` : ''}`);
    this.result = result;
    this.resultName = resultName;
    this.description = description;
    this.lastError = lastError;
    this.call = call;
  }
}

/** Throws {@link NcclError} unless `result` is ncclSuccess. */
export function checkNccl(result: number, call: string, comm?: bigint): void {
  if (result !== 0) throw new NcclError(result, call, comm);
}

/** A string NCCL returns; undefined when it cannot be asked (no library, a symbol an old NCCL lacks). */
function ncclString(get: () => unknown): string | undefined {
  try {
    const value = get();
    return typeof value === 'string' ? value.trim() : undefined;
  } catch {
    return undefined;
  }
}
