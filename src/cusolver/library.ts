import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';
import { toolkitLibraryCandidates } from '../ffi/toolkit-library.js';

/**
 * Where cuSOLVER is looked for: `$CUDA_HOME` and `$CUDA_PATH`, then per major version the
 * loader's own search (bare soname) and `/usr/local/cuda`, then NVIDIA's pip wheels.
 * `GPUCOMPUTE_LIBCUSOLVER` replaces the whole list. cuSOLVER 12 ships with CUDA 13 and
 * cuSOLVER 11 with CUDA 12; the dense entry points used here are the same in both.
 */
export const cusolverSpec: LibrarySpec = {
  name: 'cuSOLVER (libcusolver)',
  envVar: 'GPUCOMPUTE_LIBCUSOLVER',
  candidates: () =>
    toolkitLibraryCandidates({
      sonames: ['libcusolver.so.12', 'libcusolver.so.11', 'libcusolver.so'],
      soPattern: /^libcusolver\.so\.\d+(\.\d+)*$/,
      dllPattern: /^cusolver64_\d+\.dll$/i,
      dllNames: ['cusolver64_12.dll', 'cusolver64_11.dll'],
      wheelDirs: [join('nvidia', 'cu13'), join('nvidia', 'cusolver')],
    }),
  hint: 'cuSOLVER ships with the CUDA toolkit (lib64/libcusolver.so.*) and in the pip wheels nvidia-cusolver / nvidia-cusolver-cu12.',
};

/** Loads cuSOLVER (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openCusolver(): LoadedLibrary {
  return openLibrary(cusolverSpec);
}
