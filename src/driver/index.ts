/**
 * The CUDA driver: the safe tier (owning objects), the checked raw tier as
 * the `cu` namespace, the unchecked bindings, enums and errors.
 *
 * @module gpucompute/driver
 */
export { Context, type ContextDevice } from './context.js';
export { copyByteLength } from './copy-range.js';
export { ContextUnusableError, CudaError, isStickyResult } from './cuda-error.js';
export { Device, formatUuid, initDriver, type ComputeCapability, type DeviceProperties } from './device.js';
export { DeviceAttribute } from './generated/device-attribute.js';
export { DeviceBuffer, fillPattern, type BufferOwner, type FillType } from './device-buffer.js';
export * from './generated/enums.js';
export { Event, type EventOptions, type EventStream } from './event.js';
export { Graph, GraphExec, type CaptureOptions } from './graph.js';
export {
  Kernel,
  type BoundKernel,
  type BoundValue,
  type KernelAttributes,
  type KernelModule,
  type KernelOccupancy,
  type LaunchOptions,
} from './kernel.js';
export {
  resolveClusterDims,
  resolveLaunchDims,
  type DeviceLaunchLimits,
  type Dim3,
  type KernelLaunchLimits,
} from './launch-config.js';
export { libcudaSpec, openLibcuda } from './library.js';
export { Module, type ModuleLoadOptions } from './module.js';
export { PinnedBuffer, type PinnedBufferOptions, type TypedArrayConstructor } from './pinned-buffer.js';
export { CudaResult, cudaResultName } from './result-code.js';
export { Stream, type StreamOptions } from './stream.js';
export { cuda as bindings } from './bindings.js';
export * as cu from './raw/index.js';
export {
  ArgPack,
  BytesArg,
  ScalarArg,
  bytes,
  f32,
  f64,
  i32,
  i64,
  ptr,
  u32,
  u64,
  type ArgType,
  type DevicePointerLike,
  type KernelArg,
  type ScalarType,
} from '../ffi/kernel-args.js';
export type { NativeFunction } from '../ffi/lazy-functions.js';
export type { LibrarySpec, LoadedLibrary, NativeLibrary } from '../ffi/library.js';
