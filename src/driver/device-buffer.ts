import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { DevicePointerLike } from '../ffi/kernel-args.js';
import type { Context } from './context.js';
import type { ContextCore } from './context-core.js';
import { copyByteLength } from './copy-range.js';
import { MemPoolAttribute } from './generated/enums.js';
import { guard, unguard } from './leak-guard.js';
import { ensureCurrent } from './raw/context.js';
import { memcpyPeer, memcpyPeerAsync } from './raw/peer.js';
import { deviceGetDefaultMemPool } from './raw/device.js';
import { streamSynchronize } from './raw/stream.js';
import type { CUdeviceptr, CUstream } from './raw/handles.js';
import {
  memAlloc,
  memAllocAsync,
  memcpyDtoD,
  memcpyDtoDAsync,
  memcpyDtoH,
  memcpyDtoHAsync,
  memcpyHtoD,
  memcpyHtoDAsync,
  memFree,
  memFreeAsync,
  memPoolSetAttribute,
  memsetD16,
  memsetD16Async,
  memsetD32,
  memsetD32Async,
  memsetD8,
  memsetD8Async,
} from './raw/memory.js';
import type { PinnedBuffer } from './pinned-buffer.js';
import type { Stream } from './stream.js';

/** Element types {@link DeviceBuffer.fill} can write. */
export type FillType = 'u8' | 'u16' | 'u32' | 'i32' | 'f32';

/** What keeps a view's memory alive and says when it is gone: the parent buffer or a module. */
export interface BufferOwner {
  readonly disposed: boolean;
}

/** Devices whose default memory pool already keeps freed memory cached (see {@link DeviceBuffer.alloc}). */
const poolsRaised = new Set<number>();

const fillBits = new DataView(new ArrayBuffer(4));

/**
 * Device memory. Owns its allocation (or, for views, keeps the owner alive
 * and refuses to work once the owner is disposed). Pass it directly as a
 * kernel argument: it stands for its device address.
 *
 * Operations given no stream run on the legacy default stream, which orders
 * them with blocking streams but not with `nonBlocking` ones; the host copies
 * among them return once the data has arrived.
 */
export class DeviceBuffer implements DevicePointerLike, Disposable {
  /**
   * Allocates `byteLength` bytes (contents undefined). With a `stream`, the
   * allocation is stream-ordered (cuMemAllocAsync) from the device's default
   * pool, whose release threshold is raised on first use so freed memory stays
   * cached for reuse instead of going back to the OS at each synchronisation.
   * Zero bytes gives an empty buffer whose pointer is 0n.
   */
  static alloc(ctx: Context, byteLength: number, options: { stream?: Stream } = {}): DeviceBuffer {
    if (!Number.isSafeInteger(byteLength) || byteLength < 0) {
      throw new InvalidArgumentError(`DeviceBuffer.alloc: byteLength ${byteLength} is not a non-negative integer`);
    }
    const { stream } = options;
    const core = ctx.acquireCore();
    try {
      if (stream !== undefined && stream.core !== core) {
        throw new InvalidArgumentError('DeviceBuffer.alloc: the stream belongs to another context');
      }
      let ptr = 0n;
      if (byteLength > 0) {
        if (stream === undefined) {
          ptr = memAlloc(byteLength);
        } else {
          if (!poolsRaised.has(core.device)) {
            memPoolSetAttribute(deviceGetDefaultMemPool(core.device), MemPoolAttribute.RELEASE_THRESHOLD, 2n ** 64n - 1n);
            poolsRaised.add(core.device);
          }
          ptr = memAllocAsync(byteLength, stream.handle);
        }
      }
      return new DeviceBuffer(ctx, core, ptr, byteLength, undefined, stream);
    } catch (err) {
      core.release();
      throw err;
    }
  }

  /**
   * @internal A non-owning view of memory that `owner` keeps alive (a parent
   * buffer, or a module for its globals).
   */
  static viewOf(owner: BufferOwner, context: Context, core: ContextCore, ptr: CUdeviceptr, byteLength: number): DeviceBuffer {
    return new DeviceBuffer(context, core, ptr, byteLength, owner, undefined);
  }

  readonly #core: ContextCore;
  readonly #ptr: CUdeviceptr;
  readonly #owner: BufferOwner | undefined;
  /** The stream a stream-ordered allocation came from; freed on it unless dispose names another. */
  readonly #allocStream: Stream | undefined;
  #disposed = false;

  private constructor(
    /** The context the memory belongs to. */
    readonly context: Context,
    core: ContextCore,
    ptr: CUdeviceptr,
    /** Size in bytes. */
    readonly byteLength: number,
    owner: BufferOwner | undefined,
    allocStream: Stream | undefined,
  ) {
    this.#core = core;
    this.#ptr = ptr;
    this.#owner = owner;
    this.#allocStream = allocStream;
    if (owner === undefined && ptr !== 0n) {
      // A collected stream-ordered allocation may outlive its stream: free it in order on the legacy default stream.
      const stream = allocStream === undefined ? undefined : 0n;
      guard(this, 'DeviceBuffer', () => releaseMemory(core, ptr, stream));
    }
  }

