/**
 * HIP (AMD GPUs through ROCm): the safe tier (HipDevice, HipStream, HipEvent,
 * HipDeviceBuffer, HipPinnedBuffer, HipModule, HipKernel, HipProgram), the
 * checked raw tiers as the `hipRaw` and `hiprtc` namespaces, the unchecked
 * bindings, targets and errors.
 *
 * @module gpucompute/hip
 */
export { HipDevice, initHip, type HipDeviceProperties } from './device.js';
export { HipDeviceAttribute } from './generated/device-attribute.js';
export { HipEventFlags, HipFunctionAttribute, HipHostMallocFlags, HipStreamFlags } from './generated/enums.js';
export { HiprtcResult } from './generated/hiprtc-result.js';
export { HipDeviceBuffer } from './device-buffer.js';
export { HipEvent, type HipEventOptions, type HipEventStream } from './event.js';
export { checkCompilableTarget, defaultWavefrontSize, knownProcessors, parseGfxTarget, type GfxTarget } from './gfx-target.js';
export { HipError } from './hip-error.js';
export { HipProgram, type CompiledHipProgram, type HipProgramOptions } from './hip-program.js';
export { HipResult, hipResultDescription, hipResultName, type HipResultName } from './hip-result.js';
export { HiprtcCompileError, HiprtcError, firstClangDiagnostic, type HipDiagnostic } from './hiprtc-error.js';
export {
  HipKernel,
  type HipBoundKernel,
  type HipBoundValue,
  type HipKernelAttributes,
  type HipKernelModule,
  type HipLaunchOptions,
} from './kernel.js';
export { hipRuntimeSpec, hiprtcSpec, openHipRuntime, openHiprtc } from './library.js';
export type { NativeFunction } from '../ffi/lazy-functions.js';
export type { LibrarySpec, LoadedLibrary, NativeLibrary } from '../ffi/library.js';
export { HipModule } from './module.js';
export { HipPinnedBuffer } from './pinned-buffer.js';
export { HipStream, type HipStreamOptions } from './stream.js';
export { formatHipVersion } from './runtime.js';
export { hip as hipBindings } from './bindings.js';
export * as hipRaw from './raw/index.js';
export * as hiprtc from './hiprtc.js';
export type { HiprtcHeader, HiprtcProgram } from './hiprtc.js';
