/**
 * gpucompute: CUDA from Node.js.
 *
 * - Raw and safe CUDA driver tiers (`Device`, `Stream`, `DeviceBuffer`, `Kernel`, …; the checked
 *   C API as the `cu` namespace).
 * - NVRTC (`Program`, `compileProgram`, the on-disk `KernelCache`; the checked C API as `nvrtc`).
 * - HIP runtime and hiprtc, raw (`hipRaw`, `hiprtc`) and safe (`HipDevice`, `HipStream`, `HipProgram`, …).
 * - NCCL, raw (`ncclRaw`) and safe (`NcclCommunicator`, `NcclUniqueId`, `ncclGroup`), for multi-GPU collectives.
 * - GpuCompute: tensors and ops on the best local backend, with a CPU fallback.
 *
 * @module gpucompute
 */
export * from './errors.js';
export * from './driver/index.js';
export * from './nvrtc/index.js';
export * from './hip/index.js';
export * from './nccl/index.js';
export * from './compute/index.js';
