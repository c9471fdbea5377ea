/**
 * Which backend a GpuCompute runs on. `backend: 'auto'` tries CUDA, then HIP,
 * then Metal, then the CPU, and records a specific reason for every backend it
 * skipped; an explicit backend that cannot be had throws
 * {@link BackendUnavailableError} instead of falling back.
 */
import { GpuError } from '../errors.js';
import { hipResultDescription } from '../hip/hip-result.js';
import { hipProbeFunctions as hip, openHipRuntime } from '../hip/runtime.js';
import type { Backend, BackendKind } from './backend/backend.js';
import { CpuBackend } from './cpu/cpu-backend.js';
import type { Logger } from './core/logger.js';

/** A backend that `auto` passed over, and why. */
export interface SkippedBackend {
  backend: BackendKind;
  reason: string;
}

/** The requested backend cannot run here; `reason` says why (the original error is the `cause`). */
export class BackendUnavailableError extends GpuError {
  readonly backend: BackendKind;
  readonly reason: string;
  constructor(backend: BackendKind, reason: string, cause?: unknown) {
    super('BACKEND_UNAVAILABLE', `The ${backend} backend is not available: ${reason}`, { cause });
    this.backend = backend;
    this.reason = reason;
  }
}

/** What to open. */
export interface BackendRequest {
  backend: 'auto' | BackendKind;
  device: number;
  poolLimitBytes?: number;
  logger: Logger;
}

/** The opened backend and what `auto` skipped on the way. */
export interface BackendChoice {
  backend: Backend;
  skipped: SkippedBackend[];
}

/** The order `auto` tries. */
export const AUTO_ORDER: readonly BackendKind[] = ['cuda', 'hip', 'metal', 'cpu'];

/** Opens the requested backend, or the first that works for 'auto'. */
export async function openBackend(request: BackendRequest): Promise<BackendChoice> {
  if (request.backend !== 'auto') return { backend: await openOne(request.backend, request), skipped: [] };
  const skipped: SkippedBackend[] = [];
  for (const kind of AUTO_ORDER) {
    try {
      const backend = await openOne(kind, request);
      if (skipped.length > 0) {
        const why = skipped.map((s) => `${s.backend}: ${s.reason}`).join('; ');
        request.logger.warn(`backend 'auto' fell back to ${kind} (${why})`);
      }
      return { backend, skipped };
    } catch (err) {
      const reason = err instanceof BackendUnavailableError ? err.reason : oneLine(err);
      skipped.push({ backend: kind, reason });
      request.logger.debug(`backend ${kind} skipped: ${reason}`);
    }
  }
  // The CPU backend has no precondition, so the loop returns before this.
  throw new BackendUnavailableError('cpu', skipped.map((s) => `${s.backend}: ${s.reason}`).join('; '));
}

async function openOne(kind: BackendKind, request: BackendRequest): Promise<Backend> {
  switch (kind) {
    case 'cuda':
      return openCuda(request);
    case 'hip':
      return openHip(request);
    case 'metal':
      throw new BackendUnavailableError(kind, platformUnavailableReason(kind));
    case 'cpu':
      if (request.backend === 'cpu' && request.device !== 0) {
        throw new BackendUnavailableError('cpu', `the CPU backend has one device (0), not device ${request.device}`);
      }
      return new CpuBackend(request.poolLimitBytes === undefined ? {} : { poolLimitBytes: request.poolLimitBytes });
  }
}

async function openCuda(request: BackendRequest): Promise<Backend> {
  try {
    // Loaded on demand so CPU-only use never touches the CUDA modules.
    const { createCudaBackend } = await import('./cuda/cuda-backend.js');
    return createCudaBackend({
      device: request.device,
      logger: request.logger,
      ...(request.poolLimitBytes === undefined ? {} : { poolLimitBytes: request.poolLimitBytes }),
    });
  } catch (err) {
    throw new BackendUnavailableError('cuda', oneLine(err), err);
  }
}

async function openHip(request: BackendRequest): Promise<Backend> {
  const reason = probeHip();
  if (reason !== undefined) throw new BackendUnavailableError('hip', reason);
  try {
    const { createHipBackend } = await import('./hip/hip-backend.js');
    return createHipBackend({
      device: request.device,
      logger: request.logger,
      ...(request.poolLimitBytes === undefined ? {} : { poolLimitBytes: request.poolLimitBytes }),
    });
  } catch (err) {
    throw new BackendUnavailableError('hip', oneLine(err), err);
  }
}

/** An error's message on one line (library-not-found messages list attempts on several). */
function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

/** Why a GPU platform cannot be used, as specifically as can be found out. */
export function platformUnavailableReason(kind: 'hip' | 'metal'): string {
  if (kind === 'hip') return probeHip() ?? 'HIP devices are present, but device selection does not list them yet';
  return process.platform === 'darwin'
    ? 'the Metal backend is not available in this version'
    : `Metal exists only on macOS (this is ${process.platform})`;
}

/**
 * Why HIP cannot be used, found by asking the runtime (no runtime, or no
 * device, with what hipInit and hipGetDeviceCount answered and what that
 * means); undefined when a device answers.
 */
function probeHip(): string | undefined {
  let path: string;
  try {
    path = openHipRuntime().path;
  } catch (err) {
    return `no HIP runtime: ${oneLine(err)}`;
  }
  const errorName = (code: number) => `${String(hip.hipGetErrorName(code))} (${code}: ${hipResultDescription(code)})`;
  const init = hip.hipInit(0) as number;
  const count = [0];
  const status = hip.hipGetDeviceCount(count) as number;
  if (status !== 0 || count[0] === 0) {
    // hipInit's code is not telling here (ROCm 5.2 answers hipErrorInvalidDevice without a GPU); the count's is.
    const initNote = init === 0 ? '' : `hipInit returned ${String(hip.hipGetErrorName(init))} (${init}), `;
    return `no HIP device: ${initNote}hipGetDeviceCount returned ${status === 0 ? '0 devices' : errorName(status)} (runtime ${path})`;
  }
  return undefined;
}
