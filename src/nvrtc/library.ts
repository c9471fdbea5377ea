import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';
import { pythonSitePackages } from './python-sites.js';

/** Sonames of NVRTC, newest first (CUDA 11.2 to 11.8 all share `libnvrtc.so.11.2`). */
const SONAMES = ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2', 'libnvrtc.so'];

/** Folders of NVIDIA's pip wheels that hold NVRTC, relative to a site-packages folder. */
const WHEEL_LIB_DIRS = [join('nvidia', 'cu13', 'lib'), join('nvidia', 'cuda_nvrtc', 'lib')];
const WHEEL_BIN_DIRS = [join('nvidia', 'cu13', 'bin'), join('nvidia', 'cuda_nvrtc', 'bin')];

/**
 * Where NVRTC is looked for, in this order: `$CUDA_HOME`, `$CUDA_PATH`, then
 * newest major version first, the dynamic loader's own search (bare soname:
 * ldconfig, LD_LIBRARY_PATH) and `/usr/local/cuda`, then NVIDIA's pip wheels in
 * the usual site-packages folders. `GPUCOMPUTE_LIBNVRTC` replaces the whole list.
 */
export const nvrtcSpec: LibrarySpec = {
  name: 'NVRTC (libnvrtc)',
  envVar: 'GPUCOMPUTE_LIBNVRTC',
  candidates: () => (process.platform === 'win32' ? windowsCandidates() : posixCandidates()),
  hint:
    'NVRTC ships with the CUDA toolkit (lib64/libnvrtc.so.*), in the pip wheel nvidia-cuda-nvrtc, ' +
    'and in Debian as libnvrtc11.2 (non-free).',
};

/** Loads NVRTC (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openNvrtc(): LoadedLibrary {
  return openLibrary(nvrtcSpec);
}

function posixCandidates(): string[] {
  const toolkitDirs = (root: string | undefined) => (root ? [join(root, 'lib64'), join(root, 'lib')] : []);
  const inDirs = (dirs: string[]) => dirs.flatMap((dir) => SONAMES.map((name) => join(dir, name)));
  const wheelDirs = pythonSitePackages().flatMap((site) => WHEEL_LIB_DIRS.map((d) => join(site, d)));
  // Per version, the loader's search and then the default toolkit folder, so a
  // toolkit that is not on the loader's path still beats an older NVRTC that is.
  const loaderThenToolkit = SONAMES.flatMap((name) => [
    name,
    join('/usr/local/cuda/lib64', name),
    join('/usr/local/cuda/lib', name),
  ]);
  return [
    ...inDirs(toolkitDirs(process.env.CUDA_HOME)),
    ...inDirs(toolkitDirs(process.env.CUDA_PATH)),
    ...loaderThenToolkit,
    ...wheelDirs.flatMap((dir) => listNvrtcFiles(dir, /^libnvrtc\.so\.\d+(\.\d+)*$/)),
  ];
}

/**
 * On Windows the DLL carries its version in its name (`nvrtc64_120_0.dll`,
 * `nvrtc64_130_0.dll`), so the toolkit's `bin` folders (CUDA 13 moved them to
 * `bin\x64`) are listed rather than guessed; bare names let the DLL search path
 * find a toolkit on PATH.
 */
function windowsCandidates(): string[] {
  const dllPattern = /^nvrtc64_\d+(_\d+)?\.dll$/i;
  const binDirs = [process.env.CUDA_HOME, process.env.CUDA_PATH]
    .filter((root): root is string => !!root)
    .flatMap((root) => [join(root, 'bin', 'x64'), join(root, 'bin')]);
  const wheelDirs = pythonSitePackages().flatMap((site) => WHEEL_BIN_DIRS.map((d) => join(site, d)));
  return [
    ...binDirs.flatMap((dir) => listNvrtcFiles(dir, dllPattern)),
    'nvrtc64_130_0.dll',
    'nvrtc64_120_0.dll',
    'nvrtc64_112_0.dll',
    ...wheelDirs.flatMap((dir) => listNvrtcFiles(dir, dllPattern)),
  ];
}

/** Files in `dir` whose name matches, highest version first; none when `dir` is missing. */
function listNvrtcFiles(dir: string, pattern: RegExp): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => pattern.test(name))
      .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}
