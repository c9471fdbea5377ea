import { GpuError } from '../errors.js';
import { CusolverStatus } from './bindings.js';

/** A cuSOLVER call returned something other than CUSOLVER_STATUS_SUCCESS, or its devInfo reported a failure. */
export class CusolverError extends GpuError {
  /** The cusolverStatus_t code (CUSOLVER_STATUS_SUCCESS when the call was accepted but devInfo reported the failure). */
  readonly status: number;
  /** Its name, e.g. `CUSOLVER_STATUS_INVALID_VALUE`. */
  readonly statusName: string;
  /** The cuSOLVER function that failed. */
  readonly call: string;
  /** The devInfo the routine wrote, when that is what failed. */
  readonly info: number | undefined;

  constructor(call: string, status: number, info?: number) {
    const name = statusName(status);
    const detail = info === undefined ? `${name} (${status})` : `devInfo ${info}`;
    super('CUSOLVER_ERROR', `${call} failed: ${detail}`);
    this.status = status;
    this.statusName = name;
    this.call = call;
    this.info = info;
  }
}

/** Throws {@link CusolverError} unless `status` is success. */
export function checkCusolver(call: string, status: number): void {
  if (status !== CusolverStatus.SUCCESS) throw new CusolverError(call, status);
}

function statusName(status: number): string {
  const known = Object.entries(CusolverStatus).find(([, code]) => code === status)?.[0];
  return known ? `CUSOLVER_STATUS_${known}` : 'CUSOLVER_STATUS_UNKNOWN';
}
