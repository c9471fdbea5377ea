import { ContextUnusableError, onStickyError, type CudaError } from './cuda-error.js';
import {
  ctxGetStreamPriorityRange,
  ctxSetCurrent,
  devicePrimaryCtxRelease,
  devicePrimaryCtxRetain,
  ensureCurrent,
  lastCurrentContext,
} from './raw/context.js';
import type { CUcontext } from './raw/handles.js';

/**
 * The shared state behind every Context object of one device's primary
 * context: one driver retain held while anything (a Context, a buffer, a
 * stream...) references it, and whether a sticky error has broken it.
 * Objects that need a context acquire the core on creation and release it on
 * dispose, so the driver context outlives all of them whatever order they are
 * disposed or collected in.
 */
export class ContextCore {
  static readonly #byDevice = new Map<number, ContextCore>();

  /** The core of `device`'s primary context (not yet retained: call {@link acquire}). */
  static forDevice(device: number): ContextCore {
    let core = ContextCore.#byDevice.get(device);
    if (!core) {
      core = new ContextCore(device);
      ContextCore.#byDevice.set(device, core);
    }
    return core;
  }

  /** Marks the retained core whose context is current on this thread as broken by `error`. */
  static markCurrentBroken(error: CudaError): void {
    const current = lastCurrentContext();
    for (const core of ContextCore.#byDevice.values()) {
      if (core.#refs > 0 && core.handle === current) core.markBroken(error);
    }
  }

  /** The CUcontext while retained; 0n otherwise. */
  handle: CUcontext = 0n;
  /** The sticky error that broke the context, if any. */
  broken: CudaError | undefined;
  #refs = 0;
  #priorityRange: { least: number; greatest: number } | undefined;

  private constructor(readonly device: number) {}

  /** Takes one reference, retaining the primary context on the first. */
  acquire(): void {
    if (this.#refs === 0) {
      this.handle = devicePrimaryCtxRetain(this.device);
      this.broken = undefined;
      this.#priorityRange = undefined;
    }
    this.#refs++;
  }

  /** Drops one reference, releasing the primary context after the last. */
  release(): void {
    if (this.#refs <= 0) return;
    if (--this.#refs > 0) return;
    const handle = this.handle;
    this.handle = 0n;
    try {
      // Unbind first so a later retain of the same handle value is bound again.
      if (lastCurrentContext() === handle) ctxSetCurrent(0n);
      devicePrimaryCtxRelease(this.device);
    } catch (err) {
      // A broken context may refuse even its release; it is lost to this process either way.
      if (!this.broken) throw err;
    }
  }

  /**
   * Checks the context is usable and makes it current on this thread (a
   * no-op when it already is): the first thing each safe call does.
   */
  enter(): void {
    if (this.broken) throw new ContextUnusableError(`The CUDA context of device ${this.device}`, this.broken);
    ensureCurrent(this.handle);
  }

  /** Records that a sticky error broke the context; later {@link enter} calls throw ContextUnusableError. */
  markBroken(error: CudaError): void {
    this.broken ??= error;
  }

  /** The stream priorities this context accepts (cached): `greatest` is the most urgent and numerically lowest. */
  streamPriorityRange(): { least: number; greatest: number } {
    if (!this.#priorityRange) {
      this.enter();
      this.#priorityRange = ctxGetStreamPriorityRange();
    }
    return this.#priorityRange;
  }
}

onStickyError((error) => ContextCore.markCurrentBroken(error));
