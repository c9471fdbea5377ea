import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';
import { toolkitLibraryCandidates } from '../ffi/toolkit-library.js';

/**
 * Where cuBLAS is looked for: `$CUDA_HOME` and `$CUDA_PATH`, then per major version the
 * loader's own search (bare soname) and `/usr/local/cuda`, then NVIDIA's pip wheels.
 * `GPUCOMPUTE_LIBCUBLAS` replaces the whole list. cuBLASLt, which cuBLAS needs, is found
 * by the loader next to it (both ship together and libcublas's RUNPATH names its folder).
 */
export const cublasSpec: LibrarySpec = {
  name: 'cuBLAS (libcublas)',
  envVar: 'GPUCOMPUTE_LIBCUBLAS',
  candidates: () =>
    toolkitLibraryCandidates({
      // Its API v2 is the same in 12 and 13.
      sonames: ['libcublas.so.13', 'libcublas.so.12', 'libcublas.so'],
      soPattern: /^libcublas\.so\.\d+(\.\d+)*$/,
      dllPattern: /^cublas64_\d+\.dll$/i,
      dllNames: ['cublas64_13.dll', 'cublas64_12.dll'],
      wheelDirs: [join('nvidia', 'cu13'), join('nvidia', 'cublas')],
    }),
  hint: 'cuBLAS ships with the CUDA toolkit (lib64/libcublas.so.*) and in the pip wheels nvidia-cublas / nvidia-cublas-cu12.',
};

/** Loads cuBLAS (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openCublas(): LoadedLibrary {
  return openLibrary(cublasSpec);
}
