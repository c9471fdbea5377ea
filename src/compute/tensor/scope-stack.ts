/**
 * Scoped tensor lifetimes (tfjs calls it `tidy`): while a scope is open, every tensor created is
 * recorded in it, and when the scope's function returns, every recorded tensor it does not
 * return (and that was not kept) is disposed. Tensors a scope returns move to the enclosing
 * scope, so an outer scope still owns them. This frees memory at once, without waiting for the
 * garbage collector's finalizers, which only run when the event loop gets control.
 */
import { InvalidArgumentError } from '../../errors.js';
import { Tensor } from './tensor.js';

/** The tensors one open scope has seen created. */
type Frame = Tensor[];

/** The open scopes of one session, innermost last. */
export class ScopeStack {
  readonly #frames: Frame[] = [];
  readonly #kept = new WeakSet<Tensor>();

  /** True while at least one scope is open. */
  get open(): boolean {
    return this.#frames.length > 0;
  }

  /** Records a new tensor in the innermost scope (nothing when none is open). */
  adopt(t: Tensor): void {
    const frames = this.#frames;
    if (frames.length > 0) frames[frames.length - 1]!.push(t);
  }

  /** Exempts `t` from every scope: no scope disposes it; the caller does. */
  keep(t: Tensor): void {
    this.#kept.add(t);
  }

  /**
   * Runs `fn` in a new scope; `op` names the public call in errors. On return, the tensors `fn`
   * created and does not return are disposed; on a throw, all of them are. `fn` must be
   * synchronous: a returned promise is refused (its tensors could not be tracked across awaits).
   * `survivors`, when given, receives the returned tensors that `fn` created.
   */
  run<T>(op: string, fn: () => T, survivors?: Set<Tensor>): T {
    if (typeof fn !== 'function') throw new InvalidArgumentError(`${op}: fn must be a function, got ${typeof fn}`);
    const frame: Frame = [];
    this.#frames.push(frame);
    let result: T;
    try {
      result = fn();
    } catch (err) {
      this.#close(frame, new Set());
      throw err;
    }
    if (isPromiseLike(result)) {
      // The async work may still hold tensors of this scope; its own outcome no longer matters here.
      Promise.resolve(result).catch(() => undefined);
      this.#close(frame, new Set());
      throw new InvalidArgumentError(`${op}: fn must be synchronous (it returned a promise); tensors cannot be tracked across an await`);
    }
    const returned = returnedTensors(result);
    this.#close(frame, returned);
    if (survivors) for (const t of frame) if (returned.has(t)) survivors.add(t);
    return result;
  }

  /** Pops `frame`, disposing what it holds except `survivors` and kept tensors, which move to the parent scope. */
  #close(frame: Frame, survivors: ReadonlySet<Tensor>): void {
    const popped = this.#frames.pop();
    if (popped !== frame) throw new Error('scope stack out of order'); // unreachable: run() pushes and pops in pairs
    const parent = this.#frames[this.#frames.length - 1];
    for (const t of frame) {
      if (survivors.has(t) || this.#kept.has(t)) {
        if (parent !== undefined && !this.#kept.has(t)) parent.push(t);
      } else {
        t.dispose();
      }
    }
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** The tensors in a scope's result: the result itself, or inside arrays, Maps, Sets and plain objects, at any depth. */
function returnedTensors(result: unknown): Set<Tensor> {
  const found = new Set<Tensor>();
  const seen = new Set<object>();
  const visit = (value: unknown): void => {
    if (value instanceof Tensor) {
      found.add(value);
      return;
    }
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value) || value instanceof Set) {
      for (const v of value) visit(v);
    } else if (value instanceof Map) {
      for (const v of value.values()) visit(v);
    } else if (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) {
      for (const v of Object.values(value)) visit(v);
    }
  };
  visit(result);
  return found;
}
