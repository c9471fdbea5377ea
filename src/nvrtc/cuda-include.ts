import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pythonSitePackages } from '../ffi/python-sites.js';

/**
 * Finds the CUDA toolkit headers (`cuda_fp16.h`, `cuda_bf16.h`, and on CUDA 13
 * the CCCL headers they include) so programs can include them without naming
 * a folder.
 *
 * The headers are used only when their CUDA major version equals NVRTC's:
 * headers of another release are written for that release's compiler (CUDA
 * 13's need CCCL 3 and C++17 features NVRTC 11.8 lacks), and mixing them breaks
 * compiles in confusing ways. A folder of another major is reported in
 * {@link CudaIncludeSearch.rejected} and left out; pass it in `includePaths`
 * yourself to override.
 */
export interface CudaIncludeSearch {
  /** Include folders to pass to NVRTC: the chosen `include` and its `cccl` folder when present; empty when none matched. */
  readonly paths: readonly string[];
  /** `CUDA_VERSION` of the chosen headers (e.g. 13000), when one was chosen. */
  readonly cudaVersion: number | undefined;
  /** Folders holding CUDA headers that were not chosen, and why. */
  readonly rejected: readonly { readonly dir: string; readonly reason: string }[];
}

/**
 * Folders that may hold the CUDA headers, most preferred first: `$CUDA_HOME`,
 * `$CUDA_PATH`, `/usr/local/cuda`, then NVIDIA's pip wheels (`nvidia/cu13` for
 * CUDA 13, `nvidia/cuda_runtime` for CUDA 12 and 11). Lazy: the wheel folders
 * are only looked for once the toolkit folders have been passed over, since
 * scanning Python's site-packages costs milliseconds a process.
 */
export function* cudaIncludeCandidates(): Generator<string> {
  const roots = [process.env.CUDA_HOME, process.env.CUDA_PATH].filter((r): r is string => !!r);
  if (process.platform !== 'win32') roots.push('/usr/local/cuda');
  const seen = new Set<string>();
  const fresh = (dir: string) => !seen.has(dir) && !!seen.add(dir);
  for (const root of roots) {
    const dir = join(root, 'include');
    if (fresh(dir)) yield dir;
  }
  for (const site of pythonSitePackages()) {
    for (const dir of [join(site, 'nvidia', 'cu13', 'include'), join(site, 'nvidia', 'cuda_runtime', 'include')]) {
      if (fresh(dir)) yield dir;
    }
  }
}

/**
 * Picks the first candidate folder that holds `cuda_fp16.h` and whose CUDA
 * major version is `nvrtcMajor`.
 */
export function findCudaIncludes(nvrtcMajor: number, candidates: Iterable<string> = cudaIncludeCandidates()): CudaIncludeSearch {
  const rejected: { dir: string; reason: string }[] = [];
  for (const dir of candidates) {
    if (!existsSync(join(dir, 'cuda_fp16.h'))) continue;
    const cudaVersion = readCudaVersion(dir);
    if (cudaVersion === undefined) {
      rejected.push({ dir, reason: 'its CUDA version could not be read' });
      continue;
    }
    const headerMajor = Math.floor(cudaVersion / 1000);
    if (headerMajor !== nvrtcMajor) {
      rejected.push({ dir, reason: `headers are CUDA ${formatVersion(cudaVersion)}, NVRTC is ${nvrtcMajor}.x` });
      continue;
    }
    const cccl = join(dir, 'cccl');
    return { paths: existsSync(cccl) ? [dir, cccl] : [dir], cudaVersion, rejected };
  }
  return { paths: [], cudaVersion: undefined, rejected };
}

const memo = new Map<string, CudaIncludeSearch>();

/**
 * {@link findCudaIncludes} over the default candidates, remembered for the
 * process (per NVRTC major and `CUDA_HOME`/`CUDA_PATH`), since compiles ask
 * for it every time.
 */
export function autoCudaIncludes(nvrtcMajor: number): CudaIncludeSearch {
  const key = `${nvrtcMajor}\0${process.env.CUDA_HOME ?? ''}\0${process.env.CUDA_PATH ?? ''}`;
  let found = memo.get(key);
  if (!found) {
    found = findCudaIncludes(nvrtcMajor);
    memo.set(key, found);
  }
  return found;
}

/**
 * The CUDA version of an include folder, as `CUDA_VERSION` spells it (13000 for
 * 13.0): from `cuda_runtime_api.h` (shipped next to `cuda_fp16.h` in the
 * toolkit and the runtime wheels), else `cuda.h`, else the toolkit's
 * `version.json` one folder up.
 */
export function readCudaVersion(includeDir: string): number | undefined {
  const fromHeader = (file: string, macro: string) => {
    const head = readHead(join(includeDir, file));
    const match = head && new RegExp(`^\\s*#\\s*define\\s+${macro}\\s+(\\d+)`, 'm').exec(head);
    return match ? Number(match[1]) : undefined;
  };
  return (
    fromHeader('cuda_runtime_api.h', 'CUDART_VERSION') ??
    fromHeader('cuda.h', 'CUDA_VERSION') ??
    versionFromJson(join(dirname(includeDir), 'version.json'))
  );
}

function versionFromJson(path: string): number | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { cuda?: { version?: string } };
    const match = /^(\d+)\.(\d+)/.exec(parsed.cuda?.version ?? '');
    return match ? Number(match[1]) * 1000 + Number(match[2]) * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** The first 64 KiB of a file (the version macros sit near the top), or undefined if unreadable. */
function readHead(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(64 * 1024);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.toString('latin1', 0, length);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function formatVersion(cudaVersion: number): string {
  return `${Math.floor(cudaVersion / 1000)}.${(cudaVersion % 1000) / 10}`;
}
