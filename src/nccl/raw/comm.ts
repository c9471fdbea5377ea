import { nccl } from '../bindings.js';
import { checkNccl } from '../nccl-error.js';
import { NCCL_UNIQUE_ID_BYTES } from '../types.js';
import type { NcclCommHandle } from './handles.js';
import { out } from './out-params.js';

/** ncclGetUniqueId: a new id (128 bytes) for the ranks of one communicator to meet by. */
export function getUniqueId(): Uint8Array {
  const id = new Uint8Array(NCCL_UNIQUE_ID_BYTES);
  checkNccl(nccl.ncclGetUniqueId(id), 'ncclGetUniqueId');
  return id;
}

/**
 * ncclCommInitRank: joins rank `rank` of `nranks` to the communicator `id` names, on the CUDA
 * device current on this thread. Blocks until every rank has joined.
 */
export function commInitRank(nranks: number, id: Uint8Array, rank: number): NcclCommHandle {
  checkNccl(nccl.ncclCommInitRank(out.handle, nranks, { internal: id }, rank), 'ncclCommInitRank');
  return out.handle[0]!;
}

/** ncclCommInitAll: one communicator per device of `devices` (rank i on devices[i]), for one process. */
export function commInitAll(devices: readonly number[]): NcclCommHandle[] {
  const comms = new BigUint64Array(devices.length);
  checkNccl(nccl.ncclCommInitAll(comms, devices.length, Int32Array.from(devices)), 'ncclCommInitAll');
  return Array.from(comms);
}

/** ncclCommFinalize: flushes the communicator's pending work (NCCL 2.14+); destroy it after. */
export function commFinalize(comm: NcclCommHandle): void {
  checkNccl(nccl.ncclCommFinalize(comm), 'ncclCommFinalize', comm);
}

/** ncclCommDestroy: frees the communicator once its queued work has completed. */
export function commDestroy(comm: NcclCommHandle): void {
  checkNccl(nccl.ncclCommDestroy(comm), 'ncclCommDestroy');
}

/** ncclCommAbort: frees the communicator at once, cancelling its work (after an error, or to unblock a hung peer). */
export function commAbort(comm: NcclCommHandle): void {
  checkNccl(nccl.ncclCommAbort(comm), 'ncclCommAbort');
}

/** ncclCommGetAsyncError: an error a queued operation ran into (ncclSuccess, 0, when none). */
export function commGetAsyncError(comm: NcclCommHandle): number {
  checkNccl(nccl.ncclCommGetAsyncError(comm, out.i32), 'ncclCommGetAsyncError', comm);
  return out.i32[0]!;
}

/** ncclCommCount: the number of ranks. */
export function commCount(comm: NcclCommHandle): number {
  checkNccl(nccl.ncclCommCount(comm, out.i32), 'ncclCommCount', comm);
  return out.i32[0]!;
}

/** ncclCommCuDevice: the CUDA device ordinal of the communicator. */
export function commCuDevice(comm: NcclCommHandle): number {
  checkNccl(nccl.ncclCommCuDevice(comm, out.i32), 'ncclCommCuDevice', comm);
  return out.i32[0]!;
}

/** ncclCommUserRank: this communicator's rank. */
export function commUserRank(comm: NcclCommHandle): number {
  checkNccl(nccl.ncclCommUserRank(comm, out.i32), 'ncclCommUserRank', comm);
  return out.i32[0]!;
}

/** ncclGetLastError: NCCL's message about the last error (of `comm`, or of the process for 0n); empty when none. */
export function getLastError(comm: NcclCommHandle = 0n): string {
  return String(nccl.ncclGetLastError(comm) ?? '');
}

/** ncclGetErrorString: NCCL's description of a result code. */
export function getErrorString(result: number): string {
  return String(nccl.ncclGetErrorString(result) ?? '');
}
