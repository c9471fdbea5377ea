import { hip } from '../bindings.js';
import { check, HipError } from '../hip-error.js';
import { HipResult } from '../hip-result.js';
import type { HipEventHandle, HipStreamHandle } from './handles.js';
import { out } from '../../driver/raw/out-params.js';

/** hipStreamCreateWithPriority on the current device (flags: HipStreamFlags). */
export function streamCreate(flags = 0, priority = 0): HipStreamHandle {
  check(hip.hipStreamCreateWithPriority(out.handle, flags, priority), 'hipStreamCreateWithPriority');
  return out.handle[0]!;
}

/** hipStreamQuery: true when the stream's work has completed, false while some is pending. */
export function streamQuery(stream: HipStreamHandle): boolean {
  const result = hip.hipStreamQuery(stream) as number;
  if (result === HipResult.hipErrorNotReady) return false;
  check(result, 'hipStreamQuery');
  return true;
}

/** hipStreamSynchronize: blocks the calling thread until the stream's work is done. */
export function streamSynchronize(stream: HipStreamHandle): void {
  check(hip.hipStreamSynchronize(stream), 'hipStreamSynchronize');
}

/** hipStreamSynchronize on koffi's worker pool: settles when the work is done, the event loop running meanwhile. */
export function streamSynchronizeAsync(stream: HipStreamHandle): Promise<void> {
  return new Promise((resolve, reject) => {
    hip.hipStreamSynchronize.async(stream, (err: unknown, result: number) => {
      if (err) reject(err);
      else if (result !== 0) reject(new HipError(result, 'hipStreamSynchronize'));
      else resolve();
    });
  });
}

/** hipStreamWaitEvent: later work on `stream` waits for `event`. */
export function streamWaitEvent(stream: HipStreamHandle, event: HipEventHandle, flags = 0): void {
  check(hip.hipStreamWaitEvent(stream, event, flags), 'hipStreamWaitEvent');
}

/** hipStreamDestroy. */
export function streamDestroy(stream: HipStreamHandle): void {
  check(hip.hipStreamDestroy(stream), 'hipStreamDestroy');
}
