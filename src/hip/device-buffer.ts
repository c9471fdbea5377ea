import { guard, unguard } from '../driver/leak-guard.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { DevicePointerLike } from '../ffi/kernel-args.js';
import type { HipDevice } from './device.js';
import type { HipDevicePtr } from './raw/handles.js';
import { free, malloc, memcpyDtoH, memcpyHtoD } from './raw/memory.js';

/** Device memory from hipMalloc; passes as a kernel argument through its `ptr`. */
export class HipDeviceBuffer implements DevicePointerLike, Disposable {
  /** Allocates `byteLength` bytes on `device`. */
  static alloc(device: HipDevice, byteLength: number): HipDeviceBuffer {
    if (!Number.isSafeInteger(byteLength) || byteLength <= 0) {
      throw new InvalidArgumentError(`HipDeviceBuffer.alloc: byteLength ${byteLength} is not a positive integer`);
    }
    device.makeCurrent();
    return new HipDeviceBuffer(device, malloc(byteLength), byteLength);
  }

  readonly #ptr: HipDevicePtr;
  #disposed = false;

  private constructor(
    readonly device: HipDevice,
    ptr: HipDevicePtr,
    readonly byteLength: number,
  ) {
    this.#ptr = ptr;
    guard(this, 'HipDeviceBuffer', () => free(ptr));
  }

  /** The device address. */
  get ptr(): HipDevicePtr {
    if (this.#disposed) throw new DisposedError('HipDeviceBuffer');
    return this.#ptr;
  }

  /** Copies `src` to the buffer at `byteOffset` (synchronous). */
  copyFrom(src: ArrayBufferView, byteOffset = 0): void {
    this.#checkRange(byteOffset, src.byteLength);
    this.device.makeCurrent();
    if (src.byteLength > 0) memcpyHtoD(this.ptr + BigInt(byteOffset), src, src.byteLength);
  }

  /** Copies the buffer from `byteOffset` into `dst` (synchronous). */
  copyTo(dst: ArrayBufferView, byteOffset = 0): void {
    this.#checkRange(byteOffset, dst.byteLength);
    this.device.makeCurrent();
    if (dst.byteLength > 0) memcpyDtoH(dst, this.ptr + BigInt(byteOffset), dst.byteLength);
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    free(this.#ptr);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #checkRange(byteOffset: number, bytes: number): void {
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset + bytes > this.byteLength) {
      throw new InvalidArgumentError(`a copy of ${bytes} bytes at offset ${byteOffset} does not fit a ${this.byteLength}-byte buffer`);
    }
  }
}
