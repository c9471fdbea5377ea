/** NCCL handles as they travel through koffi: an `ncclComm_t` as a `bigint` (0n is NULL). */
export type NcclCommHandle = bigint;
/** A device address (a `CUdeviceptr`) of a send or receive buffer. */
export type NcclDevicePointer = bigint;
/** A `cudaStream_t` (the same handle as the driver's `CUstream`; 0n is the legacy default stream). */
export type NcclStream = bigint;
