/**
 * The typed errors of the WebGPU backend. Every one names the operation that met it and, where
 * Dawn reported the problem, carries Dawn's own message (`dawnMessage`), so a failure on a
 * user's machine can be read without a debugger.
 */
import { GpuError, OutOfMemoryError } from '../../errors.js';

/** The `webgpu` (Dawn) version this library is built and tested against. */
export const WEBGPU_PACKAGE_VERSION = '0.6.2';

/** The command that installs the optional peer dependency. */
export const WEBGPU_INSTALL_COMMAND = `npm install webgpu@${WEBGPU_PACKAGE_VERSION}`;

/** WebGPU cannot be used here: the `webgpu` package is missing, or no adapter answered. */
export class WebGpuUnavailableError extends GpuError {
  /** Why, one line (what `info` and backend selection print). */
  readonly reason: string;
  constructor(reason: string, cause?: unknown) {
    super('WEBGPU_UNAVAILABLE', `WebGPU is not available: ${reason}`, cause === undefined ? undefined : { cause });
    this.reason = reason;
  }
}

/** What kind of error Dawn reported. */
export type DawnErrorKind = 'validation' | 'internal' | 'out-of-memory' | 'unknown';

/** Dawn refused or failed an operation (a validation or internal error). */
export class WebGpuError extends GpuError {
  readonly operation: string;
  readonly kind: DawnErrorKind;
  /** Dawn's message, verbatim. */
  readonly dawnMessage: string;
  constructor(operation: string, kind: DawnErrorKind, dawnMessage: string) {
    super('WEBGPU_ERROR', `${operation}: WebGPU ${kind} error: ${dawnMessage}`);
    this.operation = operation;
    this.kind = kind;
    this.dawnMessage = dawnMessage;
  }
}

/** The device was lost (destroyed, driver reset, removed): the backend refuses all further work. */
export class WebGpuDeviceLostError extends GpuError {
  readonly operation: string;
  /** Dawn's reason: 'destroyed' or 'unknown'. */
  readonly reason: string;
  readonly dawnMessage: string;
  constructor(operation: string, reason: string, dawnMessage: string) {
    super(
      'WEBGPU_DEVICE_LOST',
      `${operation}: the WebGPU device was lost (${reason}: ${dawnMessage}); this backend accepts no more work, open a new one`,
    );
    this.operation = operation;
    this.reason = reason;
    this.dawnMessage = dawnMessage;
  }
}

/** The adapter lacks a feature or a limit that an operation needs. */
export class WebGpuCapabilityError extends GpuError {
  readonly operation: string;
  /** The feature (e.g. 'timestamp-query') or limit (e.g. 'maxStorageBufferBindingSize') that is missing or too small. */
  readonly capability: string;
  constructor(operation: string, capability: string, detail: string) {
    super('WEBGPU_CAPABILITY', `${operation}: the WebGPU adapter lacks ${capability}: ${detail}`);
    this.operation = operation;
    this.capability = capability;
  }
}

/** A synchronous wait for the GPU ran past its limit. */
export class WebGpuTimeoutError extends GpuError {
  readonly operation: string;
  readonly timeoutMs: number;
  constructor(operation: string, timeoutMs: number) {
    super(
      'WEBGPU_TIMEOUT',
      `${operation}: the GPU did not finish within ${timeoutMs} ms (raise syncTimeoutMs, or use the asynchronous toArray())`,
    );
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/** The pool could not get memory from the device, and Dawn said why. */
export class WebGpuOutOfMemoryError extends OutOfMemoryError {
  readonly dawnMessage: string;
  constructor(details: ConstructorParameters<typeof OutOfMemoryError>[0], dawnMessage: string) {
    super(details);
    this.message = `${this.message}; Dawn: ${dawnMessage}`;
    this.dawnMessage = dawnMessage;
  }
}
