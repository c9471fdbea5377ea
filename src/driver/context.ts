import { DisposedError } from '../errors.js';
import { ContextCore } from './context-core.js';
import { guard, unguard } from './leak-guard.js';
import { ctxSynchronize, memGetInfo } from './raw/context.js';
import { ctxDisablePeerAccess, ctxEnablePeerAccess } from './raw/peer.js';

/**
 * The device a context belongs to, as far as this file uses it. device.ts, which
 * creates contexts and so imports this file, merges its Device class into this
 * interface (declaration merging): `context.device` is a full Device without an
 * import cycle between the two files.
 */
export interface ContextDevice {
  readonly ordinal: number;
  readonly handle: number;
}

/**
 * A device's primary context, retained. Work on it (allocations, streams,
 * modules) keeps the context alive: `dispose()` gives up this object's
 * retain, and the driver context is released once everything created from
 * it is disposed too.
 *
 * The context is made current on the calling thread only when a call needs
 * it and it is not already current.
 */
export class Context implements Disposable {
  /** @internal Use `device.primaryContext()`. */
  static retainPrimary(device: ContextDevice): Context {
    const core = ContextCore.forDevice(device.handle);
    core.acquire();
    return new Context(device, core);
  }

  readonly #core: ContextCore;
  #disposed = false;

  private constructor(
    /** The device this context belongs to. */
    readonly device: ContextDevice,
    core: ContextCore,
  ) {
    this.#core = core;
    guard(this, 'Context', () => core.release());
  }

  /** The CUcontext handle (raw tier). */
  get handle(): bigint {
    this.#checkLive();
    return this.#core.handle;
  }

  /**
   * True once a sticky error (an illegal address in a kernel, say) has
   * corrupted the context: every later call on it throws ContextUnusableError.
   */
  get unusable(): boolean {
    return this.#core.broken !== undefined;
  }

  /** Whether {@link dispose} was called. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** Binds the context to the calling thread (skipped when it already is). */
  makeCurrent(): void {
    this.#enter();
  }

  /** Waits for all work in the context, on every stream. */
  synchronize(): void {
    this.#enter();
    ctxSynchronize();
  }

  /** Free and total memory of the device, in bytes. */
  memoryInfo(): { free: number; total: number } {
    this.#enter();
    return memGetInfo();
  }

  /** Lets kernels in this context access memory of `peer`'s device (see `device.canAccessPeer`). */
  enablePeerAccess(peer: Context): void {
    const peerHandle = peer.handle;
    this.#enter();
    ctxEnablePeerAccess(peerHandle, 0);
  }

  /** Revokes {@link enablePeerAccess}. */
  disablePeerAccess(peer: Context): void {
    const peerHandle = peer.handle;
    this.#enter();
    ctxDisablePeerAccess(peerHandle);
  }

  /**
   * @internal Takes a reference for an object created in this context (a
   * buffer, a stream...), which must {@link ContextCore.release} it when freed.
   */
  acquireCore(): ContextCore {
    this.#checkLive();
    this.#core.enter();
    this.#core.acquire();
    return this.#core;
  }

  /** Gives up this object's retain of the primary context. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    this.#core.release();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #enter(): void {
    this.#checkLive();
    this.#core.enter();
  }

  #checkLive(): void {
    if (this.#disposed) throw new DisposedError(`The Context of device ${this.device.ordinal}`);
  }
}
