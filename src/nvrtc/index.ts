/**
 * NVRTC: the raw tier (checked functions, as the `nvrtc` namespace), the safe
 * tier's {@link Program}, CUDA header discovery and the on-disk kernel cache.
 *
 * @module gpucompute/nvrtc
 */
export * as nvrtc from './raw.js';
export type { HeaderSource, NvrtcProgram } from './raw.js';
export { nvrtcSpec, openNvrtc } from './library.js';
export type { LibrarySpec, LoadedLibrary, NativeLibrary } from '../ffi/library.js';
export { NvrtcError, CompileError, NvrtcResult, firstDiagnostic, type Diagnostic } from './nvrtc-error.js';
export {
  parseArch,
  formatArch,
  resolveArch,
  currentDeviceArch,
  type OutputKind,
  type ParsedArch,
  type ArchContext,
  type ResolvedArch,
} from './arch.js';
export { findCudaIncludes, autoCudaIncludes, cudaIncludeCandidates, readCudaVersion, type CudaIncludeSearch } from './cuda-include.js';
export {
  KernelCache,
  defaultKernelCacheDir,
  type KernelCacheEntry,
  type KernelCacheLogger,
  type KernelCacheMode,
  type KernelCacheOptions,
  type KernelCacheStats,
} from './kernel-cache.js';
export { kernelCacheKey, fingerprintIncludeDirs, MAX_FINGERPRINTED_ENTRIES, type KernelCacheKeyInputs } from './cache-key.js';
export { Program, compileProgram, type ProgramOptions, type CompiledProgram, type CppStandard } from './program.js';
