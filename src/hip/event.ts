import { guard, unguard } from '../driver/leak-guard.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { HipDevice } from './device.js';
import { HipEventFlags } from './generated/enums.js';
import { eventCreate, eventDestroy, eventElapsedTime, eventQuery, eventRecord, eventSynchronize } from './raw/event.js';
import type { HipEventHandle, HipStreamHandle } from './raw/handles.js';

/** Options of {@link HipEvent.create}. */
export interface HipEventOptions {
  /** Record timestamps for {@link HipEvent.elapsedMs} (default true). */
  timing?: boolean;
  /** Make {@link HipEvent.synchronize} sleep instead of spinning. */
  blockingSync?: boolean;
}

/**
 * A stream an event is recorded on, as far as this file uses it. stream.ts merges
 * its HipStream class into this interface (declaration merging), so
 * {@link HipEvent.record} takes a HipStream without an import cycle between the
 * two files, which name each other.
 */
export interface HipEventStream {
  readonly device: HipDevice;
  readonly handle: HipStreamHandle;
}

/** A HIP event: a marker in a stream, for ordering streams and timing work. */
export class HipEvent implements Disposable {
  static create(device: HipDevice, options: HipEventOptions = {}): HipEvent {
    const { timing = true, blockingSync = false } = options;
    device.makeCurrent();
    const flags = (timing ? 0 : HipEventFlags.DisableTiming) | (blockingSync ? HipEventFlags.BlockingSync : 0);
    return new HipEvent(device, eventCreate(flags), timing);
  }

  readonly #handle: HipEventHandle;
  #disposed = false;

  private constructor(
    readonly device: HipDevice,
    handle: HipEventHandle,
    /** Whether the event records timestamps. */
    readonly timing: boolean,
  ) {
    this.#handle = handle;
    guard(this, 'HipEvent', () => eventDestroy(handle));
  }

  /** The hipEvent_t (raw tier). */
  get handle(): HipEventHandle {
    if (this.#disposed) throw new DisposedError('HipEvent');
    return this.#handle;
  }

  /** Captures the work queued on `stream` so far. */
  record(stream: HipEventStream): void {
    if (stream.device !== this.device) throw new InvalidArgumentError('HipEvent.record: the stream is on another device than the event');
    eventRecord(this.#enter(), stream.handle);
  }

  synchronize(): void {
    eventSynchronize(this.#enter());
  }

  /** True when the recorded work has completed. */
  query(): boolean {
    return eventQuery(this.#enter());
  }

  /** Milliseconds from `since` to this event; both recorded with timing enabled. */
  elapsedMs(since: HipEvent): number {
    if (!this.timing || !since.timing) throw new InvalidArgumentError('HipEvent.elapsedMs needs two events created with { timing: true }');
    return eventElapsedTime(since.handle, this.#enter());
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    eventDestroy(this.#handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #enter(): HipEventHandle {
    if (this.#disposed) throw new DisposedError('HipEvent');
    this.device.makeCurrent();
    return this.#handle;
  }
}