  /** The device address. Throws DisposedError once this buffer (or a view's owner) is disposed. */
  get ptr(): CUdeviceptr {
    if (this.#disposed || (this.#owner !== undefined && this.#owner.disposed)) throw this.#disposedError();
    return this.#ptr;
  }

  /** Whether the memory is gone: this buffer, or the owner of a view, was disposed. */
  get disposed(): boolean {
    return this.#disposed || (this.#owner !== undefined && this.#owner.disposed);
  }

  /** Whether this is a non-owning view (from {@link view} or a module global). */
  get isView(): boolean {
    return this.#owner !== undefined;
  }

  /** Copies host memory in, synchronously. See copyByteLength for how sizes must match. */
  copyFromHost(src: ArrayBufferView, options: { byteOffset?: number } = {}): void {
    const length = copyByteLength('copyFromHost', this.byteLength, src.byteLength, options.byteOffset, undefined);
    const dst = this.#enter();
    if (length === 0) return;
    memcpyHtoD(offsetPointer(dst, options.byteOffset), hostView(src), length);
    // From pageable memory the driver returns once the data is staged, not landed: wait for the
    // last DMA so work on any stream (non-blocking ones included) sees the data.
    streamSynchronize(0n);
  }

  /** Copies into host memory, synchronously. See copyByteLength for how sizes must match. */
  copyToHost(dst: ArrayBufferView, options: { byteOffset?: number } = {}): void {
    const length = copyByteLength('copyToHost', this.byteLength, dst.byteLength, options.byteOffset, undefined);
    const src = this.#enter();
    if (length > 0) memcpyDtoH(hostView(dst), offsetPointer(src, options.byteOffset), length);
  }

  /**
   * Queues a copy from pinned memory on `stream`. `byteOffset` is where it
   * lands in this buffer; `byteLength` defaults to the whole pinned buffer.
   */
  copyFromHostAsync(src: PinnedBuffer, stream: Stream, options: { byteOffset?: number; byteLength?: number } = {}): void {
    const length = copyByteLength('copyFromHostAsync', this.byteLength, src.byteLength, options.byteOffset, options.byteLength);
    const streamHandle = this.#streamHandle(stream, 'copyFromHostAsync');
    const dst = this.#enter();
    if (length > 0) memcpyHtoDAsync(offsetPointer(dst, options.byteOffset), src.address, length, streamHandle);
  }

  /**
   * Queues a copy into pinned memory on `stream`. `byteOffset` is where it is
   * read in this buffer; `byteLength` defaults to the whole pinned buffer.
   * The data is there once the stream reaches this point (synchronize first).
   */
  copyToHostAsync(dst: PinnedBuffer, stream: Stream, options: { byteOffset?: number; byteLength?: number } = {}): void {
    const length = copyByteLength('copyToHostAsync', this.byteLength, dst.byteLength, options.byteOffset, options.byteLength);
    const streamHandle = this.#streamHandle(stream, 'copyToHostAsync');
    const src = this.#enter();
    if (length > 0) memcpyDtoHAsync(dst.address, offsetPointer(src, options.byteOffset), length, streamHandle);
  }

  /**
   * Copies from another device buffer (ordered on `stream` when given). A buffer of another
   * device is copied with cuMemcpyPeer / cuMemcpyPeerAsync: directly over NVLink or PCIe where
   * peer access is enabled (`context.enablePeerAccess`), staged through host memory by the driver
   * otherwise. For such a copy the stream may belong to either buffer's context.
   */
  copyFrom(src: DeviceBuffer, options: { stream?: Stream; byteLength?: number } = {}): void {
    const length = copyByteLength('copyFrom', this.byteLength, src.byteLength, undefined, options.byteLength);
    const from = src.ptr;
    const srcCore = src.#core;
    if (srcCore === this.#core) {
      const stream = options.stream === undefined ? undefined : this.#streamHandle(options.stream, 'copyFrom');
      const to = this.#enter();
      if (length === 0) return;
      if (stream === undefined) memcpyDtoD(to, from, length);
      else memcpyDtoDAsync(to, from, length, stream);
      return;
    }
    const { stream } = options;
    if (stream !== undefined && stream.core !== this.#core && stream.core !== srcCore) {
      throw new InvalidArgumentError('copyFrom: the stream belongs to neither buffer\'s context');
    }
    const streamHandle = stream?.handle;
    srcCore.enter();
    const to = this.#enter();
    if (length === 0) return;
    if (streamHandle === undefined) memcpyPeer(to, this.#core.handle, from, srcCore.handle, length);
    else memcpyPeerAsync(to, this.#core.handle, from, srcCore.handle, length, streamHandle);
  }

  /**
   * Sets every element to `value`, read as `dtype` (the byte length must be a
   * whole number of elements). Ordered on `stream` when given.
   */
  fill(value: number, options: { dtype: FillType; stream?: Stream }): void {
    const { dtype, stream } = options;
    const size = dtype === 'u8' ? 1 : dtype === 'u16' ? 2 : 4;
    const bits = fillPattern(value, dtype);
    if (this.byteLength % size !== 0) {
      throw new InvalidArgumentError(`fill: ${this.byteLength} bytes is not a whole number of ${dtype} elements`);
    }
    const streamHandle = stream === undefined ? undefined : this.#streamHandle(stream, 'fill');
    const ptr = this.#enter();
    if (Number(ptr % BigInt(size)) !== 0) {
      throw new InvalidArgumentError(`fill: the buffer's address is not ${size}-byte aligned for ${dtype} (a view at an odd offset?)`);
    }
    const count = this.byteLength / size;
    if (count === 0) return;
    if (streamHandle === undefined) {
      if (size === 1) memsetD8(ptr, bits, count);
      else if (size === 2) memsetD16(ptr, bits, count);
      else memsetD32(ptr, bits, count);
    } else if (size === 1) memsetD8Async(ptr, bits, count, streamHandle);
    else if (size === 2) memsetD16Async(ptr, bits, count, streamHandle);
    else memsetD32Async(ptr, bits, count, streamHandle);
  }

  /** A non-owning view of `byteLength` bytes at `byteOffset`; it keeps this buffer alive and dies with it. */
  view(byteOffset: number, byteLength: number): DeviceBuffer {
    if (!Number.isSafeInteger(byteOffset) || !Number.isSafeInteger(byteLength) || byteOffset < 0 || byteLength < 0) {
      throw new InvalidArgumentError(`view(${byteOffset}, ${byteLength}): offset and length must be non-negative integers`);
    }
    if (byteOffset + byteLength > this.byteLength) {
      throw new InvalidArgumentError(`view(${byteOffset}, ${byteLength}) runs past the end of the ${this.byteLength}-byte buffer`);
    }
    const ptr = this.ptr;
    return new DeviceBuffer(this.context, this.#core, ptr + BigInt(byteOffset), byteLength, this.#owner ?? this, undefined);
  }

  /**
   * Frees the memory (views: just stops using it). With a `stream`, the free
   * is stream-ordered (cuMemFreeAsync) and safe while kernels queued on that
   * stream still use the buffer. Idempotent.
   */
  dispose(options: { stream?: Stream } = {}): void {
    if (this.#disposed) return;
    const stream = options.stream ?? (this.#allocStream?.disposed === false ? this.#allocStream : undefined);
    const streamHandle = stream === undefined ? undefined : this.#streamHandle(stream, 'dispose');
    this.#disposed = true;
    if (this.#owner !== undefined) return;
    if (this.#ptr !== 0n) unguard(this);
    // A stream-ordered allocation whose stream is gone is freed in order on the legacy default stream.
    releaseMemory(this.#core, this.#ptr, streamHandle ?? (this.#allocStream ? 0n : undefined));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #enter(): CUdeviceptr {
    const ptr = this.ptr;
    this.#core.enter();
    return ptr;
  }

  #streamHandle(stream: Stream, what: string): CUstream {
    if (stream.core !== this.#core) throw new InvalidArgumentError(`${what}: the stream belongs to another context than the buffer`);
    return stream.handle;
  }

  #disposedError(): DisposedError {
    return new DisposedError(this.#disposed ? 'DeviceBuffer' : 'The buffer or module this DeviceBuffer view belongs to');
  }
}

/** The bit pattern cuMemsetD8/16/32 writes for `value` as `dtype`, validated. */
export function fillPattern(value: number, dtype: FillType): number {
  const integerRange: Record<Exclude<FillType, 'f32'>, [number, number]> = {
    u8: [0, 0xff],
    u16: [0, 0xffff],
    u32: [0, 0xffffffff],
    i32: [-(2 ** 31), 2 ** 31 - 1],
  };
  if (dtype === 'f32') {
    if (typeof value !== 'number') throw new InvalidArgumentError(`fill: ${String(value)} is not a number`);
    fillBits.setFloat32(0, value, true);
    return fillBits.getUint32(0, true);
  }
  const range = integerRange[dtype];
  if (range === undefined) throw new InvalidArgumentError(`fill: unknown dtype ${String(dtype)}`);
  if (!Number.isInteger(value) || value < range[0] || value > range[1]) {
    throw new InvalidArgumentError(`fill: ${value} is not a ${dtype} (an integer in [${range[0]}, ${range[1]}])`);
  }
  return value >>> 0;
}

/** `ptr + byteOffset`, without allocating a BigInt when there is no offset (the common, hot case). */
function offsetPointer(ptr: CUdeviceptr, byteOffset: number | undefined): CUdeviceptr {
  return byteOffset ? ptr + BigInt(byteOffset) : ptr;
}

function hostView(view: ArrayBufferView): ArrayBufferView {
  return view instanceof DataView ? new Uint8Array(view.buffer, view.byteOffset, view.byteLength) : view;
}

function releaseMemory(core: ContextCore, ptr: CUdeviceptr, stream: CUstream | undefined): void {
  try {
    if (ptr !== 0n && !core.broken) {
      ensureCurrent(core.handle);
      if (stream === undefined) memFree(ptr);
      else memFreeAsync(ptr, stream);
    }
  } finally {
    core.release();
  }
}
