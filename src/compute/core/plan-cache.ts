/**
 * Plans cached per shapes: apps run the same ops on the same shapes over and over, and building
 * a string key costs as much as the rest of a small op's front-end. An entry is found by a hash
 * of its shapes and a small integer of flags, then checked dim by dim; once `limit` plans are
 * held, the oldest hash bucket goes. Plans are shared by every caller, so they must not change.
 * A lookup runs on every op, often before V8 optimises it: its loops are indexed, since for-of's
 * iterator protocol costs more than their bodies in unoptimised code.
 */
import { sameShape } from './shape.js';

/** A cached plan's key: its shapes (undefined for an absent operand) and flags. */
type Shapes = readonly (readonly number[] | undefined)[];

interface Entry<P> {
  readonly shapes: Shapes;
  readonly flags: number;
  readonly plan: P;
}

export class PlanCache<P> {
  readonly #buckets = new Map<number, Entry<P>[]>();
  #size = 0;

  constructor(readonly limit = 512) {}

  /** The plan for `shapes` and `flags`: the one held, else `make()`'s, kept (nothing is kept when it throws). */
  get(shapes: Shapes, flags: number, make: () => P): P {
    const hash = hashShapes(shapes, flags);
    const bucket = this.#buckets.get(hash);
    if (bucket !== undefined) {
      for (let i = 0; i < bucket.length; i++) {
        const entry = bucket[i]!;
        if (entry.flags === flags && sameShapes(entry.shapes, shapes)) return entry.plan;
      }
    }
    const plan = make();
    if (this.#size >= this.limit) {
      const oldest = this.#buckets.keys().next().value!;
      this.#size -= this.#buckets.get(oldest)!.length;
      this.#buckets.delete(oldest);
    }
    const entry = { shapes: shapes.map((s) => (s === undefined ? undefined : [...s])), flags, plan };
    // The eviction may have taken this very bucket.
    const current = this.#buckets.get(hash);
    if (current) current.push(entry);
    else this.#buckets.set(hash, [entry]);
    this.#size++;
    return plan;
  }
}

function hashShapes(shapes: Shapes, flags: number): number {
  let hash = flags;
  for (let s = 0; s < shapes.length; s++) {
    const shape = shapes[s];
    hash = Math.imul(hash, 0x9e3779b1) ^ (shape === undefined ? -1 : shape.length);
    if (shape !== undefined) for (let i = 0; i < shape.length; i++) hash = (Math.imul(hash, 31) + shape[i]!) | 0;
  }
  return hash;
}

function sameShapes(a: Shapes, b: Shapes): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined ? x !== y : !sameShape(x, y)) return false;
  }
  return true;
}
