import koffi from 'koffi';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { Context } from './context.js';
import type { ContextCore } from './context-core.js';
import { HostRegisterFlags } from './generated/enums.js';
import { guard, unguard } from './leak-guard.js';
import { ensureCurrent } from './raw/context.js';
import type { CUdeviceptr, HostPointer } from './raw/handles.js';
import { memHostGetDevicePointer, memHostRegister, memHostUnregister } from './raw/memory.js';

/** Options of {@link PinnedBuffer.alloc}. */
export interface PinnedBufferOptions {
  /** Map the memory into the device's address space for zero-copy kernel access ({@link PinnedBuffer.devicePointer}). */
  mapped?: boolean;
  /** Pinned for every context, not just this one. */
  portable?: boolean;
}

/** A TypedArray constructor, for {@link PinnedBuffer.as}. */
export type TypedArrayConstructor<T extends ArrayBufferView> = {
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
};

// Registered ranges are whole pages of our own allocation, so two buffers never share a pinned page.
const PAGE = process.arch === 'arm64' ? 65536 : 4096;

/**
 * Page-locked host memory, seen from JS as TypedArrays: the source and target
 * of asynchronous copies (the DMA engines read and write it while JS runs),
 * and, when mapped, memory kernels can read and write directly.
 *
 * The memory belongs to a JS ArrayBuffer that is page-locked with
 * cuMemHostRegister, so views stay valid JS memory even after `dispose()`
 * (which only unpins it): no use-after-free is possible from JS. Do not
 * dispose while an asynchronous copy on it is still pending.
 */
export class PinnedBuffer implements Disposable {
  /** Allocates and pins `byteLength` bytes (zero-filled). Keeps `ctx` alive. */
  static alloc(ctx: Context, byteLength: number, options: PinnedBufferOptions = {}): PinnedBuffer {
    if (!Number.isSafeInteger(byteLength) || byteLength < 0) {
      throw new InvalidArgumentError(`PinnedBuffer.alloc: byteLength ${byteLength} is not a non-negative integer`);
    }
    const { mapped = false, portable = false } = options;
    const core = ctx.acquireCore();
    try {
      const pinnedBytes = Math.ceil(byteLength / PAGE) * PAGE;
      const memory = new ArrayBuffer(pinnedBytes + PAGE);
      const base = koffi.address(memory);
      const offset = (PAGE - Number(base % BigInt(PAGE))) % PAGE;
      const address = base + BigInt(offset);
      let devicePointer: CUdeviceptr | undefined;
      if (pinnedBytes > 0) {
        const flags = (mapped ? HostRegisterFlags.DEVICEMAP : 0) | (portable ? HostRegisterFlags.PORTABLE : 0);
        memHostRegister(address, pinnedBytes, flags);
        if (mapped) {
          try {
            devicePointer = memHostGetDevicePointer(address);
          } catch (err) {
            memHostUnregister(address);
            throw err;
          }
        }
      }
      return new PinnedBuffer(ctx, core, memory, offset, byteLength, address, mapped, devicePointer);
    } catch (err) {
      core.release();
      throw err;
    }
  }

  readonly #core: ContextCore;
  readonly #memory: ArrayBuffer;
  readonly #offset: number;
  readonly #address: HostPointer;
  readonly #devicePointer: CUdeviceptr | undefined;
  #bytes: Uint8Array | undefined;
  #disposed = false;

  private constructor(
    /** The context it was pinned in. */
    readonly context: Context,
    core: ContextCore,
    memory: ArrayBuffer,
    offset: number,
    /** Its size in bytes. */
    readonly byteLength: number,
    address: HostPointer,
    /** Whether kernels can access it through {@link devicePointer}. */
    readonly mapped: boolean,
    devicePointer: CUdeviceptr | undefined,
  ) {
    this.#core = core;
    this.#memory = memory;
    this.#offset = offset;
    this.#address = address;
    this.#devicePointer = devicePointer;
    const registered = byteLength > 0;
    // The closure holds `memory`, so the pages stay allocated until they are unpinned.
    guard(this, 'PinnedBuffer', () => releasePinned(core, registered ? address : undefined, memory));
  }

  /** The memory as bytes (the same view each time). */
  get bytes(): Uint8Array {
    this.#checkLive();
    return (this.#bytes ??= new Uint8Array(this.#memory, this.#offset, this.byteLength));
  }

  /**
   * A view of the memory as another TypedArray, e.g. `pinned.as(Float32Array)`.
   * The byte length must be a multiple of the element size.
   */
  as<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T>): T {
    this.#checkLive();
    const size = ctor.BYTES_PER_ELEMENT;
    if (this.byteLength % size !== 0) {
      throw new InvalidArgumentError(`PinnedBuffer.as: ${this.byteLength} bytes is not a whole number of ${size}-byte elements`);
    }
    return new ctor(this.#memory, this.#offset, this.byteLength / size);
  }

  /** The host address (raw tier: asynchronous copies). */
  get address(): HostPointer {
    this.#checkLive();
    return this.#address;
  }

  /** The device address of the memory, for kernels to access it over the bus; only when allocated with `mapped`. */
  get devicePointer(): CUdeviceptr {
    this.#checkLive();
    if (this.#devicePointer === undefined) {
      throw new InvalidArgumentError(
        this.byteLength === 0 ? 'An empty PinnedBuffer has no device pointer' : 'PinnedBuffer.devicePointer needs PinnedBuffer.alloc(..., { mapped: true })',
      );
    }
    return this.#devicePointer;
  }

  /** @internal The shared context state. */
  get core(): ContextCore {
    return this.#core;
  }

  /** Whether {@link dispose} was called. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** Unpins the memory. Views already taken remain ordinary JS memory. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    releasePinned(this.#core, this.byteLength > 0 ? this.#address : undefined, this.#memory);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #checkLive(): void {
    if (this.#disposed) throw new DisposedError('PinnedBuffer');
  }
}

/**
 * Unpins and drops the context reference. `pages` is passed only so that
 * whoever calls this (the leak guard's closure) holds the memory until then.
 */
function releasePinned(core: ContextCore, address: HostPointer | undefined, pages: ArrayBuffer): void {
  try {
    if (address !== undefined && !core.broken) {
      ensureCurrent(core.handle);
      memHostUnregister(address);
    }
  } finally {
    core.release();
  }
}
