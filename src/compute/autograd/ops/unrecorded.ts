/**
 * The ops that have no backward yet (gruRollout, svd): while recording, an input that
 * requires grad is refused, rather than left out of the graph without a word. Registering a
 * backward (see `../record.ts`) replaces the refusal.
 */
import { InvalidArgumentError } from '../../../errors.js';
import { gradRequested } from '../../tensor/grad-mode.js';
import type { Session } from '../../tensor/session.js';
import { Tensor } from '../../tensor/tensor.js';

/** How deep the search goes into arrays and plain objects (a GRU stack's layer norm is three down). */
const DEPTH = 4;

/**
 * Throws when grad mode is on and a tensor among the arguments (searched through arrays and plain
 * objects: weights, options) requires grad. Allocates nothing on the way.
 */
export function refuseRecording(s: Session, op: string, a: unknown, b?: unknown, c?: unknown, d?: unknown): void {
  if (!gradRequested || !s.gradMode.enabled) return;
  const found = requiring(a, DEPTH) ?? requiring(b, DEPTH) ?? requiring(c, DEPTH) ?? requiring(d, DEPTH);
  if (found !== undefined) {
    throw new InvalidArgumentError(`${op}: ${found.toString()} requires grad, and ${op} has no backward yet; call it under gpu.noGrad, or on detach()ed inputs`);
  }
}

function requiring(value: unknown, depth: number): Tensor | undefined {
  if (value instanceof Tensor) return value.requiresGrad ? value : undefined;
  if (depth === 0 || value === null || typeof value !== 'object') return undefined;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return undefined;
  for (const key in value) {
    const t = requiring((value as Record<string, unknown>)[key], depth - 1);
    if (t !== undefined) return t;
  }
  return undefined;
}
