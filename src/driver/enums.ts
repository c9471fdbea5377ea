/**
 * The smaller enums and flag sets of the CUDA driver API (cuda.h, CUDA 13.0),
 * named as in C without their common prefix. Device attributes and result
 * codes, being long, have files of their own.
 */

/** CUfunction_attribute: what cuFuncGetAttribute / cuFuncSetAttribute read or write. */
export const FunctionAttribute = {
  MAX_THREADS_PER_BLOCK: 0,
  SHARED_SIZE_BYTES: 1,
  CONST_SIZE_BYTES: 2,
  LOCAL_SIZE_BYTES: 3,
  NUM_REGS: 4,
  PTX_VERSION: 5,
  BINARY_VERSION: 6,
  CACHE_MODE_CA: 7,
  MAX_DYNAMIC_SHARED_SIZE_BYTES: 8,
  PREFERRED_SHARED_MEMORY_CARVEOUT: 9,
  CLUSTER_SIZE_MUST_BE_SET: 10,
  REQUIRED_CLUSTER_WIDTH: 11,
  REQUIRED_CLUSTER_HEIGHT: 12,
  REQUIRED_CLUSTER_DEPTH: 13,
  NON_PORTABLE_CLUSTER_SIZE_ALLOWED: 14,
  CLUSTER_SCHEDULING_POLICY_PREFERENCE: 15,
} as const;
export type FunctionAttribute = (typeof FunctionAttribute)[keyof typeof FunctionAttribute];

/** CUfunc_cache: L1 / shared memory preference of a function. */
export const FunctionCache = {
  PREFER_NONE: 0,
  PREFER_SHARED: 1,
  PREFER_L1: 2,
  PREFER_EQUAL: 3,
} as const;
export type FunctionCache = (typeof FunctionCache)[keyof typeof FunctionCache];

/** CUctx_flags, as given to cuDevicePrimaryCtxSetFlags. */
export const ContextFlags = {
  SCHED_AUTO: 0x00,
  SCHED_SPIN: 0x01,
  SCHED_YIELD: 0x02,
  SCHED_BLOCKING_SYNC: 0x04,
  MAP_HOST: 0x08,
  LMEM_RESIZE_TO_MAX: 0x10,
  COREDUMP_ENABLE: 0x20,
  USER_COREDUMP_ENABLE: 0x40,
  SYNC_MEMOPS: 0x80,
} as const;

/** CUlimit: per-context limits read and set with cuCtxGetLimit / cuCtxSetLimit. */
export const ContextLimit = {
  STACK_SIZE: 0x00,
  PRINTF_FIFO_SIZE: 0x01,
  MALLOC_HEAP_SIZE: 0x02,
  DEV_RUNTIME_SYNC_DEPTH: 0x03,
  DEV_RUNTIME_PENDING_LAUNCH_COUNT: 0x04,
  MAX_L2_FETCH_GRANULARITY: 0x05,
  PERSISTING_L2_CACHE_SIZE: 0x06,
  SHMEM_SIZE: 0x07,
  CIG_ENABLED: 0x08,
  CIG_SHMEM_FALLBACK_ENABLED: 0x09,
} as const;
export type ContextLimit = (typeof ContextLimit)[keyof typeof ContextLimit];

/** CUstream_flags. */
export const StreamFlags = {
  DEFAULT: 0x0,
  NON_BLOCKING: 0x1,
} as const;

/** CUevent_flags. */
export const EventFlags = {
  DEFAULT: 0x0,
  BLOCKING_SYNC: 0x1,
  DISABLE_TIMING: 0x2,
  INTERPROCESS: 0x4,
} as const;

/** CU_MEMHOSTALLOC_* flags of cuMemHostAlloc. */
export const HostAllocFlags = {
  PORTABLE: 0x01,
  DEVICEMAP: 0x02,
  WRITECOMBINED: 0x04,
} as const;

/** CU_MEMHOSTREGISTER_* flags of cuMemHostRegister. */
export const HostRegisterFlags = {
  PORTABLE: 0x01,
  DEVICEMAP: 0x02,
  IOMEMORY: 0x04,
  READ_ONLY: 0x08,
} as const;

