import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Everything that decides what NVRTC produces for a program. */
export interface KernelCacheKeyInputs {
  readonly source: string;
  /** The program's file name (it reaches `__FILE__` and diagnostics). */
  readonly name: string;
  /** In-memory headers by include name; order does not matter. */
  readonly headers: Readonly<Record<string, string>>;
  /** The full NVRTC option list, arch, defines and include paths included. */
  readonly options: readonly string[];
  readonly arch: string;
  readonly output: string;
  /** NVRTC's version, e.g. `11.8`. */
  readonly nvrtcVersion: string;
  readonly nameExpressions: readonly string[];
  /** Identity of the automatically added CUDA headers (folder and CUDA version), or '' when none. */
  readonly cudaHeaders: string;
  /** {@link fingerprintIncludeDirs} of the user's include paths. */
  readonly includeFingerprint: string;
}

/** Bumped when the key's recipe or the entry layout changes, so old entries stop matching. */
const KEY_SCHEMA = 'gpucompute-kernel-v1';

/**
 * A sha256 (hex) over every input, each field tagged and length-prefixed so
 * no two different inputs can produce the same byte stream.
 */
export function kernelCacheKey(inputs: KernelCacheKeyInputs): string {
  const hash = createHash('sha256');
  const field = (tag: string, value: string) => {
    hash.update(`${tag}:${Buffer.byteLength(value)}:`);
    hash.update(value);
  };
  field('schema', KEY_SCHEMA);
  field('source', inputs.source);
  field('name', inputs.name);
  const headerNames = Object.keys(inputs.headers).sort();
  field('headers', String(headerNames.length));
  for (const name of headerNames) {
    field('header-name', name);
    field('header-source', inputs.headers[name]!);
  }
  field('options', String(inputs.options.length));
  for (const option of inputs.options) field('option', option);
  field('arch', inputs.arch);
  field('output', inputs.output);
  field('nvrtc', inputs.nvrtcVersion);
  field('names', String(inputs.nameExpressions.length));
  for (const expression of inputs.nameExpressions) field('name-expression', expression);
  field('cuda-headers', inputs.cudaHeaders);
  field('include-fingerprint', inputs.includeFingerprint);
  return hash.digest('hex');
}

/** Above this many files and folders in the user's include folders, a program is not cached (fingerprinting would cost too much). */
export const MAX_FINGERPRINTED_ENTRIES = 2048;

/**
 * Identifies the current contents of include folders by every file's relative
 * path, size and modification time, so editing a header a program includes
 * changes its key. NVRTC does not report which headers a compile read, hence
 * the whole folders. Returns `undefined` when they hold more than
 * {@link MAX_FINGERPRINTED_ENTRIES} files and folders: such programs bypass the cache
 * rather than risk a stale hit.
 */
export function fingerprintIncludeDirs(dirs: readonly string[]): string | undefined {
  if (dirs.length === 0) return '';
  const hash = createHash('sha256');
  let entriesSeen = 0;
  const walk = (root: string, relative: string): boolean => {
    let entries;
    try {
      entries = readdirSync(join(root, relative), { withFileTypes: true });
    } catch {
      hash.update(`missing:${relative}\n`);
      return true;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(relative, entry.name);
      const stat = statSync(join(root, path), { throwIfNoEntry: false });
      if (!stat) continue;
      // Folders count too, which also bounds a walk caught in a symlink loop.
      if (++entriesSeen > MAX_FINGERPRINTED_ENTRIES) return false;
      if (stat.isDirectory()) {
        if (!walk(root, path)) return false;
      } else {
        hash.update(`${path}:${stat.size}:${stat.mtimeMs}\n`);
      }
    }
    return true;
  };
  for (const dir of dirs) {
    hash.update(`dir:${dir}\n`);
    if (!walk(dir, '')) return undefined;
  }
  return hash.digest('hex');
}
