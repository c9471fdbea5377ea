/**
 * Typed errors shared by every tier. Each carries a stable `code` string so
 * callers can branch without `instanceof` across package copies.
 */

/** Base class of every error this library throws on purpose. */
export class GpuError extends Error {
  /** Stable machine-readable identifier of the error kind. */
  readonly code: string;
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One place a shared library was looked for, and why it did not load. */
export interface LibraryAttempt {
  path: string;
  error: string;
}

/** No candidate path of a shared library loaded. Lists every path tried. */
export class LibraryNotFoundError extends GpuError {
  readonly library: string;
  readonly attempts: readonly LibraryAttempt[];
  constructor(library: string, attempts: readonly LibraryAttempt[], hint?: string) {
    const tried = attempts.map((a) => `\n  - ${a.path}: ${a.error}`).join('');
    super(
      'LIBRARY_NOT_FOUND',
      `Could not load ${library}. Tried:${tried || ' (no candidates)'}${hint ? `\n${hint}` : ''}`,
    );
    this.library = library;
    this.attempts = attempts;
  }
}

/** A library loaded but lacks an entry point (an older driver, say). */
export class MissingSymbolError extends GpuError {
  readonly library: string;
  readonly symbol: string;
  constructor(library: string, symbol: string, cause?: unknown) {
    super(
      'MISSING_SYMBOL',
      `${library} has no entry point ${symbol} (the installed version is probably too old for this call)`,
      { cause },
    );
    this.library = library;
    this.symbol = symbol;
  }
}

/** An argument was refused before it reached the driver or compiler. */
export class InvalidArgumentError extends GpuError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message);
  }
}

/** An object was used after `dispose()`. */
export class DisposedError extends GpuError {
  constructor(what: string) {
    super('DISPOSED', `${what} has been disposed`);
  }
}

/** An allocation failed even after the cache was emptied. */
export class OutOfMemoryError extends GpuError {
  readonly requestedBytes: number;
  readonly inUseBytes: number;
  readonly limitBytes: number | undefined;
  readonly deviceFreeBytes: number | undefined;
  readonly deviceTotalBytes: number | undefined;
  /** Tensor allocations of the GpuCompute still live when it failed (set by GpuCompute; undefined from the raw tiers). */
  liveTensors: number | undefined = undefined;
  constructor(details: {
    requestedBytes: number;
    inUseBytes: number;
    limitBytes?: number;
    deviceFreeBytes?: number;
    deviceTotalBytes?: number;
  }) {
    super(
      'OUT_OF_MEMORY',
      `Out of device memory: requested ${formatBytes(details.requestedBytes)}, in use ${formatBytes(details.inUseBytes)}, ` +
        `limit ${details.limitBytes === undefined ? 'none' : formatBytes(details.limitBytes)}, ` +
        `device free ${formatBytes(details.deviceFreeBytes)} of ${formatBytes(details.deviceTotalBytes)}`,
    );
    this.requestedBytes = details.requestedBytes;
    this.inUseBytes = details.inUseBytes;
    this.limitBytes = details.limitBytes;
    this.deviceFreeBytes = details.deviceFreeBytes;
    this.deviceTotalBytes = details.deviceTotalBytes;
  }
}

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * A byte count in the largest binary unit it reaches, to three significant
 * digits ("4.00 KiB", "1.50 MiB", "16.0 MiB", "512 MiB"), whole bytes below
 * 1 KiB, and "unknown" for a figure that is missing or not a number.
 */
function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return 'unknown';
  if (Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const magnitude = Math.abs(value);
  return `${value.toFixed(magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2)} ${BYTE_UNITS[unit]}`;
}

/** An op has no implementation on the backend in use (its kernels rely on features that platform lacks). */
export class UnsupportedOperationError extends GpuError {
  readonly operation: string;
  readonly backend: string;
  constructor(operation: string, backend: string, reason: string) {
    super('UNSUPPORTED_OPERATION', `${operation} is not available on the ${backend} backend: ${reason}`);
    this.operation = operation;
    this.backend = backend;
  }
}

/**
 * Work that a captured graph cannot hold was asked for while `gpu.capture` recorded: a host read
 * or write, a synchronisation, a nested capture, or a replay with inputs of other shapes.
 */
export class CaptureError extends GpuError {
  constructor(message: string) {
    super('CAPTURE', message);
  }
}
