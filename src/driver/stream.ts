import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { Context } from './context.js';
import type { ContextCore } from './context-core.js';
import { CudaError } from './cuda-error.js';
import { Event } from './event.js';
import { StreamFlags } from './generated/enums.js';
import { guard, unguard } from './leak-guard.js';
import { ensureCurrent } from './raw/context.js';
import type { CUstream } from './raw/handles.js';
import { streamCreate, streamDestroy, streamQuery, streamSynchronize, streamSynchronizeAsync, streamWaitEvent } from './raw/stream.js';

/** Options of {@link Stream.create}. */
export interface StreamOptions {
  /** Do not synchronise with the legacy default stream (CU_STREAM_NON_BLOCKING). */
  nonBlocking?: boolean;
  /**
   * Scheduling priority: 0 is the default, and lower numbers are more urgent,
   * down to the context's greatest priority (-5 on current GPUs).
   */
  priority?: number;
}

declare module './event.js' {
  // The stream Event.record takes is a Stream (see EventStream).
  interface EventStream extends Stream {}
}

/** A CUDA stream: an ordered queue of GPU work. Keeps its context alive. */
export class Stream implements Disposable {
  /** Creates a stream in `ctx`. */
  static create(ctx: Context, options: StreamOptions = {}): Stream {
    const { nonBlocking = false, priority = 0 } = options;
    const core = ctx.acquireCore();
    try {
      const { least, greatest } = core.streamPriorityRange();
      if (!Number.isInteger(priority) || priority > least || priority < greatest) {
        throw new InvalidArgumentError(
          `Stream priority ${priority} is outside this device's range: integers from ${least} (lowest) down to ${greatest} (most urgent)`,
        );
      }
      const handle = streamCreate(nonBlocking ? StreamFlags.NON_BLOCKING : StreamFlags.DEFAULT, priority);
      return new Stream(ctx, core, handle, priority);
    } catch (err) {
      core.release();
      throw err;
    }
  }

  readonly #core: ContextCore;
  readonly #handle: CUstream;
  #disposed = false;

  private constructor(
    /** The context the stream belongs to. */
    readonly context: Context,
    core: ContextCore,
    handle: CUstream,
    /** The priority it was created with. */
    readonly priority: number,
  ) {
    this.#core = core;
    this.#handle = handle;
    guard(this, 'Stream', () => releaseStream(core, handle));
  }

  /** The CUstream handle (raw tier). */
  get handle(): CUstream {
    if (this.#disposed) throw new DisposedError('Stream');
    return this.#handle;
  }

  /** Whether {@link dispose} was called. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** @internal The shared context state, for objects that submit work here. */
  get core(): ContextCore {
    return this.#core;
  }

  /** Blocks until all work queued so far has completed. */
  synchronize(): void {
    const handle = this.#enter();
    streamSynchronize(handle);
  }

  /**
   * Resolves when all work queued so far has completed, without blocking the
   * event loop: cuStreamSynchronize runs on a worker thread (it needs no
   * current context there, since the stream names its own). A kernel fault
   * surfaces as a rejected CudaError and marks the context unusable.
   */
  async synchronizeAsync(): Promise<void> {
    const handle = this.#enter();
    if (streamQuery(handle)) return;
    try {
      await streamSynchronizeAsync(handle);
    } catch (err) {
      // The worker thread's failure is not attributed to a context on its own.
      if (err instanceof CudaError && err.sticky) this.#core.markBroken(err);
      throw err;
    }
  }

  /** True when all work queued so far has completed. */
  query(): boolean {
    return streamQuery(this.#enter());
  }

  /** Makes work queued on this stream from now on wait until `event` completes (cross-stream ordering). */
  waitEvent(event: Event): void {
    const eventHandle = event.handle;
    streamWaitEvent(this.#enter(), eventHandle, 0);
  }

  /** Records `event` (a new timing event when omitted) after the work queued so far, and returns it. */
  recordEvent(event?: Event): Event {
    const target = event ?? Event.create(this.context);
    target.record(this);
    return target;
  }

  /** Destroys the stream; work already queued still completes. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    releaseStream(this.#core, this.#handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #enter(): CUstream {
    if (this.#disposed) throw new DisposedError('Stream');
    this.#core.enter();
    return this.#handle;
  }
}

function releaseStream(core: ContextCore, handle: CUstream): void {
  try {
    if (!core.broken) {
      ensureCurrent(core.handle);
      streamDestroy(handle);
    }
  } finally {
    core.release();
  }
}
