import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openHipRuntime } from './library.js';

/**
 * C prototypes of the HIP runtime entry points this library uses, bound on
 * first use (the unchecked "sys" level: each returns the raw hipError_t).
 * Conventions as for the CUDA driver: handles and host addresses are `void *`
 * (bigint), device pointers travel as `uint64_t` (HIP's `void *` has the same
 * width), out-parameters are one-element typed arrays. The checked functions
 * in `raw/` are what callers normally use.
 */
export const hip = lazyFunctions(openHipRuntime, {
  // errors, init, versions
  hipGetErrorName: 'const char *hipGetErrorName(int error)',
  hipInit: 'int hipInit(unsigned int flags)',
  hipDriverGetVersion: 'int hipDriverGetVersion(_Out_ int *version)',
  hipRuntimeGetVersion: 'int hipRuntimeGetVersion(_Out_ int *version)',

  // devices
  hipGetDeviceCount: 'int hipGetDeviceCount(_Out_ int *count)',
  hipDeviceGet: 'int hipDeviceGet(_Out_ int *device, int ordinal)',
  hipDeviceGetName: 'int hipDeviceGetName(void *name, int len, int device)',
  hipDeviceGetPCIBusId: 'int hipDeviceGetPCIBusId(void *busId, int len, int device)',
  hipDeviceTotalMem: 'int hipDeviceTotalMem(_Out_ size_t *bytes, int device)',
  hipDeviceGetAttribute: 'int hipDeviceGetAttribute(_Out_ int *value, int attr, int device)',
  hipGetDeviceProperties: 'int hipGetDeviceProperties(void *props, int device)',
  hipSetDevice: 'int hipSetDevice(int device)',
  hipGetDevice: 'int hipGetDevice(_Out_ int *device)',
  hipDeviceSynchronize: 'int hipDeviceSynchronize()',
  hipMemGetInfo: 'int hipMemGetInfo(_Out_ size_t *free, _Out_ size_t *total)',
  hipDeviceGetStreamPriorityRange: 'int hipDeviceGetStreamPriorityRange(_Out_ int *least, _Out_ int *greatest)',

  // streams
  hipStreamCreateWithPriority: 'int hipStreamCreateWithPriority(_Out_ void **stream, unsigned int flags, int priority)',
  hipStreamQuery: 'int hipStreamQuery(void *stream)',
  hipStreamSynchronize: 'int hipStreamSynchronize(void *stream)',
  hipStreamWaitEvent: 'int hipStreamWaitEvent(void *stream, void *event, unsigned int flags)',
  hipStreamDestroy: 'int hipStreamDestroy(void *stream)',

  // events
  hipEventCreateWithFlags: 'int hipEventCreateWithFlags(_Out_ void **event, unsigned int flags)',
  hipEventRecord: 'int hipEventRecord(void *event, void *stream)',
  hipEventQuery: 'int hipEventQuery(void *event)',
  hipEventSynchronize: 'int hipEventSynchronize(void *event)',
  hipEventElapsedTime: 'int hipEventElapsedTime(_Out_ float *ms, void *start, void *stop)',
  hipEventDestroy: 'int hipEventDestroy(void *event)',

  // device and pinned memory
  hipMalloc: 'int hipMalloc(_Out_ uint64_t *ptr, size_t bytes)',
  hipFree: 'int hipFree(uint64_t ptr)',
  hipHostMalloc: 'int hipHostMalloc(_Out_ void **ptr, size_t bytes, unsigned int flags)',
  hipHostFree: 'int hipHostFree(void *ptr)',
  hipHostRegister: 'int hipHostRegister(void *ptr, size_t bytes, unsigned int flags)',
  hipHostUnregister: 'int hipHostUnregister(void *ptr)',

  // copies and fills
  hipMemcpyHtoD: 'int hipMemcpyHtoD(uint64_t dst, void *src, size_t bytes)',
  hipMemcpyDtoH: 'int hipMemcpyDtoH(void *dst, uint64_t src, size_t bytes)',
  hipMemcpyDtoD: 'int hipMemcpyDtoD(uint64_t dst, uint64_t src, size_t bytes)',
  hipMemcpyHtoDAsync: 'int hipMemcpyHtoDAsync(uint64_t dst, void *src, size_t bytes, void *stream)',
  hipMemcpyDtoHAsync: 'int hipMemcpyDtoHAsync(void *dst, uint64_t src, size_t bytes, void *stream)',
  hipMemcpyDtoDAsync: 'int hipMemcpyDtoDAsync(uint64_t dst, uint64_t src, size_t bytes, void *stream)',
  hipMemsetD8Async: 'int hipMemsetD8Async(uint64_t dst, uint8_t value, size_t count, void *stream)',
  hipMemsetD32Async: 'int hipMemsetD32Async(uint64_t dst, int value, size_t count, void *stream)',

  // modules, functions, launches, occupancy
  hipModuleLoadData: 'int hipModuleLoadData(_Out_ void **module, void *image)',
  hipModuleUnload: 'int hipModuleUnload(void *module)',
  hipModuleGetFunction: 'int hipModuleGetFunction(_Out_ void **fn, void *module, const char *name)',
  hipModuleGetGlobal: 'int hipModuleGetGlobal(_Out_ uint64_t *ptr, _Out_ size_t *bytes, void *module, const char *name)',
  hipFuncGetAttribute: 'int hipFuncGetAttribute(_Out_ int *value, int attrib, void *fn)',
  hipModuleLaunchKernel:
    'int hipModuleLaunchKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int sharedMemBytes, void *stream, void *params, void *extra)',
  hipModuleOccupancyMaxPotentialBlockSize:
    'int hipModuleOccupancyMaxPotentialBlockSize(_Out_ int *gridSize, _Out_ int *blockSize, void *fn, size_t dynamicSmem, int blockSizeLimit)',
  hipModuleOccupancyMaxActiveBlocksPerMultiprocessor:
    'int hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(_Out_ int *blocks, void *fn, int blockSize, size_t dynamicSmem)',
});

/** The name of a bound HIP runtime entry point. */
export type HipFunctionName = keyof typeof hip;
