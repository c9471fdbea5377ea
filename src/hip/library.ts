import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';

/**
 * Folders a ROCm installation keeps its libraries in: `$ROCM_PATH/lib`, `$HIP_PATH/lib`,
 * then `/opt/rocm/lib`. Each is tried after the loader's own search (bare sonames), so a
 * ROCm on LD_LIBRARY_PATH or in ldconfig wins, as with CUDA.
 */
function rocmLibDirs(): string[] {
  const roots = [process.env.ROCM_PATH, process.env.HIP_PATH].filter((root): root is string => !!root);
  return [...roots.map((root) => join(root, 'lib')), '/opt/rocm/lib'];
}

function candidates(sonames: readonly string[], dlls: readonly string[]): string[] {
  if (process.platform === 'win32') {
    const roots = [process.env.HIP_PATH, process.env.ROCM_PATH].filter((root): root is string => !!root);
    return [...dlls, ...roots.flatMap((root) => dlls.map((dll) => join(root, 'bin', dll)))];
  }
  return [...sonames, ...rocmLibDirs().flatMap((dir) => sonames.map((name) => join(dir, name)))];
}

/** Where the HIP runtime (libamdhip64) is looked for; `GPUCOMPUTE_LIBHIP` replaces the list. */
export const hipRuntimeSpec: LibrarySpec = {
  name: 'the HIP runtime (libamdhip64)',
  envVar: 'GPUCOMPUTE_LIBHIP',
  candidates: () =>
    candidates(['libamdhip64.so.6', 'libamdhip64.so.5', 'libamdhip64.so'], ['amdhip64_6.dll', 'amdhip64.dll']),
  hint: 'The HIP runtime ships with ROCm (/opt/rocm/lib, or set ROCM_PATH) and in Debian as libamdhip64-5.',
};

/**
 * Where hiprtc is looked for; `GPUCOMPUTE_LIBHIPRTC` replaces the list. ROCm 6 ships it as
 * libhiprtc.so.6; up to ROCm 5 it lives inside libamdhip64, which ends the list.
 */
export const hiprtcSpec: LibrarySpec = {
  name: 'hiprtc (libhiprtc)',
  envVar: 'GPUCOMPUTE_LIBHIPRTC',
  candidates: () =>
    candidates(
      ['libhiprtc.so.6', 'libhiprtc.so.5', 'libhiprtc.so', 'libamdhip64.so.5'],
      ['hiprtc0601.dll', 'hiprtc0600.dll', 'hiprtc0507.dll', 'hiprtc.dll'],
    ),
  hint: 'hiprtc ships with ROCm (libhiprtc.so.6; inside libamdhip64.so.5 up to ROCm 5, as in Debian\'s libamdhip64-5).',
};

/** Loads the HIP runtime (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openHipRuntime(): LoadedLibrary {
  return openLibrary(hipRuntimeSpec);
}

/** Loads hiprtc (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openHiprtc(): LoadedLibrary {
  return openLibrary(hiprtcSpec);
}
