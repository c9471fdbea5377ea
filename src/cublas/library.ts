import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';
import { pythonSitePackages } from '../nvrtc/python-sites.js';

/** Sonames of cuBLAS, newest first (its API v2 is the same in 12 and 13). */
const SONAMES = ['libcublas.so.13', 'libcublas.so.12', 'libcublas.so'];

/** Folders of NVIDIA's pip wheels that hold cuBLAS, relative to a site-packages folder. */
const WHEEL_LIB_DIRS = [join('nvidia', 'cu13', 'lib'), join('nvidia', 'cublas', 'lib')];
const WHEEL_BIN_DIRS = [join('nvidia', 'cu13', 'bin'), join('nvidia', 'cublas', 'bin')];

/**
 * Where cuBLAS is looked for: `$CUDA_HOME` and `$CUDA_PATH`, then per major version the
 * loader's own search (bare soname) and `/usr/local/cuda`, then NVIDIA's pip wheels.
 * `GPUCOMPUTE_LIBCUBLAS` replaces the whole list. cuBLASLt, which cuBLAS needs, is found
 * by the loader next to it (both ship together and libcublas's RUNPATH names its folder).
 */
export const cublasSpec: LibrarySpec = {
  name: 'cuBLAS (libcublas)',
  envVar: 'GPUCOMPUTE_LIBCUBLAS',
  candidates: () => (process.platform === 'win32' ? windowsCandidates() : posixCandidates()),
  hint: 'cuBLAS ships with the CUDA toolkit (lib64/libcublas.so.*) and in the pip wheels nvidia-cublas / nvidia-cublas-cu12.',
};

/** Loads cuBLAS (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openCublas(): LoadedLibrary {
  return openLibrary(cublasSpec);
}

function posixCandidates(): string[] {
  const toolkitDirs = (root: string | undefined) => (root ? [join(root, 'lib64'), join(root, 'lib')] : []);
  const inDirs = (dirs: string[]) => dirs.flatMap((dir) => SONAMES.map((name) => join(dir, name)));
  const wheelDirs = pythonSitePackages().flatMap((site) => WHEEL_LIB_DIRS.map((d) => join(site, d)));
  return [
    ...inDirs(toolkitDirs(process.env.CUDA_HOME)),
    ...inDirs(toolkitDirs(process.env.CUDA_PATH)),
    ...SONAMES.flatMap((name) => [name, join('/usr/local/cuda/lib64', name), join('/usr/local/cuda/lib', name)]),
    ...wheelDirs.flatMap((dir) => listFiles(dir, /^libcublas\.so\.\d+(\.\d+)*$/)),
  ];
}

/** The DLL carries its major version in its name (`cublas64_13.dll`); CUDA 13 keeps DLLs in `bin\x64`. */
function windowsCandidates(): string[] {
  const dllPattern = /^cublas64_\d+\.dll$/i;
  const binDirs = [process.env.CUDA_HOME, process.env.CUDA_PATH]
    .filter((root): root is string => !!root)
    .flatMap((root) => [join(root, 'bin', 'x64'), join(root, 'bin')]);
  const wheelDirs = pythonSitePackages().flatMap((site) => WHEEL_BIN_DIRS.map((d) => join(site, d)));
  return [
    ...binDirs.flatMap((dir) => listFiles(dir, dllPattern)),
    'cublas64_13.dll',
    'cublas64_12.dll',
    ...wheelDirs.flatMap((dir) => listFiles(dir, dllPattern)),
  ];
}

/** Files in `dir` whose name matches, highest version first; none when `dir` is missing. */
function listFiles(dir: string, pattern: RegExp): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => pattern.test(name))
      .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}
