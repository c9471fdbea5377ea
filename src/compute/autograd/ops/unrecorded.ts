/**
 * The ops that have no backward yet (attention, the GRUs, svd): while recording, an input that
 * requires grad is refused, rather than left out of the graph without a word. Registering a
 * backward (see `../record.ts`) replaces the refusal.
 */
import { InvalidArgumentError } from '../../../errors.js';
import type { Session } from '../../tensor/session.js';
import { Tensor } from '../../tensor/tensor.js';

/** Throws when grad mode is on and a tensor among `args` (searched through arrays and plain objects) requires grad. */
export function refuseRecording(s: Session, op: string, args: readonly unknown[]): void {
  if (!s.gradMode.enabled) return;
  const found = requiring(args, new Set());
  if (found !== undefined) {
    throw new InvalidArgumentError(`${op}: ${found.toString()} requires grad, and ${op} has no backward yet; call it under gpu.noGrad, or on detach()ed inputs`);
  }
}

function requiring(value: unknown, seen: Set<object>): Tensor | undefined {
  if (value instanceof Tensor) return value.requiresGrad ? value : undefined;
  if (value === null || typeof value !== 'object' || seen.has(value)) return undefined;
  seen.add(value);
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return undefined;
  for (const v of Object.values(value)) {
    const t = requiring(v, seen);
    if (t !== undefined) return t;
  }
  return undefined;
}
