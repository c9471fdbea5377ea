/**
 * The few HIP runtime calls needed to say whether an AMD GPU
 * answers: init, device count, versions, and per device its name and memory.
 * `hipGetDeviceProperties` is left out on purpose: its struct layout changes
 * between ROCm releases, and a wrong layout would read garbage.
 */
import { openLibrary, type LibrarySpec, type LoadedLibrary } from '../ffi/library.js';
import { lazyFunctions } from '../ffi/lazy-functions.js';

/** Where the HIP runtime (libamdhip64, which also holds hiprtc) is looked for. */
export const hipRuntimeSpec: LibrarySpec = {
  name: 'the HIP runtime (libamdhip64)',
  envVar: 'GPUCOMPUTE_LIBHIP',
  candidates: () =>
    process.platform === 'win32'
      ? ['amdhip64_6.dll', 'amdhip64.dll']
      : [
          'libamdhip64.so.6',
          'libamdhip64.so.5',
          'libamdhip64.so',
          '/opt/rocm/lib/libamdhip64.so.6',
          '/opt/rocm/lib/libamdhip64.so.5',
          '/opt/rocm/lib/libamdhip64.so',
        ],
  hint: 'The HIP runtime ships with ROCm (/opt/rocm/lib) and in Debian as libamdhip64-5.',
};

/** Loads the HIP runtime (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openHipRuntime(): LoadedLibrary {
  return openLibrary(hipRuntimeSpec);
}

/** The bound HIP entry points (resolved on first use). */
export const hipProbeFunctions = lazyFunctions(openHipRuntime, {
  hipInit: 'int hipInit(unsigned int flags)',
  hipGetDeviceCount: 'int hipGetDeviceCount(_Out_ int *count)',
  hipDriverGetVersion: 'int hipDriverGetVersion(_Out_ int *version)',
  hipRuntimeGetVersion: 'int hipRuntimeGetVersion(_Out_ int *version)',
  hipDeviceGet: 'int hipDeviceGet(_Out_ int *device, int ordinal)',
  hipDeviceGetName: 'int hipDeviceGetName(_Out_ char *name, int len, int device)',
  hipDeviceTotalMem: 'int hipDeviceTotalMem(_Out_ size_t *bytes, int device)',
  // HIP's hipGetErrorString returns the name too ("hipErrorNoDevice"), so one of them is enough.
  hipGetErrorName: 'const char *hipGetErrorName(int error)',
});

/** HIP_VERSION-style integers (major * 10^7 + minor * 10^5 + patch) as `major.minor.patch`. */
export function formatHipVersion(version: number): string {
  const major = Math.floor(version / 10_000_000);
  const minor = Math.floor((version % 10_000_000) / 100_000);
  const patch = version % 100_000;
  return `${major}.${minor}.${patch}`;
}
