import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';
import { toolkitLibraryCandidates } from '../ffi/toolkit-library.js';

/**
 * Where NVRTC is looked for, in this order: `$CUDA_HOME`, `$CUDA_PATH`, then
 * newest major version first, the dynamic loader's own search (bare soname:
 * ldconfig, LD_LIBRARY_PATH) and `/usr/local/cuda`, then NVIDIA's pip wheels in
 * the usual site-packages folders. `GPUCOMPUTE_LIBNVRTC` replaces the whole list.
 */
export const nvrtcSpec: LibrarySpec = {
  name: 'NVRTC (libnvrtc)',
  envVar: 'GPUCOMPUTE_LIBNVRTC',
  candidates: () =>
    toolkitLibraryCandidates({
      // CUDA 11.2 to 11.8 all share `libnvrtc.so.11.2`.
      sonames: ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2', 'libnvrtc.so'],
      soPattern: /^libnvrtc\.so\.\d+(\.\d+)*$/,
      dllPattern: /^nvrtc64_\d+(_\d+)?\.dll$/i,
      dllNames: ['nvrtc64_130_0.dll', 'nvrtc64_120_0.dll', 'nvrtc64_112_0.dll'],
      wheelDirs: [join('nvidia', 'cu13'), join('nvidia', 'cuda_nvrtc')],
    }),
  hint:
    'NVRTC ships with the CUDA toolkit (lib64/libnvrtc.so.*), in the pip wheel nvidia-cuda-nvrtc, ' +
    'and in Debian as libnvrtc11.2 (non-free).',
};

/** Loads NVRTC (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openNvrtc(): LoadedLibrary {
  return openLibrary(nvrtcSpec);
}
