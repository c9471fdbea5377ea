import { DisposedError, InvalidArgumentError } from '../errors.js';
import { ContextCore } from './context-core.js';
import { CudaError } from './cuda-error.js';
import { CudaResult } from './generated/result-code.js';
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

  /**
   * Lets kernels and copies in this context reach memory of `peer`'s device directly (NVLink or
   * PCIe), one way: call it on each side for both. Idempotent: a second call, or a call for a
   * peer the driver already enabled, does nothing. Ask `device.canAccessPeer(peer.device)` first:
   * where the devices cannot reach each other the driver's CUDA_ERROR_PEER_ACCESS_UNSUPPORTED is
   * thrown as a {@link CudaError}; a context of the same device is refused with InvalidArgumentError.
   */
  enablePeerAccess(peer: Context): void {
    const peerHandle = this.#peerHandle(peer, 'enablePeerAccess');
    this.#enter();
    try {
      ctxEnablePeerAccess(peerHandle, 0);
    } catch (err) {
      if (!(err instanceof CudaError && err.result === CudaResult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)) throw err;
    }
  }

  /** Revokes {@link enablePeerAccess}; idempotent like it (a peer not enabled is left as it is). */
  disablePeerAccess(peer: Context): void {
    const peerHandle = this.#peerHandle(peer, 'disablePeerAccess');
    this.#enter();
    try {
      ctxDisablePeerAccess(peerHandle);
    } catch (err) {
      if (!(err instanceof CudaError && err.result === CudaResult.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)) throw err;
    }
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

  #peerHandle(peer: Context, what: string): bigint {
    if (!(peer instanceof Context)) throw new InvalidArgumentError(`Context.${what}: peer must be a Context, got ${typeof peer}`);
    const handle = peer.handle;
    if (peer.device.ordinal === this.device.ordinal) {
      throw new InvalidArgumentError(`Context.${what}: the peer is a context of the same device (${this.device.ordinal}); peer access is between two devices`);
    }
    return handle;
  }

  #checkLive(): void {
    if (this.#disposed) throw new DisposedError(`The Context of device ${this.device.ordinal}`);
  }
}
