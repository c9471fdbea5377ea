/**
 * `hipDeviceAttribute_t` values (hip_runtime_api.h; the numbering ROCm 5.0
 * introduced and later releases only append to). Only the attributes this
 * library reads are listed.
 */
export const HipDeviceAttribute = {
  ClockRate: 5,
  ConcurrentKernels: 8,
  CooperativeLaunch: 10,
  Integrated: 16,
  L2CacheSize: 19,
  ComputeCapabilityMajor: 23,
  MaxBlockDimX: 26,
  MaxBlockDimY: 27,
  MaxBlockDimZ: 28,
  MaxGridDimX: 29,
  MaxGridDimY: 30,
  MaxGridDimZ: 31,
  MaxThreadsPerBlock: 56,
  MaxThreadsPerMultiProcessor: 57,
  MemoryBusWidth: 59,
  MemoryClockRate: 60,
  ComputeCapabilityMinor: 61,
  MultiprocessorCount: 63,
  MaxRegistersPerBlock: 71,
  MaxSharedMemoryPerBlock: 74,
  SharedMemPerBlockOptin: 75,
  WarpSize: 87,
  MemoryPoolsSupported: 88,
  MaxSharedMemoryPerMultiprocessor: 10002,
} as const;

export type HipDeviceAttribute = (typeof HipDeviceAttribute)[keyof typeof HipDeviceAttribute];

/** `hipFunction_attribute` values (HIP_FUNC_ATTRIBUTE_*). */
export const HipFunctionAttribute = {
  MaxThreadsPerBlock: 0,
  SharedSizeBytes: 1,
  ConstSizeBytes: 2,
  LocalSizeBytes: 3,
  NumRegs: 4,
  MaxDynamicSharedSizeBytes: 8,
} as const;

export type HipFunctionAttribute = (typeof HipFunctionAttribute)[keyof typeof HipFunctionAttribute];

/** Stream, event and pinned-memory flags. */
export const HipStreamFlags = { Default: 0, NonBlocking: 1 } as const;
export const HipEventFlags = { Default: 0, BlockingSync: 1, DisableTiming: 2 } as const;
export const HipHostMallocFlags = { Default: 0, Portable: 1 } as const;
