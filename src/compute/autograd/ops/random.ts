/**
 * dropout with its gradient: the incoming gradient through the same mask and scale, by running
 * dropout on it with the forward's Philox key (the mask is a function of the key and the element's
 * index only).
 */
import type { DType } from '../../core/dtype.js';
import { dropout as rawDropout } from '../../ops/random.js';
import type { Session } from '../../tensor/session.js';
import type { Tensor } from '../../tensor/tensor.js';
import { record, recording } from '../record.js';

/** Seeded dropout (see `ops/random.ts`), differentiable. */
export function dropout<D extends DType>(s: Session, x: Tensor<D>, p: unknown, seed: unknown): Tensor<D> {
  if (!recording(s, 'dropout', x)) return rawDropout(s, x, p, seed);
  // Without a seed the forward draws the session's next one.
  const key = seed ?? s.peekSeed();
  return record('dropout', [x], rawDropout(s, x, p, seed), [], ([g]) => [rawDropout(s, g!, p, key)]);
}
