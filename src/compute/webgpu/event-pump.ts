/**
 * Synchronous waits on Dawn (for `toArraySync()`, `synchronize()` and the autotuner's timings).
 *
 * dawn.node has no blocking wait: it settles promises (mapAsync, ...) when its instance processes
 * events, and it processes events in a callback it hands to the global `setImmediate` whenever an
 * asynchronous call is pending (`AsyncRunner::ScheduleProcessEvents`, which looks `setImmediate`
 * up on the global object at each call). Calling that callback ourselves processes the events
 * without returning to the event loop, and what a pending map did is visible at once in the
 * buffer's native `mapState`. So a wait is: keep a copy of the callback from a Dawn call that
 * schedules one (`capture`), then call it until the condition holds (`waitUntil`), with
 * `setImmediate` swapped meanwhile so that Dawn's re-scheduling does not pile immediates up;
 * one is handed on to the real `setImmediate` afterwards, so Dawn's own loop continues.
 *
 * This leans on dawn.node's internals: if no callback was ever seen (another Dawn build),
 * `waitUntil` reports that it cannot wait and the caller throws a typed error pointing to the
 * asynchronous API.
 */

type Immediate = (...args: unknown[]) => unknown;

/** Most time between two polls of a wait, in ms (waits start by spinning, then back off to this). */
const MAX_BACKOFF_MS = 1;
const SPIN_POLLS = 64;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Whether a callback is a native function (Dawn's) rather than one of the application's. */
function isNative(fn: Immediate): boolean {
  return Function.prototype.toString.call(fn).includes('[native code]');
}

/** Drives one Dawn instance's event processing by hand. */
export class DawnEventPump {
  #tick: Immediate | undefined;

  /** Whether a synchronous wait is possible (a processing callback was seen). */
  get canWait(): boolean {
    return this.#tick !== undefined;
  }

  /** Runs `call` (a Dawn call that may schedule event processing) and keeps the callback it schedules. */
  capture<T>(call: () => T): T {
    const real = globalThis.setImmediate;
    const capturing = (callback: Immediate, ...args: unknown[]) => {
      if (isNative(callback)) this.#tick = callback;
      return real(callback, ...args);
    };
    globalThis.setImmediate = capturing as unknown as typeof setImmediate;
    try {
      return call();
    } finally {
      globalThis.setImmediate = real;
    }
  }

  /**
   * Processes Dawn's events until `done()` holds. Returns false if the time ran out first.
   * @throws Error when no processing callback is known (see {@link canWait}).
   */
  waitUntil(done: () => boolean, timeoutMs: number): boolean {
    if (done()) return true;
    if (!this.#tick) throw new Error('no Dawn event-processing callback has been seen');
    const real = globalThis.setImmediate;
    let dawnPending: Immediate | undefined;
    const deferred: [Immediate, unknown[]][] = [];
    const holding = (callback: Immediate, ...args: unknown[]) => {
      if (isNative(callback)) {
        dawnPending = callback;
        this.#tick = callback;
      } else {
        deferred.push([callback, args]);
      }
      return undefined;
    };
    globalThis.setImmediate = holding as unknown as typeof setImmediate;
    const start = performance.now();
    let polls = 0;
    let backoff = 0.02;
    try {
      for (;;) {
        this.#tick();
        if (done()) return true;
        if (performance.now() - start > timeoutMs) return false;
        if (++polls > SPIN_POLLS) {
          Atomics.wait(sleeper, 0, 0, backoff);
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
      }
    } finally {
      globalThis.setImmediate = real;
      if (dawnPending) real(dawnPending);
      for (const [callback, args] of deferred) real(callback, ...args);
    }
  }
}
