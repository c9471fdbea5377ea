/**
 * NCCL's enums (nccl.h), written by hand from NCCL's documented values: the header is not on the
 * machines this library is built on (the wheel `nvidia-nccl-cu13` ships it, in
 * `nvidia/nccl/include`). test/unit/nccl/types.test.ts checks the names and values against the
 * documented lists, and test/gpu/multi/nccl-header.test.ts against the nccl.h beside the library
 * found where one is there. The C names are kept, as the driver's tables keep CUDA's.
 */

/** ncclResult_t. ncclRemoteError since 2.13, ncclInProgress since 2.14, ncclTimeout since 2.30. */
export const NcclResult = {
  ncclSuccess: 0,
  ncclUnhandledCudaError: 1,
  ncclSystemError: 2,
  ncclInternalError: 3,
  ncclInvalidArgument: 4,
  ncclInvalidUsage: 5,
  ncclRemoteError: 6,
  ncclInProgress: 7,
  ncclTimeout: 8,
} as const;

/** ncclDataType_t (the aliases ncclChar, ncclInt, ncclHalf, ncclFloat and ncclDouble left out). ncclBfloat16 since 2.10, the fp8 types since 2.24. */
export const NcclDataType = {
  ncclInt8: 0,
  ncclUint8: 1,
  ncclInt32: 2,
  ncclUint32: 3,
  ncclInt64: 4,
  ncclUint64: 5,
  ncclFloat16: 6,
  ncclFloat32: 7,
  ncclFloat64: 8,
  ncclBfloat16: 9,
  ncclFloat8e4m3: 10,
  ncclFloat8e5m2: 11,
} as const;

/** ncclRedOp_t, the built-in operations. ncclAvg since 2.10. */
export const NcclRedOp = {
  ncclSum: 0,
  ncclProd: 1,
  ncclMax: 2,
  ncclMin: 3,
  ncclAvg: 4,
} as const;

/** NCCL_UNIQUE_ID_BYTES: the size of an `ncclUniqueId`. */
export const NCCL_UNIQUE_ID_BYTES = 128;

/** An element type by short name, as the safe tier takes it. */
export type NcclDType = 'i8' | 'u8' | 'i32' | 'u32' | 'i64' | 'u64' | 'f16' | 'f32' | 'f64' | 'bf16' | 'f8e4m3' | 'f8e5m2';

/** Each {@link NcclDType}: its ncclDataType_t and its size in bytes. */
export const NCCL_DTYPES: Readonly<Record<NcclDType, { readonly code: number; readonly bytes: number }>> = {
  i8: { code: NcclDataType.ncclInt8, bytes: 1 },
  u8: { code: NcclDataType.ncclUint8, bytes: 1 },
  i32: { code: NcclDataType.ncclInt32, bytes: 4 },
  u32: { code: NcclDataType.ncclUint32, bytes: 4 },
  i64: { code: NcclDataType.ncclInt64, bytes: 8 },
  u64: { code: NcclDataType.ncclUint64, bytes: 8 },
  f16: { code: NcclDataType.ncclFloat16, bytes: 2 },
  f32: { code: NcclDataType.ncclFloat32, bytes: 4 },
  f64: { code: NcclDataType.ncclFloat64, bytes: 8 },
  bf16: { code: NcclDataType.ncclBfloat16, bytes: 2 },
  f8e4m3: { code: NcclDataType.ncclFloat8e4m3, bytes: 1 },
  f8e5m2: { code: NcclDataType.ncclFloat8e5m2, bytes: 1 },
};

/** A built-in reduction by short name. */
export type NcclReduceOp = 'sum' | 'prod' | 'max' | 'min' | 'avg';

/** Each {@link NcclReduceOp}'s ncclRedOp_t. */
export const NCCL_REDUCE_OPS: Readonly<Record<NcclReduceOp, number>> = {
  sum: NcclRedOp.ncclSum,
  prod: NcclRedOp.ncclProd,
  max: NcclRedOp.ncclMax,
  min: NcclRedOp.ncclMin,
  avg: NcclRedOp.ncclAvg,
};

const resultNames = new Map<number, string>(Object.entries(NcclResult).map(([name, code]) => [code, name]));

/** The C name of an ncclResult_t, or undefined for a code this table does not know. */
export function ncclResultName(code: number): string | undefined {
  return resultNames.get(code);
}
