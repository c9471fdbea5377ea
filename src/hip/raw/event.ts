import { hip } from '../bindings.js';
import { check } from '../hip-error.js';
import { HipResult } from '../hip-result.js';
import type { HipEventHandle, HipStreamHandle } from './handles.js';
import { out } from '../../driver/raw/out-params.js';

/** hipEventCreateWithFlags (flags: HipEventFlags). */
export function eventCreate(flags = 0): HipEventHandle {
  check(hip.hipEventCreateWithFlags(out.handle, flags), 'hipEventCreateWithFlags');
  return out.handle[0]!;
}

/** hipEventRecord. */
export function eventRecord(event: HipEventHandle, stream: HipStreamHandle): void {
  check(hip.hipEventRecord(event, stream), 'hipEventRecord');
}

/** hipEventQuery: true once the recorded work has completed. */
export function eventQuery(event: HipEventHandle): boolean {
  const result = hip.hipEventQuery(event) as number;
  if (result === HipResult.hipErrorNotReady) return false;
  check(result, 'hipEventQuery');
  return true;
}

/** hipEventSynchronize. */
export function eventSynchronize(event: HipEventHandle): void {
  check(hip.hipEventSynchronize(event), 'hipEventSynchronize');
}

/** hipEventElapsedTime in milliseconds. */
export function eventElapsedTime(start: HipEventHandle, stop: HipEventHandle): number {
  check(hip.hipEventElapsedTime(out.f32, start, stop), 'hipEventElapsedTime');
  return out.f32[0]!;
}

/** hipEventDestroy. */
export function eventDestroy(event: HipEventHandle): void {
  check(hip.hipEventDestroy(event), 'hipEventDestroy');
}
