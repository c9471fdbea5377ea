import koffi from 'koffi';
import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openNccl } from './library.js';
import { NCCL_UNIQUE_ID_BYTES } from './types.js';

/**
 * The koffi type of `ncclUniqueId` (128 bytes, passed by value to ncclCommInitRank), as
 * `{ internal: Uint8Array }`. koffi's type names are global to the process, and a module may be
 * evaluated more than once in it (test runners isolate modules), so an existing one is reused.
 */
const UNIQUE_ID_TYPE = 'gpucompute_ncclUniqueId';
try {
  koffi.type(UNIQUE_ID_TYPE);
} catch {
  koffi.struct(UNIQUE_ID_TYPE, { internal: koffi.array('uint8_t', NCCL_UNIQUE_ID_BYTES, 'Typed') });
}

/**
 * The NCCL entry points this library uses, bound on first use (an older NCCL that lacks one
 * still loads; only that call fails, with MissingSymbolError naming it).
 *
 * Conventions as for the driver: communicators, device buffers and streams are `void *` and
 * travel as `bigint`; out-parameters are one-element typed arrays; counts are `size_t` (a JS
 * number). Each returns the raw ncclResult_t; the checked functions in `raw/` are what callers use.
 */
export const nccl = lazyFunctions(openNccl, {
  // version, errors
  ncclGetVersion: 'int ncclGetVersion(_Out_ int *version)',
  ncclGetErrorString: 'const char *ncclGetErrorString(int result)',
  ncclGetLastError: 'const char *ncclGetLastError(void *comm)',

  // communicators
  ncclGetUniqueId: 'int ncclGetUniqueId(void *uniqueId)',
  ncclCommInitRank: `int ncclCommInitRank(_Out_ void **comm, int nranks, ${UNIQUE_ID_TYPE} commId, int rank)`,
  ncclCommInitAll: 'int ncclCommInitAll(void *comms, int ndev, const int *devlist)',
  ncclCommFinalize: 'int ncclCommFinalize(void *comm)',
  ncclCommDestroy: 'int ncclCommDestroy(void *comm)',
  ncclCommAbort: 'int ncclCommAbort(void *comm)',
  ncclCommGetAsyncError: 'int ncclCommGetAsyncError(void *comm, _Out_ int *asyncError)',
  ncclCommCount: 'int ncclCommCount(void *comm, _Out_ int *count)',
  ncclCommCuDevice: 'int ncclCommCuDevice(void *comm, _Out_ int *device)',
  ncclCommUserRank: 'int ncclCommUserRank(void *comm, _Out_ int *rank)',

  // collectives
  ncclAllReduce: 'int ncclAllReduce(void *sendbuff, void *recvbuff, size_t count, int datatype, int op, void *comm, void *stream)',
  ncclBroadcast: 'int ncclBroadcast(void *sendbuff, void *recvbuff, size_t count, int datatype, int root, void *comm, void *stream)',
  ncclReduce: 'int ncclReduce(void *sendbuff, void *recvbuff, size_t count, int datatype, int op, int root, void *comm, void *stream)',
  ncclAllGather: 'int ncclAllGather(void *sendbuff, void *recvbuff, size_t sendcount, int datatype, void *comm, void *stream)',
  ncclReduceScatter:
    'int ncclReduceScatter(void *sendbuff, void *recvbuff, size_t recvcount, int datatype, int op, void *comm, void *stream)',

  // point to point
  ncclSend: 'int ncclSend(void *sendbuff, size_t count, int datatype, int peer, void *comm, void *stream)',
  ncclRecv: 'int ncclRecv(void *recvbuff, size_t count, int datatype, int peer, void *comm, void *stream)',

  // group calls
  ncclGroupStart: 'int ncclGroupStart()',
  ncclGroupEnd: 'int ncclGroupEnd()',
});

/** The name of a bound NCCL entry point. */
export type NcclFunctionName = keyof typeof nccl;
