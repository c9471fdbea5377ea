import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';

/**
 * Where the CUDA driver library (libcuda / nvcuda.dll) is looked for. The
 * bare soname comes first so the system loader's own search (ldconfig,
 * LD_LIBRARY_PATH) wins; the absolute paths cover containers and WSL where
 * the loader is not configured for the driver.
 */
export const libcudaSpec: LibrarySpec = {
  name: 'the CUDA driver (libcuda)',
  envVar: 'GPUCOMPUTE_LIBCUDA',
  candidates: () =>
    process.platform === 'win32'
      ? ['nvcuda.dll', `${process.env.SystemRoot ?? 'C:\\Windows'}\\System32\\nvcuda.dll`]
      : [
          'libcuda.so.1',
          'libcuda.so',
          '/usr/lib/libcuda.so.1',
          '/usr/lib/x86_64-linux-gnu/libcuda.so.1',
          '/usr/lib/aarch64-linux-gnu/libcuda.so.1',
          '/usr/lib64/libcuda.so.1',
          '/usr/local/nvidia/lib64/libcuda.so.1',
          '/usr/lib/wsl/lib/libcuda.so.1',
        ],
  hint: 'The CUDA driver ships with the NVIDIA display driver; install it (or expose it to the container) to use CUDA.',
};

/** Loads libcuda (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openLibcuda(): LoadedLibrary {
  return openLibrary(libcudaSpec);
}
