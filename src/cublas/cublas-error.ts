import { GpuError } from '../errors.js';
import { cublas, CublasStatus } from './bindings.js';

/** A cuBLAS call returned something other than CUBLAS_STATUS_SUCCESS. */
export class CublasError extends GpuError {
  /** The cublasStatus_t code. */
  readonly status: number;
  /** Its name, e.g. `CUBLAS_STATUS_INVALID_VALUE`. */
  readonly statusName: string;
  /** The cuBLAS function that failed. */
  readonly call: string;

  constructor(call: string, status: number) {
    const name = statusName(status);
    const description = statusDescription(status);
    super('CUBLAS_ERROR', `${call} failed: ${name} (${status})${description ? `: ${description}` : ''}`);
    this.status = status;
    this.statusName = name;
    this.call = call;
  }
}

/** Throws {@link CublasError} unless `status` is success. */
export function checkCublas(call: string, status: number): void {
  if (status !== CublasStatus.SUCCESS) throw new CublasError(call, status);
}

function statusName(status: number): string {
  const known = Object.entries(CublasStatus).find(([, code]) => code === status)?.[0];
  if (known) return `CUBLAS_STATUS_${known}`;
  try {
    return String(cublas.cublasGetStatusName(status));
  } catch {
    return 'CUBLAS_STATUS_UNKNOWN';
  }
}

function statusDescription(status: number): string | undefined {
  try {
    return String(cublas.cublasGetStatusString(status));
  } catch {
    // cuBLAS before 11.4 has no cublasGetStatusString; the name says enough.
    return undefined;
  }
}
