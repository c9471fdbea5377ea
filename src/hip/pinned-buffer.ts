import koffi from 'koffi';
import { guard, unguard } from '../driver/leak-guard.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { HipDevice } from './device.js';
import type { HipHostPtr } from './raw/handles.js';
import { hostRegister, hostUnregister } from './raw/memory.js';

const PAGE = 4096;

/**
 * Page-locked host memory: a JS ArrayBuffer registered with hipHostRegister, so
 * asynchronous copies may read or write it after the call returns and JS sees it
 * as ordinary bytes.
 */
export class HipPinnedBuffer implements Disposable {
  static alloc(device: HipDevice, byteLength: number): HipPinnedBuffer {
    if (!Number.isSafeInteger(byteLength) || byteLength <= 0) {
      throw new InvalidArgumentError(`HipPinnedBuffer.alloc: byteLength ${byteLength} is not a positive integer`);
    }
    const pinnedBytes = Math.ceil(byteLength / PAGE) * PAGE;
    const memory = new ArrayBuffer(pinnedBytes + PAGE);
    const base = koffi.address(memory);
    const offset = (PAGE - Number(base % BigInt(PAGE))) % PAGE;
    const address = base + BigInt(offset);
    device.makeCurrent();
    hostRegister(address, pinnedBytes, 0);
    return new HipPinnedBuffer(memory, offset, byteLength, address);
  }

  /** Keeps the registered memory alive as long as the buffer. */
  readonly #memory: ArrayBuffer;
  readonly #address: HipHostPtr;
  readonly #bytes: Uint8Array;
  #disposed = false;

  private constructor(memory: ArrayBuffer, offset: number, readonly byteLength: number, address: HipHostPtr) {
    this.#memory = memory;
    this.#address = address;
    this.#bytes = new Uint8Array(memory, offset, byteLength);
    // The release closure holds the ArrayBuffer, so the memory outlives its registration.
    guard(this, 'HipPinnedBuffer', () => {
      hostUnregister(address);
      void memory.byteLength;
    });
  }

  /** The host address, for asynchronous copies. */
  get address(): HipHostPtr {
    if (this.#disposed) throw new DisposedError('HipPinnedBuffer');
    return this.#address;
  }

  /** The memory as bytes. */
  get bytes(): Uint8Array {
    if (this.#disposed) throw new DisposedError('HipPinnedBuffer');
    return this.#bytes;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    hostUnregister(this.#address);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
