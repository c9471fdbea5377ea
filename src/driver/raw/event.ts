import { MissingSymbolError } from '../../errors.js';
import type { NativeFunction } from '../../ffi/lazy-functions.js';
import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import { CudaResult } from '../result-code.js';
import type { CUevent, CUstream } from './handles.js';
import { out } from './out-params.js';

/** cuEventCreate (flags: EventFlags). */
export function eventCreate(flags = 0): CUevent {
  check(cuda.cuEventCreate(out.handle, flags), 'cuEventCreate');
  return out.handle[0]!;
}

/** cuEventRecord: captures the work submitted to `stream` so far. */
export function eventRecord(event: CUevent, stream: CUstream): void {
  check(cuda.cuEventRecord(event, stream), 'cuEventRecord');
}

/** cuEventQuery: true when the recorded work has completed. */
export function eventQuery(event: CUevent): boolean {
  const result = cuda.cuEventQuery(event) as number;
  if (result === CudaResult.CUDA_ERROR_NOT_READY) return false;
  check(result, 'cuEventQuery');
  return true;
}

/** cuEventSynchronize: blocks until the recorded work has completed. */
export function eventSynchronize(event: CUevent): void {
  check(cuda.cuEventSynchronize(event), 'cuEventSynchronize');
}

let elapsedTime: { fn: NativeFunction; name: string } | undefined;

/**
 * cuEventElapsedTime_v2 (CUDA 12.8+), or cuEventElapsedTime on older
 * drivers: milliseconds between two recorded timing events.
 */
export function eventElapsedTime(start: CUevent, end: CUevent): number {
  elapsedTime ??= bindElapsedTime();
  check(elapsedTime.fn(out.f32, start, end), elapsedTime.name);
  return out.f32[0]!;
}

function bindElapsedTime(): { fn: NativeFunction; name: string } {
  try {
    return { fn: cuda.cuEventElapsedTime_v2, name: 'cuEventElapsedTime_v2' };
  } catch (err) {
    if (!(err instanceof MissingSymbolError)) throw err;
    return { fn: cuda.cuEventElapsedTime, name: 'cuEventElapsedTime' };
  }
}

/** cuEventDestroy_v2. */
export function eventDestroy(event: CUevent): void {
  check(cuda.cuEventDestroy_v2(event), 'cuEventDestroy_v2');
}
