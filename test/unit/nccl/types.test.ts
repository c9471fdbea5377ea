/**
 * NCCL's enums are written by hand (nccl.h is not on this machine): their names and values are
 * checked here against NCCL's documented lists (nccl.h of NCCL 2.30), and on a GPU machine
 * against the nccl.h that ships beside the library (test/gpu/multi/nccl-header.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  NCCL_DTYPES,
  NCCL_REDUCE_OPS,
  NCCL_UNIQUE_ID_BYTES,
  NcclDataType,
  NcclRedOp,
  NcclResult,
  ncclResultName,
} from '../../../src/nccl/types.js';

describe('NCCL enum tables', () => {
  it('ncclResult_t: every documented code, in order from 0', () => {
    expect(Object.entries(NcclResult)).toEqual([
      ['ncclSuccess', 0],
      ['ncclUnhandledCudaError', 1],
      ['ncclSystemError', 2],
      ['ncclInternalError', 3],
      ['ncclInvalidArgument', 4],
      ['ncclInvalidUsage', 5],
      ['ncclRemoteError', 6],
      ['ncclInProgress', 7],
      ['ncclTimeout', 8],
    ]);
    expect(ncclResultName(6)).toBe('ncclRemoteError');
    expect(ncclResultName(9)).toBeUndefined();
  });

  it('ncclDataType_t: every type, the aliases left out', () => {
    expect(Object.entries(NcclDataType)).toEqual([
      ['ncclInt8', 0],
      ['ncclUint8', 1],
      ['ncclInt32', 2],
      ['ncclUint32', 3],
      ['ncclInt64', 4],
      ['ncclUint64', 5],
      ['ncclFloat16', 6],
      ['ncclFloat32', 7],
      ['ncclFloat64', 8],
      ['ncclBfloat16', 9],
      ['ncclFloat8e4m3', 10],
      ['ncclFloat8e5m2', 11],
    ]);
  });

  it('ncclRedOp_t: the built-in operations', () => {
    expect(Object.entries(NcclRedOp)).toEqual([
      ['ncclSum', 0],
      ['ncclProd', 1],
      ['ncclMax', 2],
      ['ncclMin', 3],
      ['ncclAvg', 4],
    ]);
  });

  it('maps the short names onto them, with element sizes', () => {
    expect(Object.values(NCCL_DTYPES).map((d) => d.code).sort((a, b) => a - b)).toEqual(Object.values(NcclDataType));
    expect(NCCL_DTYPES.f32).toEqual({ code: 7, bytes: 4 });
    expect(NCCL_DTYPES.bf16).toEqual({ code: 9, bytes: 2 });
    expect(NCCL_DTYPES.u64).toEqual({ code: 5, bytes: 8 });
    expect(NCCL_REDUCE_OPS).toEqual({ sum: 0, prod: 1, max: 2, min: 3, avg: 4 });
    expect(NCCL_UNIQUE_ID_BYTES).toBe(128);
  });
});
