/**
 * The hand-written part of the hipError_t descriptions. HIP's hipGetErrorString
 * returns only the name, and hip_runtime_api.h (ROCm 5.2) comments on fewer
 * than half of the codes, so this file describes the rest, worded like
 * cuGetErrorString: a clause, first word in lower case, no closing period.
 * test/unit/hip/hip-result.test.ts checks that every code is described from
 * exactly one place.
 */
import type { HipResult } from './generated/hip-result.js';

type Descriptions = { readonly [name in keyof typeof HipResult]?: string };

/** Codes whose first name the header leaves without a comment. */
export const hipResultDescriptionsNotInHeader: Descriptions = {
  hipErrorOutOfMemory: 'the device could not allocate enough memory for the operation',
  hipErrorNotInitialized: 'the HIP runtime has not been initialised (hipInit failed or was not called)',
  hipErrorDeinitialized: 'the HIP runtime is shutting down',
  hipErrorProfilerDisabled: 'the profiler is disabled for this run',
  hipErrorProfilerNotInitialized: 'the profiler has not been initialised',
  hipErrorProfilerAlreadyStarted: 'the profiler is already started',
  hipErrorProfilerAlreadyStopped: 'the profiler is already stopped',
  hipErrorInvalidConfiguration: 'the launch configuration (grid, block or shared memory) is not valid for this device',
  hipErrorInvalidPitchValue: 'the pitch is not valid for the copy or allocation',
  hipErrorInvalidSymbol: 'the symbol is not a valid device symbol',
  hipErrorInsufficientDriver: 'the installed AMD GPU kernel driver is older than this HIP runtime needs',
  hipErrorMissingConfiguration: 'the kernel was launched without a configuration',
  hipErrorPriorLaunchFailure: 'an earlier kernel launch failed',
  hipErrorInvalidDeviceFunction: "the kernel was not compiled for this device's architecture, or is not a kernel",
  hipErrorInvalidImage: 'the code object is not valid for this device',
  hipErrorContextAlreadyCurrent: 'the context is already current',
  hipErrorMapFailed: 'mapping memory failed',
  hipErrorUnmapFailed: 'unmapping memory failed',
  hipErrorArrayIsMapped: 'the array is mapped and cannot be destroyed',
  hipErrorAlreadyMapped: 'the resource is already mapped',
  hipErrorNoBinaryForGpu: "the code object holds no code for this GPU's architecture",
  hipErrorAlreadyAcquired: 'the resource has already been acquired',
  hipErrorNotMapped: 'the resource is not mapped',
  hipErrorNotMappedAsArray: 'the mapped resource cannot be accessed as an array',
  hipErrorNotMappedAsPointer: 'the mapped resource cannot be accessed through a pointer',
  hipErrorECCNotCorrectable: 'an uncorrectable ECC error was detected',
  hipErrorUnsupportedLimit: 'the limit is not supported by this device',
  hipErrorContextAlreadyInUse: 'the context is already in use by another thread',
  hipErrorPeerAccessUnsupported: 'peer access is not supported between these devices',
  hipErrorInvalidGraphicsContext: 'the graphics interop context is not valid',
  hipErrorInvalidSource: 'the kernel source is not valid',
  hipErrorFileNotFound: 'the file was not found',
  hipErrorSharedObjectSymbolNotFound: 'a symbol of the shared object could not be resolved',
  hipErrorSharedObjectInitFailed: 'initialising the shared object failed',
  hipErrorOperatingSystem: 'an operating system call failed',
  hipErrorInvalidHandle: 'the handle (stream, event, module, function) is not valid',
  hipErrorNotFound: 'the named symbol or function was not found',
  hipErrorIllegalAddress: 'a kernel accessed an illegal memory address',
  hipErrorLaunchTimeOut: 'the kernel ran longer than the device allows',
  hipErrorSetOnActiveProcess: 'the setting cannot change once the runtime is active',
  hipErrorContextIsDestroyed: 'the context has been destroyed',
  hipErrorUnknown: 'an unknown internal error occurred',
};

/** Codes whose header comment is not what a user of this library should read. */
export const hipResultDescriptionOverrides: Descriptions = {
  // The header says "Successful completion."; CUDA's driver says "no error", and probes show both side by side.
  hipSuccess: 'no error',
  // The header names one cause ("Call to hipGetDeviceCount returned 0 devices"); hipInit and hipSetDevice give it too.
  hipErrorNoDevice:
    'no HIP-capable AMD GPU is visible to this process (none installed, no /dev/kfd access, or hidden by HIP_VISIBLE_DEVICES)',
  // The header's comment ("In CUDA DRV, it is CUDA_ERROR_INVALID_PTX") is a cross-reference, not a description.
  hipErrorInvalidKernelFile: 'the kernel code object is malformed',
};
