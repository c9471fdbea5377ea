import { guard, unguard } from '../driver/leak-guard.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { HipDevice } from './device.js';
import type { HipEvent } from './event.js';
import { HipStreamFlags } from './generated/enums.js';
import { deviceGetStreamPriorityRange } from './raw/device.js';
import type { HipStreamHandle } from './raw/handles.js';
import { streamCreate, streamDestroy, streamQuery, streamSynchronize, streamSynchronizeAsync, streamWaitEvent } from './raw/stream.js';

/** Options of {@link HipStream.create}. */
export interface HipStreamOptions {
  /** Do not synchronise with the null stream (hipStreamNonBlocking). */
  nonBlocking?: boolean;
  /** Scheduling priority; lower numbers are more urgent, within the device's range. */
  priority?: number;
}

declare module './event.js' {
  // The stream HipEvent.record takes is a HipStream (see HipEventStream).
  interface HipEventStream extends HipStream {}
}

/** A HIP stream on one device: an ordered queue of GPU work. */
export class HipStream implements Disposable {
  /** Creates a stream on `device`. */
  static create(device: HipDevice, options: HipStreamOptions = {}): HipStream {
    const { nonBlocking = false, priority = 0 } = options;
    device.makeCurrent();
    const { least, greatest } = deviceGetStreamPriorityRange();
    if (!Number.isInteger(priority) || priority > least || priority < greatest) {
      throw new InvalidArgumentError(`Stream priority ${priority} is outside this device's range ${least} (lowest) to ${greatest} (most urgent)`);
    }
    return new HipStream(device, streamCreate(nonBlocking ? HipStreamFlags.NonBlocking : HipStreamFlags.Default, priority));
  }

  readonly #handle: HipStreamHandle;
  #disposed = false;

  private constructor(
    /** The device the stream queues work on. */
    readonly device: HipDevice,
    handle: HipStreamHandle,
  ) {
    this.#handle = handle;
    guard(this, 'HipStream', () => destroy(device, handle));
  }

  /** The hipStream_t (raw tier). */
  get handle(): HipStreamHandle {
    if (this.#disposed) throw new DisposedError('HipStream');
    return this.#handle;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** Blocks until the work queued so far has completed. */
  synchronize(): void {
    streamSynchronize(this.#enter());
  }

  /** Resolves when the work queued so far has completed, without blocking the event loop. */
  async synchronizeAsync(): Promise<void> {
    const handle = this.#enter();
    if (streamQuery(handle)) return;
    await streamSynchronizeAsync(handle);
  }

  /** True when the work queued so far has completed. */
  query(): boolean {
    return streamQuery(this.#enter());
  }

  /** Work queued here from now on waits for `event`. */
  waitEvent(event: HipEvent): void {
    streamWaitEvent(this.#enter(), event.handle, 0);
  }

  /** Destroys the stream; queued work still completes. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    destroy(this.device, this.#handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #enter(): HipStreamHandle {
    if (this.#disposed) throw new DisposedError('HipStream');
    this.device.makeCurrent();
    return this.#handle;
  }
}

function destroy(device: HipDevice, handle: HipStreamHandle): void {
  device.makeCurrent();
  streamDestroy(handle);
}
