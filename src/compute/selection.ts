/**
 * Which backend a GpuCompute runs on. `backend: 'auto'` tries the registered backends in order
 * and records a specific reason for every one it skipped; an explicit backend that cannot be had
 * throws {@link BackendUnavailableError} instead of falling back. Every backend is opened with
 * its composable optional ops filled in (`composed-ops.ts`).
 */
import { withComposedOps, type ComposedBackend } from './backend/composed-ops.js';
import { BackendUnavailableError, oneLine, type BackendRegistration, type OpenOptions } from './backend/registration.js';
import { BACKENDS, registration, type BackendKind } from './backends.js';

/** A backend that `auto` passed over, and why. */
export interface SkippedBackend {
  backend: BackendKind;
  reason: string;
}

/** The opened backend and what `auto` skipped on the way. */
export interface BackendChoice {
  backend: ComposedBackend;
  skipped: SkippedBackend[];
}

/** Opens the requested backend, or the first that works for 'auto'. */
export async function openBackend(requested: 'auto' | BackendKind, options: OpenOptions): Promise<BackendChoice> {
  if (requested !== 'auto') return { backend: withComposedOps(await registration(requested).open(options)), skipped: [] };
  const skipped: SkippedBackend[] = [];
  for (const { kind, open, aliasOf } of BACKENDS as readonly BackendRegistration[]) {
    if (aliasOf !== undefined) continue;
    try {
      const backend = withComposedOps(await open({ ...options, auto: true }));
      if (skipped.length > 0) {
        const why = skipped.map((s) => `${s.backend}: ${s.reason}`).join('; ');
        options.logger.warn(`backend 'auto' fell back to ${kind} (${why})`);
      }
      return { backend, skipped };
    } catch (err) {
      const reason = err instanceof BackendUnavailableError ? err.reason : oneLine(err);
      skipped.push({ backend: kind as BackendKind, reason });
      options.logger.debug(`backend ${kind} skipped: ${reason}`);
    }
  }
  // The last backend (the CPU) has no precondition, so the loop returns before this.
  throw new BackendUnavailableError('cpu', skipped.map((s) => `${s.backend}: ${s.reason}`).join('; '));
}
