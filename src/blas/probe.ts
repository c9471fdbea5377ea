import { LibraryNotFoundError, type LibraryAttempt } from '../errors.js';
import { openBlas } from './library.js';
import { threadControl } from './threads.js';
import { identifyBlas, type BlasVendor } from './vendor.js';

/** The CPU BLAS as `gpucompute info` reports it: plain data. */
export interface BlasProbe {
  found: boolean;
  /** The candidate that loaded; null when none did. */
  path: string | null;
  vendor: BlasVendor | null;
  /** The library's version or build string, where it has one. */
  version: string | null;
  /** Threads it uses now, read back; null when not found or when it cannot say. */
  threads: number | null;
  /** Candidates that did not load or were refused, in order, with why (all of them when none loaded). */
  tried: LibraryAttempt[];
  /** Why no BLAS is usable; null when one is. */
  reason: string | null;
}

/** Finds the CPU BLAS and describes it without changing its settings. Never throws. */
export function probeBlas(): BlasProbe {
  const probe: BlasProbe = { found: false, path: null, vendor: null, version: null, threads: null, tried: [], reason: null };
  try {
    const { lib, path, tried } = openBlas();
    probe.found = true;
    probe.path = path;
    probe.tried = [...tried];
    const { vendor, version } = identifyBlas(lib);
    probe.vendor = vendor;
    probe.version = version;
    probe.threads = threadControl(lib, vendor).get();
  } catch (err) {
    if (err instanceof LibraryNotFoundError) {
      probe.tried = [...err.attempts];
      probe.reason = `no CPU BLAS: none of ${err.attempts.length} candidates loaded and offered LP64 CBLAS`;
    } else {
      probe.reason = `the CPU BLAS${probe.path ? ` at ${probe.path}` : ''} failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  return probe;
}
