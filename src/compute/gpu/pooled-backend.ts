/**
 * What the CUDA and HIP backends share beyond the portable op launchers: device memory from the
 * caching stream-aware pool, the backend's streams, and the rule that orders buffers across them.
 *
 * Stream ordering: every buffer remembers the stream that used it last. When work on stream S
 * touches a buffer last used on stream T, S waits for an event recorded on T at that moment (which
 * covers the buffer's last use there); the buffer then belongs to S. Freed buffers return to the
 * pool arena of their last stream, so S may reuse them at once and other streams only once that
 * work is done.
 *
 * A runtime (the CUDA driver, HIP) supplies its streams, events and copies through
 * {@link PooledRuntime}, as it supplies device allocations to the pool through `SegmentMemory`.
 */
import { CaptureError, DisposedError, InvalidArgumentError } from '../../errors.js';
import type { BackendStream, PoolStats } from '../backend/backend.js';
import { dtypeSize } from '../core/dtype.js';
import { MemoryPool, type MemoryPoolOptions, type PoolBlock, type Reservation } from './memory-pool.js';
import type { SegmentMemory } from './segment-memory.js';
import type { BackendBuffer, TensorView } from '../core/view.js';
import type { Scratch } from './launch-context.js';
import { PortableOpsBackend } from './portable-ops-backend.js';

/** A runtime stream as a pooled backend uses it. */
export interface RuntimeStream<E> {
  waitEvent(event: E): void;
  dispose(): void;
}

/** A runtime event as a pooled backend uses it: a marker recorded on a stream. */
export interface RuntimeEvent<S> {
  record(stream: S): void;
  dispose(): void;
}

/** The runtime calls of a pooled backend (S its streams, E its events). */
export interface PooledRuntime<S, E> {
  /** 'CUDA' or 'HIP', for messages. */
  readonly name: string;
  /** A new non-blocking stream. */
  createStream(): S;
  /** A new event without timing. */
  createMarker(): E;
  /** Makes the device current on this thread. */
  makeCurrent(): void;
  /** Host → device in `stream`'s order; `src` may be reused as soon as this returns. */
  write(stream: S, dst: bigint, src: ArrayBufferView): void;
  /** Device → host in `stream`'s order; returns when `dst` holds the data. */
  read(stream: S, dst: ArrayBufferView, src: bigint): void;
  /** Device → host in `stream`'s order through pinned staging, waiting without blocking the event loop. */
  readAsync(stream: S, dst: Uint8Array, src: bigint): Promise<void>;
  /** Device → device in `stream`'s order. */
  copy(stream: S, dst: bigint, src: bigint, bytes: number): void;
}

/** A stream of a pooled backend. */
export class PooledStream<S, E> implements BackendStream {
  /** Reused to order other streams after this one (re-recording is safe once waited on). */
  marker: E | undefined = undefined;

  constructor(
    readonly id: number,
    /** The runtime stream (non-blocking). */
    readonly stream: S,
  ) {}
}

/** Device memory of a pooled backend: a pool block and the stream that used it last. */
export class PooledBuffer<S, E> implements BackendBuffer {
  /** The stream that used the buffer last; other streams wait for it before touching the buffer. */
  lastStream: PooledStream<S, E>;
  /** Set once the buffer went back to the pool. */
  freed = false;

  constructor(
    /** The backend that allocated it. */
    readonly owner: object,
    readonly block: PoolBlock,
    /** Bytes requested (the block may be larger). */
    readonly byteLength: number,
    stream: PooledStream<S, E>,
  ) {
    this.lastStream = stream;
  }

  /** Device address of the first byte. */
  get address(): bigint {
    return this.block.address;
  }
}

/** What a pooled backend tracks while a graph capture records (see {@link PooledBackend.startRecording}). */
interface Recording<S, E> {
  readonly stream: PooledStream<S, E>;
  /** The stream that was current before: current again when the recording stops. */
  readonly previous: PooledStream<S, E>;
  /** Every buffer the recorded work touched. */
  readonly touched: Set<PooledBuffer<S, E>>;
  readonly reservation: Reservation;
}

/** What a stopped recording leaves for its graph. */
export interface RecordedMemory<S, E> {
  /** Buffers the graph touches that it did not allocate: a replay orders them onto its stream first. */
  readonly external: readonly PooledBuffer<S, E>[];
  /** The pool blocks the graph holds. */
  readonly reservation: Reservation;
}

/** The pool, streams and stream ordering of a GPU backend; subclasses add the device and the ops that need more. */
export abstract class PooledBackend<S extends RuntimeStream<E>, E extends RuntimeEvent<S>> extends PortableOpsBackend<S> {
  readonly pool: MemoryPool<PooledStream<S, E>>;
  readonly #runtime: PooledRuntime<S, E>;
  readonly #memory: SegmentMemory<PooledStream<S, E>>;
  readonly #streams: PooledStream<S, E>[] = [];
  /** The backend's own streams (graph capture), which setStream refuses. */
  readonly #privateStreams: PooledStream<S, E>[] = [];
  #current: PooledStream<S, E>;
  #recording: Recording<S, E> | undefined = undefined;
  /** Ids of the streams made so far (0 is the default stream). */
  #streamCount = 0;
  #disposed = false;

