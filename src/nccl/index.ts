/**
 * NCCL through koffi, in the driver's three levels: the bound entry points (`ncclBindings`), the
 * checked raw tier (`ncclRaw`), and owning objects (`NcclCommunicator`, `NcclUniqueId`,
 * `ncclGroup`). NVLink multicast (NVLS) stays off: `NCCL_NVLS_ENABLE=0` is set before NCCL
 * loads, and {@link ncclSafeEnv} gives child processes the same.
 *
 * @module gpucompute/nccl
 */
export { ncclSpec, openNccl } from './library.js';
export { applyNcclSafeEnv, NCCL_SAFE_ENV, ncclSafeEnv } from './environment.js';
export { nccl as ncclBindings, type NcclFunctionName } from './bindings.js';
export * as ncclRaw from './raw/index.js';
export { NcclError, checkNccl } from './nccl-error.js';
export {
  NCCL_DTYPES,
  NCCL_REDUCE_OPS,
  NCCL_UNIQUE_ID_BYTES,
  NcclDataType,
  NcclRedOp,
  NcclResult,
  ncclResultName,
  type NcclDType,
  type NcclReduceOp,
} from './types.js';
export { NcclUniqueId } from './unique-id.js';
export {
  NcclCommunicator,
  type NcclCallOptions,
  type NcclPeerCallOptions,
  type NcclRankOptions,
  type NcclReduceCallOptions,
  type NcclRootCallOptions,
} from './communicator.js';
export { ncclGroup } from './group.js';
export { ncclVersion, type NcclVersion } from './version.js';
