/**
 * The safety net behind explicit `dispose()`: an owning object registers how
 * to free its handle, and if the object is garbage-collected undisposed the
 * handle is freed then and the process is warned, once. Lifetimes are meant
 * to be explicit; this only keeps a forgotten object from leaking forever.
 */

interface Leak {
  /** What leaked, for the warning (e.g. "DeviceBuffer"). */
  readonly kind: string;
  /** Frees the handle. Must not reference the owner, or it would never be collected. */
  readonly release: () => void;
}

let warned = false;

const registry = new FinalizationRegistry<Leak>((leak) => {
  if (!warned) {
    warned = true;
    process.emitWarning(
      `A ${leak.kind} was garbage-collected without dispose(); its GPU resource was freed now, late. ` +
        'Call dispose() (or declare it with `using`) to free GPU resources when you are done with them. ' +
        'Later leaks are not reported.',
      { code: 'GPUCOMPUTE_LEAK' },
    );
  }
  try {
    leak.release();
  } catch {
    // A finalizer has no caller to report to; the warning above already said what happened.
  }
});

/** Frees `release` when `owner` is collected before {@link unguard} is called for it. */
export function guard(owner: object, kind: string, release: () => void): void {
  registry.register(owner, { kind, release }, owner);
}

/** Called by `dispose()`: the owner freed its handle itself. */
export function unguard(owner: object): void {
  registry.unregister(owner);
}
