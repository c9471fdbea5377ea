/**
 * Driver handles as they travel through koffi: opaque pointers as `bigint`.
 * `0n` is the C NULL (for streams, the legacy default stream).
 */
export type CUcontext = bigint;
export type CUstream = bigint;
export type CUevent = bigint;
export type CUmodule = bigint;
export type CUfunction = bigint;
export type CUmemoryPool = bigint;
export type CUgraph = bigint;
export type CUgraphExec = bigint;
/** A device address (`CUdeviceptr`). */
export type CUdeviceptr = bigint;
/** A host address (pinned or registered memory). */
export type HostPointer = bigint;
/** A device ordinal as the driver names it (`CUdevice`). */
export type CUdevice = number;
