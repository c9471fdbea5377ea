/**
 * The gradient of an operand that broadcasting stretched: the result's gradient summed over the
 * dims the operand was stretched along (the leading dims it lacks, and its dims of extent 1 that
 * the result has wider), with each contiguous run of such dims summed by one reduction.
 */
import { sameShape } from '../core/shape.js';
import { reduce } from '../ops/reduce.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/** `g` reduced to `shape` (which broadcasts to g's shape); `g` itself when the shapes agree. */
export function sumToShape<D extends Tensor>(s: Session, g: D, shape: readonly number[]): D {
  if (sameShape(g.shape, shape)) return g;
  const lead = g.rank - shape.length;
  // Runs of dims that are summed or kept; dims of extent 1 belong to neither.
  const runs: { sum: boolean; size: number }[] = [];
  g.shape.forEach((size, i) => {
    if (size === 1) return;
    const sum = i < lead || shape[i - lead] === 1;
    const last = runs[runs.length - 1];
    if (last !== undefined && last.sum === sum) last.size *= size;
    else runs.push({ sum, size });
  });
  let t = g.reshape(runs.map((r) => r.size)) as D;
  for (let axis = runs.length - 1; axis >= 0; axis--) {
    if (!runs[axis]!.sum) continue;
    const next = reduce(s, 'sum', t, axis) as D;
    t.dispose();
    t = next;
  }
  const out = t.reshape(shape) as D;
  t.dispose();
  return out;
}
