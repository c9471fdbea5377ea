import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { Context } from './context.js';
import type { ContextCore } from './context-core.js';
import { EventFlags } from './generated/enums.js';
import { guard, unguard } from './leak-guard.js';
import { ensureCurrent } from './raw/context.js';
import { eventCreate, eventDestroy, eventElapsedTime, eventQuery, eventRecord, eventSynchronize } from './raw/event.js';
import type { CUevent, CUstream } from './raw/handles.js';

/** Options of {@link Event.create}. */
export interface EventOptions {
  /** Record timestamps for {@link Event.elapsedMs} (default true; false makes record/wait cheaper). */
  timing?: boolean;
  /** Make {@link Event.synchronize} sleep instead of spinning (CU_EVENT_BLOCKING_SYNC). */
  blockingSync?: boolean;
}

/**
 * A stream an event is recorded on, as far as this file uses it. stream.ts, which
 * creates events and so imports this file, merges its Stream class into this
 * interface (declaration merging): {@link Event.record} takes a Stream without an
 * import cycle between the two files.
 */
export interface EventStream {
  readonly handle: CUstream;
  /** @internal */
  readonly core: ContextCore;
}

/** A CUDA event: a marker in a stream, for ordering streams and timing work. Keeps its context alive. */
export class Event implements Disposable {
  /** Creates an event in `ctx`. */
  static create(ctx: Context, options: EventOptions = {}): Event {
    const { timing = true, blockingSync = false } = options;
    const core = ctx.acquireCore();
    try {
      const flags = (timing ? 0 : EventFlags.DISABLE_TIMING) | (blockingSync ? EventFlags.BLOCKING_SYNC : 0);
      return new Event(ctx, core, eventCreate(flags), timing);
    } catch (err) {
      core.release();
      throw err;
    }
  }

  readonly #core: ContextCore;
  readonly #handle: CUevent;
  #disposed = false;

  private constructor(
    /** The context the event belongs to. */
    readonly context: Context,
    core: ContextCore,
    handle: CUevent,
    /** Whether the event records timestamps. */
    readonly timing: boolean,
  ) {
    this.#core = core;
    this.#handle = handle;
    guard(this, 'Event', () => releaseEvent(core, handle));
  }

  /** The CUevent handle (raw tier). */
  get handle(): CUevent {
    if (this.#disposed) throw new DisposedError('Event');
    return this.#handle;
  }

  /** Whether {@link dispose} was called. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** Captures the work queued on `stream` so far (the legacy default stream when omitted). */
  record(stream?: EventStream): void {
    const streamHandle = stream === undefined ? 0n : stream.handle;
    if (stream !== undefined && stream.core !== this.#core) {
      throw new InvalidArgumentError('Event.record: the stream belongs to another context than the event');
    }
    eventRecord(this.#enter(), streamHandle);
  }

  /** Blocks until the recorded work has completed. */
  synchronize(): void {
    eventSynchronize(this.#enter());
  }

  /** True when the recorded work has completed (or the event was never recorded). */
  query(): boolean {
    return eventQuery(this.#enter());
  }

  /** Milliseconds from `since` to this event; both must have been recorded with timing enabled. */
  elapsedMs(since: Event): number {
    if (!this.timing || !since.timing) {
      throw new InvalidArgumentError('Event.elapsedMs needs two events created with { timing: true }');
    }
    const start = since.handle;
    return eventElapsedTime(start, this.#enter());
  }

  /** Destroys the event. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    releaseEvent(this.#core, this.#handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #enter(): CUevent {
    if (this.#disposed) throw new DisposedError('Event');
    this.#core.enter();
    return this.#handle;
  }
}

function releaseEvent(core: ContextCore, handle: CUevent): void {
  try {
    if (!core.broken) {
      ensureCurrent(core.handle);
      eventDestroy(handle);
    }
  } finally {
    core.release();
  }
}
