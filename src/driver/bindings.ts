import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openLibcuda } from './library.js';

/**
 * C prototypes of the CUDA driver entry points this library uses, bound on
 * first use (an older driver that lacks one still loads; only that call fails,
 * with MissingSymbolError naming it).
 *
 * Conventions, chosen for koffi 3.3 speed: every handle and host address is
 * `void *` and travels as a `bigint`; device pointers are `uint64_t` (bigint);
 * out-parameters are one-element typed arrays; `void **` arrays the driver
 * reads (kernel parameters, launch configs) are passed as the bigint address
 * of memory the caller owns. Versioned symbols (`_v2`...) are the ones cuda.h
 * maps the plain names to in CUDA 12/13.
 *
 * This is the unchecked "sys" level: each returns the raw CUresult. The
 * checked functions in `raw/` are what callers normally use.
 */
export const cuda = lazyFunctions(openLibcuda, {
  // errors, init, versions
  cuGetErrorName: 'int cuGetErrorName(int error, _Out_ const char **str)',
  cuGetErrorString: 'int cuGetErrorString(int error, _Out_ const char **str)',
  cuInit: 'int cuInit(unsigned int flags)',
  cuDriverGetVersion: 'int cuDriverGetVersion(_Out_ int *version)',

  // devices
  cuDeviceGetCount: 'int cuDeviceGetCount(_Out_ int *count)',
  cuDeviceGet: 'int cuDeviceGet(_Out_ int *device, int ordinal)',
  cuDeviceGetName: 'int cuDeviceGetName(void *name, int len, int dev)',
  cuDeviceGetUuid_v2: 'int cuDeviceGetUuid_v2(void *uuid, int dev)',
  cuDeviceGetPCIBusId: 'int cuDeviceGetPCIBusId(void *busId, int len, int dev)',
  cuDeviceTotalMem_v2: 'int cuDeviceTotalMem_v2(_Out_ size_t *bytes, int dev)',
  cuDeviceGetAttribute: 'int cuDeviceGetAttribute(_Out_ int *value, int attrib, int dev)',
  cuDeviceGetDefaultMemPool: 'int cuDeviceGetDefaultMemPool(_Out_ void **pool, int dev)',

  // primary context and current context
  cuDevicePrimaryCtxRetain: 'int cuDevicePrimaryCtxRetain(_Out_ void **ctx, int dev)',
  cuDevicePrimaryCtxRelease_v2: 'int cuDevicePrimaryCtxRelease_v2(int dev)',
  cuDevicePrimaryCtxSetFlags_v2: 'int cuDevicePrimaryCtxSetFlags_v2(int dev, unsigned int flags)',
  cuDevicePrimaryCtxGetState: 'int cuDevicePrimaryCtxGetState(int dev, _Out_ unsigned int *flags, _Out_ int *active)',
  cuDevicePrimaryCtxReset_v2: 'int cuDevicePrimaryCtxReset_v2(int dev)',
  cuCtxGetCurrent: 'int cuCtxGetCurrent(_Out_ void **ctx)',
  cuCtxSetCurrent: 'int cuCtxSetCurrent(void *ctx)',
  cuCtxPushCurrent_v2: 'int cuCtxPushCurrent_v2(void *ctx)',
  cuCtxPopCurrent_v2: 'int cuCtxPopCurrent_v2(_Out_ void **ctx)',
  cuCtxGetDevice: 'int cuCtxGetDevice(_Out_ int *device)',
  cuCtxSynchronize: 'int cuCtxSynchronize()',
  cuCtxGetStreamPriorityRange: 'int cuCtxGetStreamPriorityRange(_Out_ int *least, _Out_ int *greatest)',
  cuCtxGetLimit: 'int cuCtxGetLimit(_Out_ size_t *value, int limit)',
  cuCtxSetLimit: 'int cuCtxSetLimit(int limit, size_t value)',
  cuCtxGetApiVersion: 'int cuCtxGetApiVersion(void *ctx, _Out_ unsigned int *version)',
  cuMemGetInfo_v2: 'int cuMemGetInfo_v2(_Out_ size_t *free, _Out_ size_t *total)',

  // peer access
  cuDeviceCanAccessPeer: 'int cuDeviceCanAccessPeer(_Out_ int *can, int dev, int peer)',
  cuCtxEnablePeerAccess: 'int cuCtxEnablePeerAccess(void *peer, unsigned int flags)',
  cuCtxDisablePeerAccess: 'int cuCtxDisablePeerAccess(void *peer)',

  // streams
  cuStreamCreateWithPriority: 'int cuStreamCreateWithPriority(_Out_ void **stream, unsigned int flags, int priority)',
  cuStreamGetPriority: 'int cuStreamGetPriority(void *stream, _Out_ int *priority)',
  cuStreamGetFlags: 'int cuStreamGetFlags(void *stream, _Out_ unsigned int *flags)',
  cuStreamQuery: 'int cuStreamQuery(void *stream)',
  cuStreamSynchronize: 'int cuStreamSynchronize(void *stream)',
  cuStreamWaitEvent: 'int cuStreamWaitEvent(void *stream, void *event, unsigned int flags)',
  cuStreamDestroy_v2: 'int cuStreamDestroy_v2(void *stream)',

  // events
  cuEventCreate: 'int cuEventCreate(_Out_ void **event, unsigned int flags)',
  cuEventRecord: 'int cuEventRecord(void *event, void *stream)',
  cuEventQuery: 'int cuEventQuery(void *event)',
  cuEventSynchronize: 'int cuEventSynchronize(void *event)',
  cuEventElapsedTime_v2: 'int cuEventElapsedTime_v2(_Out_ float *ms, void *start, void *end)',
  cuEventElapsedTime: 'int cuEventElapsedTime(_Out_ float *ms, void *start, void *end)',
  cuEventDestroy_v2: 'int cuEventDestroy_v2(void *event)',

  // device memory, stream-ordered memory, pools
  cuMemAlloc_v2: 'int cuMemAlloc_v2(_Out_ uint64_t *dptr, size_t bytes)',
  cuMemFree_v2: 'int cuMemFree_v2(uint64_t dptr)',
  cuMemAllocAsync: 'int cuMemAllocAsync(_Out_ uint64_t *dptr, size_t bytes, void *stream)',
  cuMemFreeAsync: 'int cuMemFreeAsync(uint64_t dptr, void *stream)',
  cuMemPoolSetAttribute: 'int cuMemPoolSetAttribute(void *pool, int attr, void *value)',
  cuMemPoolGetAttribute: 'int cuMemPoolGetAttribute(void *pool, int attr, void *value)',
  cuMemPoolTrimTo: 'int cuMemPoolTrimTo(void *pool, size_t minBytesToKeep)',

  // pinned host memory
  cuMemAllocHost_v2: 'int cuMemAllocHost_v2(_Out_ void **ptr, size_t bytes)',
  cuMemHostAlloc: 'int cuMemHostAlloc(_Out_ void **ptr, size_t bytes, unsigned int flags)',
  cuMemFreeHost: 'int cuMemFreeHost(void *ptr)',
  cuMemHostRegister_v2: 'int cuMemHostRegister_v2(void *ptr, size_t bytes, unsigned int flags)',
  cuMemHostUnregister: 'int cuMemHostUnregister(void *ptr)',
  cuMemHostGetDevicePointer_v2: 'int cuMemHostGetDevicePointer_v2(_Out_ uint64_t *dptr, void *ptr, unsigned int flags)',

  // copies and fills
  cuMemcpyHtoD_v2: 'int cuMemcpyHtoD_v2(uint64_t dst, void *src, size_t bytes)',
  cuMemcpyDtoH_v2: 'int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes)',
  cuMemcpyDtoD_v2: 'int cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t bytes)',
  cuMemcpyHtoDAsync_v2: 'int cuMemcpyHtoDAsync_v2(uint64_t dst, void *src, size_t bytes, void *stream)',
  cuMemcpyDtoHAsync_v2: 'int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t bytes, void *stream)',
  cuMemcpyDtoDAsync_v2: 'int cuMemcpyDtoDAsync_v2(uint64_t dst, uint64_t src, size_t bytes, void *stream)',
  cuMemcpyPeer: 'int cuMemcpyPeer(uint64_t dst, void *dstCtx, uint64_t src, void *srcCtx, size_t bytes)',
  cuMemcpyPeerAsync:
    'int cuMemcpyPeerAsync(uint64_t dst, void *dstCtx, uint64_t src, void *srcCtx, size_t bytes, void *stream)',
  cuMemsetD8_v2: 'int cuMemsetD8_v2(uint64_t dst, uint8_t value, size_t count)',
  cuMemsetD16_v2: 'int cuMemsetD16_v2(uint64_t dst, uint16_t value, size_t count)',
  cuMemsetD32_v2: 'int cuMemsetD32_v2(uint64_t dst, uint32_t value, size_t count)',
  cuMemsetD8Async: 'int cuMemsetD8Async(uint64_t dst, uint8_t value, size_t count, void *stream)',
  cuMemsetD16Async: 'int cuMemsetD16Async(uint64_t dst, uint16_t value, size_t count, void *stream)',
  cuMemsetD32Async: 'int cuMemsetD32Async(uint64_t dst, uint32_t value, size_t count, void *stream)',

  // modules and functions
  cuModuleLoadData: 'int cuModuleLoadData(_Out_ void **module, void *image)',
  cuModuleLoadDataEx:
    'int cuModuleLoadDataEx(_Out_ void **module, void *image, unsigned int numOptions, void *options, void *optionValues)',
  cuModuleGetFunction: 'int cuModuleGetFunction(_Out_ void **fn, void *module, const char *name)',
  cuModuleGetGlobal_v2: 'int cuModuleGetGlobal_v2(_Out_ uint64_t *dptr, _Out_ size_t *bytes, void *module, const char *name)',
  cuModuleUnload: 'int cuModuleUnload(void *module)',
  cuFuncGetAttribute: 'int cuFuncGetAttribute(_Out_ int *value, int attrib, void *fn)',
  cuFuncSetAttribute: 'int cuFuncSetAttribute(void *fn, int attrib, int value)',
  cuFuncSetCacheConfig: 'int cuFuncSetCacheConfig(void *fn, int config)',
  cuFuncGetParamInfo: 'int cuFuncGetParamInfo(void *fn, size_t index, _Out_ size_t *offset, _Out_ size_t *size)',
  cuFuncGetName: 'int cuFuncGetName(_Out_ const char **name, void *fn)',

  // launches
  cuLaunchKernel:
    'int cuLaunchKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int sharedMemBytes, void *stream, void *params, void *extra)',
  cuLaunchCooperativeKernel:
    'int cuLaunchCooperativeKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int sharedMemBytes, void *stream, void *params)',
  cuLaunchKernelEx: 'int cuLaunchKernelEx(void *config, void *fn, void *params, void *extra)',

  // occupancy
  cuOccupancyMaxActiveBlocksPerMultiprocessor:
    'int cuOccupancyMaxActiveBlocksPerMultiprocessor(_Out_ int *blocks, void *fn, int blockSize, size_t dynamicSmem)',
  cuOccupancyMaxPotentialBlockSize:
    'int cuOccupancyMaxPotentialBlockSize(_Out_ int *minGridSize, _Out_ int *blockSize, void *fn, void *smemCallback, size_t dynamicSmem, int blockSizeLimit)',
  cuOccupancyAvailableDynamicSMemPerBlock:
    'int cuOccupancyAvailableDynamicSMemPerBlock(_Out_ size_t *bytes, void *fn, int numBlocks, int blockSize)',
  cuOccupancyMaxActiveClusters: 'int cuOccupancyMaxActiveClusters(_Out_ int *numClusters, void *fn, void *config)',

  // stream capture and graphs
  cuStreamBeginCapture_v2: 'int cuStreamBeginCapture_v2(void *stream, int mode)',
  cuStreamEndCapture: 'int cuStreamEndCapture(void *stream, _Out_ void **graph)',
  cuStreamIsCapturing: 'int cuStreamIsCapturing(void *stream, _Out_ int *status)',
  cuGraphInstantiateWithFlags: 'int cuGraphInstantiateWithFlags(_Out_ void **exec, void *graph, uint64_t flags)',
  cuGraphLaunch: 'int cuGraphLaunch(void *exec, void *stream)',
  cuGraphUpload: 'int cuGraphUpload(void *exec, void *stream)',
  cuGraphExecDestroy: 'int cuGraphExecDestroy(void *exec)',
  cuGraphDestroy: 'int cuGraphDestroy(void *graph)',
  cuGraphGetNodes: 'int cuGraphGetNodes(void *graph, void *nodes, _Inout_ size_t *count)',
});

/** The name of a bound driver entry point. */
export type CudaFunctionName = keyof typeof cuda;