  protected constructor(runtime: PooledRuntime<S, E>, memory: SegmentMemory<PooledStream<S, E>>, poolOptions: MemoryPoolOptions) {
    super();
    this.#runtime = runtime;
    this.#memory = memory;
    this.pool = new MemoryPool<PooledStream<S, E>>(memory, poolOptions);
    this.#current = this.#newStream();
  }

  /** Waits for the device's work before dispose frees everything (where the device still answers). */
  protected abstract settle(): void;
  /** Frees what the subclass holds; called by dispose after the pool, before the streams. */
  protected abstract releaseResources(): void;
  /** Called last by dispose, after the streams (the CUDA backend releases its context here). */
  protected closeDevice(): void {}

  // ------------------------------------------------------------ memory

  alloc(byteLength: number): PooledBuffer<S, E> {
    this.checkOpen();
    return new PooledBuffer(this, this.pool.alloc(byteLength, this.#current), byteLength, this.#current);
  }

  free(buffer: BackendBuffer): void {
    const buf = this.#buffer(buffer);
    if (this.#disposed) return;  // the pool already gave everything back
    buf.freed = true;
    this.pool.free(buf.block, buf.lastStream);
  }

  write(dst: BackendBuffer, src: ArrayBufferView, byteOffset = 0): void {
    const buf = this.#buffer(dst);
    this.#checkRange(buf, byteOffset, src.byteLength);
    if (src.byteLength === 0) return;
    this.#runtime.write(this.#use(buf), buf.address + BigInt(byteOffset), src);
  }

  read(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): void {
    const buf = this.#buffer(src);
    this.#checkRange(buf, byteOffset, dst.byteLength);
    if (dst.byteLength === 0) return;
    this.#runtime.read(this.#use(buf), dst, buf.address + BigInt(byteOffset));
  }

  async readAsync(src: BackendBuffer, dst: ArrayBufferView, byteOffset = 0): Promise<void> {
    const buf = this.#buffer(src);
    this.#checkRange(buf, byteOffset, dst.byteLength);
    if (dst.byteLength === 0) return;
    const bytes = new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength);
    await this.#runtime.readAsync(this.#use(buf), bytes, buf.address + BigInt(byteOffset));
  }

  copy(dst: TensorView, src: TensorView): void {
    const stream = this.enqueue(dst, src);
    const bytes = src.size * dtypeSize[src.dtype];
    if (bytes === 0) return;
    this.#runtime.makeCurrent();
    this.#runtime.copy(stream, this.address(dst), this.address(src), bytes);
  }

  memoryStats(): PoolStats {
    return this.pool.stats();
  }

  trim(): void {
    this.checkOpen();
    this.assertNotRecording('trim');
    this.pool.trim();
  }

  // ------------------------------------------------------------ streams

  createStream(): BackendStream {
    this.checkOpen();
    return this.#newStream();
  }

  setStream(s: BackendStream): void {
    this.checkOpen();
    this.assertNotRecording('setStream');
    if (!(s instanceof PooledStream) || !this.#streams.includes(s)) {
      throw new InvalidArgumentError(`setStream: the stream was not created by this ${this.#runtime.name} backend`);
    }
    this.#current = s;
  }

  currentStream(): BackendStream {
    return this.#current;
  }

  /** The runtime stream work is queued on now. */
  get stream(): S {
    return this.#current.stream;
  }

  /** The id of the current stream (0 for the default one, then in creation order). */
  protected get currentStreamId(): number {
    return this.#current.id;
  }

  dispose(): void {
    if (this.#disposed) return;
    try {
      this.settle();
    } finally {
      this.#disposed = true;
      this.pool.dispose();
      this.#memory.dispose();
      this.releaseResources();
      for (const s of [...this.#streams, ...this.#privateStreams]) {
        s.marker?.dispose();
        s.stream.dispose();
      }
      this.#streams.length = 0;
      this.#privateStreams.length = 0;
      this.closeDevice();
    }
  }

  // ------------------------------------------------------------ LaunchContext

  enqueue(...views: (TensorView | undefined)[]): S {
    this.checkOpen();
    const current = this.#current;
    const recording = this.#recording;
    // Indexed, not for-of: the iterator protocol costs more than the loop body until V8 optimises.
    for (let i = 0; i < views.length; i++) {
      const view = views[i];
      if (view === undefined) continue;
      const buf = view.buffer as PooledBuffer<S, E>;
      // A recording starts with the device idle, so nothing is waited for; replays order what it touched.
      if (recording) recording.touched.add(buf);
      else if (buf.lastStream !== current) this.#handOver(buf, current);
    }
    return current.stream;
  }

  address(view: TensorView): bigint {
    const base = (view.buffer as PooledBuffer<S, E>).address;
    return view.offset === 0 ? base : base + BigInt(view.offset * dtypeSize[view.dtype]);
  }

  scratch(bytes: number): Scratch {
    const stream = this.#current;
    const block = this.pool.alloc(bytes, stream);
    return { address: block.address, release: () => this.pool.free(block, stream) };
  }

  upload(data: ArrayBufferView): Scratch {
    this.checkOpen();
    this.assertNotRecording('a copy between host and device (an optimizer step writes its table of tensors)');
    const memory = this.scratch(data.byteLength);
    try {
      this.#runtime.makeCurrent();
      this.#runtime.write(this.#current.stream, memory.address, data);
    } catch (err) {
      memory.release();
      throw err;
    }
    return memory;
  }

  // ------------------------------------------------------------ graph capture

  /** True while a graph capture records the work queued. */
  get capturing(): boolean {
    return this.#recording !== undefined;
  }

  /** @throws CaptureError while a capture records: `what` cannot be held in a graph. */
  protected assertNotRecording(what: string): void {
    if (this.#recording) {
      throw new CaptureError(`capture: ${what} cannot be recorded in a graph; do it outside the captured function, before or after a replay`);
    }
  }

  /** The backend's own stream number `index` (created on first use; setStream refuses it). */
  protected privateStream(index: number): PooledStream<S, E> {
    while (this.#privateStreams.length <= index) {
      this.#privateStreams.push(new PooledStream<S, E>(this.#streamCount++, this.#runtime.createStream()));
    }
    return this.#privateStreams[index]!;
  }

  /**
   * Makes `stream` current and starts recording what the ops touch and allocate, for a graph the
   * runtime captures from `stream`. The caller has synchronised the device.
   */
  protected startRecording(stream: PooledStream<S, E>): void {
    this.checkOpen();
    if (this.#recording) throw new CaptureError('capture: captures do not nest (a captured function called capture)');
    this.#recording = { stream, previous: this.#current, touched: new Set(), reservation: this.pool.beginRecording() };
    this.#current = stream;
  }

  /** Stops the recording and restores the previous stream. */
  protected stopRecording(): RecordedMemory<S, E> {
    const recording = this.#recording!;
    this.#recording = undefined;
    this.#current = recording.previous;
    this.pool.endRecording();
    const { blocks } = recording.reservation;
    const external = [...recording.touched].filter((buf) => !blocks.has(buf.block));
    return { external, reservation: recording.reservation };
  }

  /** Orders `buffers` onto the current stream (for a replay) and returns it. */
  protected orderOnCurrent(buffers: readonly PooledBuffer<S, E>[]): PooledStream<S, E> {
    this.checkOpen();
    const current = this.#current;
    for (const buf of buffers) if (buf.lastStream !== current) this.#handOver(buf, current);
    return current;
  }

  /** Makes `to` wait for the work queued so far on `from`. */
  protected orderStreams(from: PooledStream<S, E>, to: PooledStream<S, E>): void {
    from.marker ??= this.#runtime.createMarker();
    from.marker.record(from.stream);
    to.stream.waitEvent(from.marker);
  }

  /** @throws DisposedError once the backend is disposed. */
  protected checkOpen(): void {
    if (this.#disposed) throw new DisposedError(`The ${this.#runtime.name} backend`);
  }

  // ------------------------------------------------------------ internals

  #newStream(): PooledStream<S, E> {
    const s = new PooledStream<S, E>(this.#streamCount++, this.#runtime.createStream());
    this.#streams.push(s);
    return s;
  }

  /** Orders `buf` onto `to`: `to` waits for everything queued so far on the buffer's last stream. */
  #handOver(buf: PooledBuffer<S, E>, to: PooledStream<S, E>): void {
    this.orderStreams(buf.lastStream, to);
    buf.lastStream = to;
  }

  /** Orders a whole buffer onto the current stream, for host copies (which a capture cannot hold). */
  #use(buf: PooledBuffer<S, E>): S {
    this.checkOpen();
    this.assertNotRecording('a copy between host and device (toArray, tensor(), a host read inside an op)');
    if (buf.lastStream !== this.#current) this.#handOver(buf, this.#current);
    this.#runtime.makeCurrent();
    return this.#current.stream;
  }

  #buffer(buffer: BackendBuffer): PooledBuffer<S, E> {
    if (!(buffer instanceof PooledBuffer) || buffer.owner !== this) {
      throw new InvalidArgumentError(`the buffer was not allocated by this ${this.#runtime.name} backend`);
    }
    if (buffer.freed) throw new DisposedError('The buffer');
    return buffer as PooledBuffer<S, E>;
  }

  #checkRange(buf: PooledBuffer<S, E>, byteOffset: number, byteLength: number): void {
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset + byteLength > buf.byteLength) {
      throw new InvalidArgumentError(`copy of ${byteLength} bytes at offset ${byteOffset} does not fit a ${buf.byteLength}-byte buffer`);
    }
  }
}
