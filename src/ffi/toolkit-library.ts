import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pythonSitePackages } from './python-sites.js';

/** Where one CUDA toolkit library (NVRTC, cuBLAS, ...) may live, by file name. */
export interface ToolkitLibraryNames {
  /** Sonames, newest major first, ending with the unversioned name. */
  readonly sonames: readonly string[];
  /** The versioned `.so` files to list in wheel folders, e.g. `/^libnvrtc\.so\.\d+(\.\d+)*$/`. */
  readonly soPattern: RegExp;
  /** Windows DLL names to list in `bin` folders, e.g. `/^cublas64_\d+\.dll$/i`. */
  readonly dllPattern: RegExp;
  /** Bare DLL names for the DLL search path (a toolkit on PATH), newest first. */
  readonly dllNames: readonly string[];
  /** Folders of NVIDIA's pip wheels holding the library, relative to site-packages (`nvidia/cu13`, ...). */
  readonly wheelDirs: readonly string[];
}

/**
 * Candidate paths of a CUDA toolkit library, most preferred first: `$CUDA_HOME`, `$CUDA_PATH`,
 * then per major version the loader's own search (bare soname: ldconfig, LD_LIBRARY_PATH) and
 * `/usr/local/cuda` (so a toolkit off the loader's path still beats an older library on it),
 * then NVIDIA's pip wheels. On Windows the DLLs carry their version in their name, so the
 * toolkit's `bin` folders (`bin\x64` since CUDA 13) are listed rather than guessed.
 */
export function toolkitLibraryCandidates(names: ToolkitLibraryNames): string[] {
  const roots = [process.env.CUDA_HOME, process.env.CUDA_PATH].filter((root): root is string => !!root);
  const wheelDir = (leaf: string) => pythonSitePackages().flatMap((site) => names.wheelDirs.map((d) => join(site, d, leaf)));
  if (process.platform === 'win32') {
    const binDirs = roots.flatMap((root) => [join(root, 'bin', 'x64'), join(root, 'bin')]);
    return [
      ...binDirs.flatMap((dir) => listFiles(dir, names.dllPattern)),
      ...names.dllNames,
      ...wheelDir('bin').flatMap((dir) => listFiles(dir, names.dllPattern)),
    ];
  }
  return [
    ...roots.flatMap((root) => [join(root, 'lib64'), join(root, 'lib')]).flatMap((dir) => names.sonames.map((name) => join(dir, name))),
    ...names.sonames.flatMap((name) => [name, join('/usr/local/cuda/lib64', name), join('/usr/local/cuda/lib', name)]),
    ...wheelDir('lib').flatMap((dir) => listFiles(dir, names.soPattern)),
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
