/**
 * How a backend plugs in: one registration per backend folder, listed once in `backends.ts`.
 * Selection (`backend: 'auto'` and explicit kinds), `selectDevice`, `gpucompute info` and the
 * support table all read the registrations, so none of them names a backend.
 */
import { GpuError, LibraryNotFoundError, type LibraryAttempt } from '../../errors.js';
import type { LoadedLibrary } from '../../ffi/library.js';
import type { Logger } from '../core/logger.js';
import type { Backend, DeviceInfo, OptionalOp } from './backend.js';

/** What opening a backend takes. */
export interface OpenOptions {
  /** Device ordinal within the backend. */
  device: number;
  poolLimitBytes?: number;
  /** Threads a host backend computes on (the CPU's `threads` option); device backends ignore it. */
  threads?: number;
  logger: Logger;
  /**
   * Opening for `backend: 'auto'`: a backend refuses what would serve worse than the ones after
   * it (WebGPU a software adapter, which the CPU backend outruns).
   */
  auto?: boolean;
}

/** Whether a backend can run here and, when not, why; backends add what they found (libraries, calls, versions). */
export interface BackendProbe {
  available: boolean;
  /** Why it is not available; null when it is. */
  reason: string | null;
}

/** A device a probe found: its capabilities, or what could be read of them and why the rest could not. */
export type ProbedDevice =
  | { info: DeviceInfo; partial?: undefined; error?: undefined }
  | { info?: undefined; partial: Partial<DeviceInfo> & Pick<DeviceInfo, 'backend' | 'ordinal'>; error: string };

/** What to read while probing. */
export interface ProbeOptions {
  /** Read each device's free memory, which may create its context (slow on some GPUs); default true. Unread, it is NaN. */
  freeMemory?: boolean;
}

/** One backend, as the registry lists it. */
export interface BackendRegistration<K extends string = string, P extends BackendProbe = BackendProbe> {
  /** The kind users select it by, e.g. 'cuda'. */
  readonly kind: K;
  /** Its name in messages and `gpucompute info`, e.g. 'CUDA'. */
  readonly title: string;
  /** Its device is the host itself (the CPU): `gpucompute info` describes it with the backend, not in the device table. */
  readonly hostDevice?: boolean;
  /**
   * The kind of the backend it opens on one platform (Metal: WebGPU on Apple's Metal): `auto`, the
   * support table and the conformance suite leave it out, as they cover that backend.
   */
  readonly aliasOf?: string;
  /** Optional ops the backend leaves out, and why (the same reasons its instances give); read without opening it. */
  readonly unsupported: Readonly<Partial<Record<OptionalOp, string>>>;
  /** What this machine has for the backend. Never rejects. */
  probe(options?: ProbeOptions): Promise<{ backend: P; devices: ProbedDevice[] }>;
  /** `gpucompute info`'s lines for the probe: a one-line summary and indented details. */
  describe(probe: P): { summary: string; details: string[] };
  /**
   * Opens the backend on a device, loading its modules only now.
   * @throws BackendUnavailableError saying why it cannot run here (the original error as `cause`).
   */
  open(options: OpenOptions): Promise<Backend>;
}

/** The requested backend cannot run here; `reason` says why (the original error is the `cause`). */
export class BackendUnavailableError extends GpuError {
  readonly backend: string;
  readonly reason: string;
  constructor(backend: string, reason: string, cause?: unknown) {
    super('BACKEND_UNAVAILABLE', `The ${backend} backend is not available: ${reason}`, { cause });
    this.backend = backend;
    this.reason = reason;
  }
}

/** Whether a shared library loaded, from where, and every candidate that did not. */
export interface LibraryProbe {
  found: boolean;
  /** The candidate that loaded; null when none did. */
  path: string | null;
  /** Candidates that failed, in order, with the loader's error. */
  tried: LibraryAttempt[];
}

/** The outcome of one runtime call such as `cuInit`. */
export interface CallProbe {
  call: string;
  ok: boolean;
  /** The result code (0 on success). */
  code: number;
  /** Its name, e.g. `CUDA_ERROR_NO_DEVICE` or `hipErrorNoDevice`. */
  name: string;
  /** What the code means: the CUDA driver's description, or for HIP (whose runtime gives names only) this library's table. */
  description: string | null;
}

/** Loads a library through `open` and reports where from, or every path tried. */
export function probeLibrary(open: () => LoadedLibrary): LibraryProbe {
  try {
    return { found: true, path: open().path, tried: [] };
  } catch (err) {
    if (err instanceof LibraryNotFoundError) return { found: false, path: null, tried: [...err.attempts] };
    return { found: false, path: null, tried: [{ path: '(loading)', error: errorMessage(err) }] };
  }
}

/** The lines listing a library probe: where it loaded from, or every path tried. */
export function libraryLines(label: string, library: LibraryProbe): string[] {
  if (library.found) return [`${label} loaded from ${library.path}`];
  return [`${label} tried:`, ...triedLines(library, '')];
}

/** One line per path a library probe tried. */
export function triedLines(library: LibraryProbe, indent: string): string[] {
  return library.tried.map((t) => `${indent}  ${t.path}: ${t.error}`);
}

/** A failed call's line (none for a call that succeeded or was not made). */
export function callLines(call: CallProbe | null): string[] {
  if (!call || call.ok) return [];
  return [`${call.call} returned ${call.name} (${call.code})${call.description ? `: ${call.description}` : ''}`];
}

/** An error's message on one line (library-not-found messages list attempts on several). */
export function oneLine(err: unknown): string {
  return errorMessage(err).replace(/\s*\n\s*/g, ' ').trim();
}

/** An error's message. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `n noun(s)`. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