/** CUmemPool_attribute. */
export const MemPoolAttribute = {
  REUSE_FOLLOW_EVENT_DEPENDENCIES: 1,
  REUSE_ALLOW_OPPORTUNISTIC: 2,
  REUSE_ALLOW_INTERNAL_DEPENDENCIES: 3,
  /** cuuint64_t: bytes the pool keeps reserved across synchronizations before returning memory to the OS. */
  RELEASE_THRESHOLD: 4,
  RESERVED_MEM_CURRENT: 5,
  RESERVED_MEM_HIGH: 6,
  USED_MEM_CURRENT: 7,
  USED_MEM_HIGH: 8,
} as const;
export type MemPoolAttribute = (typeof MemPoolAttribute)[keyof typeof MemPoolAttribute];

/** CUjit_option: options of cuModuleLoadDataEx. */
export const JitOption = {
  MAX_REGISTERS: 0,
  THREADS_PER_BLOCK: 1,
  WALL_TIME: 2,
  INFO_LOG_BUFFER: 3,
  INFO_LOG_BUFFER_SIZE_BYTES: 4,
  ERROR_LOG_BUFFER: 5,
  ERROR_LOG_BUFFER_SIZE_BYTES: 6,
  OPTIMIZATION_LEVEL: 7,
  TARGET_FROM_CUCONTEXT: 8,
  TARGET: 9,
  FALLBACK_STRATEGY: 10,
  GENERATE_DEBUG_INFO: 11,
  LOG_VERBOSE: 12,
  GENERATE_LINE_INFO: 13,
  CACHE_MODE: 14,
  FAST_COMPILE: 16,
  LTO: 20,
  FTZ: 21,
  PREC_DIV: 22,
  PREC_SQRT: 23,
  FMA: 24,
  POSITION_INDEPENDENT_CODE: 30,
  MIN_CTA_PER_SM: 31,
  MAX_THREADS_PER_BLOCK: 32,
  OVERRIDE_DIRECTIVE_VALUES: 33,
  SPLIT_COMPILE: 34,
} as const;
export type JitOption = (typeof JitOption)[keyof typeof JitOption];

/** CUstreamCaptureMode. */
export const StreamCaptureMode = {
  GLOBAL: 0,
  THREAD_LOCAL: 1,
  RELAXED: 2,
} as const;
export type StreamCaptureMode = (typeof StreamCaptureMode)[keyof typeof StreamCaptureMode];

/** CUstreamCaptureStatus. */
export const StreamCaptureStatus = {
  NONE: 0,
  ACTIVE: 1,
  INVALIDATED: 2,
} as const;
export type StreamCaptureStatus = (typeof StreamCaptureStatus)[keyof typeof StreamCaptureStatus];

/** CUgraphInstantiate_flags. */
export const GraphInstantiateFlags = {
  AUTO_FREE_ON_LAUNCH: 1,
  UPLOAD: 2,
  DEVICE_LAUNCH: 4,
  USE_NODE_PRIORITY: 8,
} as const;

/** CUlaunchAttributeID: attributes of cuLaunchKernelEx. */
export const LaunchAttributeId = {
  IGNORE: 0,
  ACCESS_POLICY_WINDOW: 1,
  COOPERATIVE: 2,
  SYNCHRONIZATION_POLICY: 3,
  CLUSTER_DIMENSION: 4,
  CLUSTER_SCHEDULING_POLICY_PREFERENCE: 5,
  PROGRAMMATIC_STREAM_SERIALIZATION: 6,
  PROGRAMMATIC_EVENT: 7,
  PRIORITY: 8,
  MEM_SYNC_DOMAIN_MAP: 9,
  MEM_SYNC_DOMAIN: 10,
  PREFERRED_CLUSTER_DIMENSION: 11,
  LAUNCH_COMPLETION_EVENT: 12,
  DEVICE_UPDATABLE_KERNEL_NODE: 13,
} as const;
export type LaunchAttributeId = (typeof LaunchAttributeId)[keyof typeof LaunchAttributeId];
