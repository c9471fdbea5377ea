import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';
import { toolkitLibraryCandidates } from '../ffi/toolkit-library.js';
import { applyNcclSafeEnv } from './environment.js';

/**
 * Where NCCL (`libnccl.so.2`) is looked for: `$CUDA_HOME` and `$CUDA_PATH`, the loader's own
 * search (bare soname: NVIDIA's `libnccl2` package puts it on the system path), `/usr/local/cuda`,
 * then NVIDIA's pip wheels (`nvidia-nccl-cu13` / `-cu12`: `nvidia/nccl/lib` under site-packages).
 * `GPUCOMPUTE_LIBNCCL` replaces the whole list. NCCL is Linux-only: elsewhere nothing is tried.
 */
export const ncclSpec: LibrarySpec = {
  name: 'NCCL (libnccl)',
  envVar: 'GPUCOMPUTE_LIBNCCL',
  candidates: () =>
    process.platform === 'linux'
      ? toolkitLibraryCandidates({
          // One ABI since 2.0: the soname has stayed libnccl.so.2.
          sonames: ['libnccl.so.2', 'libnccl.so'],
          soPattern: /^libnccl\.so\.\d+(\.\d+)*$/,
          dllPattern: /^$/,
          dllNames: [],
          wheelDirs: [join('nvidia', 'nccl'), join('nvidia', 'cu13')],
        })
      : [],
  hint:
    'NCCL ships as the pip wheel nvidia-nccl-cu13 (or -cu12; its nvidia/nccl/lib is searched in every site-packages found) ' +
    "and as NVIDIA's apt package libnccl2. It runs on Linux only.",
};

/**
 * Loads NCCL (cached for the process), after setting the environment NCCL must run with here
 * (`NCCL_NVLS_ENABLE=0`, see environment.ts); throws LibraryNotFoundError listing every path tried.
 */
export function openNccl(): LoadedLibrary {
  applyNcclSafeEnv();
  return openLibrary(ncclSpec);
}
