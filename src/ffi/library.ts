import koffi from 'koffi';
import { existsSync } from 'node:fs';
import { LibraryNotFoundError, type LibraryAttempt } from '../errors.js';

/** A loaded shared library, as koffi returns it. */
export type NativeLibrary = ReturnType<typeof koffi.load>;

/** How to find one shared library. */
export interface LibrarySpec {
  /** Human name used in errors, e.g. "the CUDA driver (libcuda)". */
  readonly name: string;
  /** Environment variable holding an explicit path; tried first and alone when set. */
  readonly envVar: string;
  /** Candidate paths or bare sonames, most preferred first. Evaluated at load time. */
  readonly candidates: () => string[];
  /** Extra sentence appended to the not-found error. */
  readonly hint?: string;
  /**
   * Vets a candidate that loaded (and may prepare it for use): returns why it is refused, and the
   * search goes on, or undefined to take it. A refused library stays mapped: unloading one whose
   * constructors started threads (a BLAS) is not safe.
   */
  readonly check?: (lib: NativeLibrary, path: string) => string | undefined;
}

/** A shared library that loaded, and from where. */
export interface LoadedLibrary {
  /** koffi's handle, to declare functions on. */
  readonly lib: NativeLibrary;
  /** The candidate that loaded. */
  readonly path: string;
  /** Candidates tried before it, in order, with why each did not load or was refused. */
  readonly tried: readonly LibraryAttempt[];
}

const loaded = new Map<LibrarySpec, LoadedLibrary>();
const failed = new Map<LibrarySpec, LibraryNotFoundError>();

/**
 * Loads the first candidate of `spec` that the dynamic loader accepts and
 * caches it (and a failure) for the life of the process. When the spec's
 * environment variable is set, only that path is tried.
 */
export function openLibrary(spec: LibrarySpec): LoadedLibrary {
  const hit = loaded.get(spec);
  if (hit) return hit;
  const miss = failed.get(spec);
  if (miss) throw miss;
  const override = process.env[spec.envVar];
  const candidates = override ? [override] : dedupe(spec.candidates());
  const attempts: LibraryAttempt[] = [];
  for (const path of candidates) {
    // Absolute paths that do not exist are reported without asking the loader.
    if (path.includes('/') && !existsSync(path) && !inDyldSharedCache(path)) {
      attempts.push({ path, error: 'no such file' });
      continue;
    }
    let lib: NativeLibrary;
    try {
      lib = koffi.load(path);
    } catch (err) {
      attempts.push({ path, error: err instanceof Error ? err.message : String(err) });
      continue;
    }
    const refusal = spec.check?.(lib, path);
    if (refusal !== undefined) {
      attempts.push({ path, error: refusal });
      continue;
    }
    const result = { lib, path, tried: attempts };
    loaded.set(spec, result);
    return result;
  }
  const hint = `${override ? `(${spec.envVar} is set, so only it was tried.) ` : `Set ${spec.envVar} to the library's path to override. `}${spec.hint ?? ''}`.trim();
  const error = new LibraryNotFoundError(spec.name, attempts, hint);
  failed.set(spec, error);
  return failedLoad(error);
}

/** Forgets cached load results (tests change env overrides between cases). */
export function resetLibraryCache(): void {
  loaded.clear();
  failed.clear();
}

/**
 * macOS 11+ keeps its system libraries and frameworks only in the dyld shared cache: the file
 * (e.g. /System/Library/Frameworks/Accelerate.framework/Accelerate) is absent from disk, yet
 * dlopen finds it, so such paths go to the loader.
 */
function inDyldSharedCache(path: string): boolean {
  return process.platform === 'darwin' && (path.startsWith('/System/Library/') || path.startsWith('/usr/lib/'));
}

function failedLoad(error: LibraryNotFoundError): never {
  throw error;
}

function dedupe(paths: string[]): string[] {
  return [...new Set(paths.filter((p) => p.length > 0))];
}
