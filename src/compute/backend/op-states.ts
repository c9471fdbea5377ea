/**
 * The state ops keep per backend (autotune choices, library handles, captured graphs, loaded
 * kernels), created on first use and owned by the backend, which releases all of it in one place
 * when it is disposed, in the reverse order of creation.
 */

/** One kind of per-backend state: how to create it for an owner (a backend, or its op context). */
export interface OpStateKey<T, O> {
  /** For messages and debugging. */
  readonly name: string;
  create(owner: O): T;
}

/** Per-backend op state, keyed by {@link OpStateKey}. */
export class OpStates<O> {
  readonly #owner: O;
  readonly #values = new Map<OpStateKey<unknown, O>, unknown>();

  constructor(owner: O) {
    this.#owner = owner;
  }

  /** The state of `key`, created on first use. */
  get<T>(key: OpStateKey<T, O>): T {
    if (this.#values.has(key)) return this.#values.get(key) as T;
    const value = key.create(this.#owner);
    this.#values.set(key, value);
    return value;
  }

  /** Disposes every state that holds resources (has a `dispose` method), newest first, then forgets all. */
  dispose(): void {
    const values = [...this.#values.values()].reverse();
    this.#values.clear();
    let failure: unknown;
    for (const value of values) {
      try {
        (value as Partial<Disposable & { dispose(): void }>).dispose?.();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  }
}
