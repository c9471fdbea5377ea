import { cuda } from '../bindings.js';
import { check, cudaError } from '../cuda-error.js';
import { CudaResult } from '../result-code.js';
import type { CUevent, CUstream } from './handles.js';
import { out } from './out-params.js';

/** cuStreamCreateWithPriority: a new stream of the current context (flags: StreamFlags; lower priority = more urgent). */
export function streamCreate(flags = 0, priority = 0): CUstream {
  check(cuda.cuStreamCreateWithPriority(out.handle, flags, priority), 'cuStreamCreateWithPriority');
  return out.handle[0]!;
}

/** cuStreamGetPriority. */
export function streamGetPriority(stream: CUstream): number {
  check(cuda.cuStreamGetPriority(stream, out.i32), 'cuStreamGetPriority');
  return out.i32[0]!;
}

/** cuStreamGetFlags. */
export function streamGetFlags(stream: CUstream): number {
  check(cuda.cuStreamGetFlags(stream, out.u32), 'cuStreamGetFlags');
  return out.u32[0]!;
}

/** cuStreamQuery: true when all work on the stream has completed, false while some is pending. */
export function streamQuery(stream: CUstream): boolean {
  const result = cuda.cuStreamQuery(stream) as number;
  if (result === CudaResult.CUDA_ERROR_NOT_READY) return false;
  check(result, 'cuStreamQuery');
  return true;
}

/** cuStreamSynchronize: blocks the calling thread until the stream's work is done. */
export function streamSynchronize(stream: CUstream): void {
  check(cuda.cuStreamSynchronize(stream), 'cuStreamSynchronize');
}

/**
 * cuStreamSynchronize on koffi's worker pool: the promise settles when the
 * stream's work is done, and the event loop keeps running meanwhile. No
 * context is current on the pool thread; a stream handle names its own
 * context, so pass a created stream here, not the legacy default stream (0n).
 */
export function streamSynchronizeAsync(stream: CUstream): Promise<void> {
  return new Promise((resolve, reject) => {
    cuda.cuStreamSynchronize.async(stream, (err: unknown, result: number) => {
      if (err) reject(err);
      else if (result !== 0) reject(cudaError(result, 'cuStreamSynchronize'));
      else resolve();
    });
  });
}

/** cuStreamWaitEvent: work submitted to `stream` later waits for `event`'s completion. */
export function streamWaitEvent(stream: CUstream, event: CUevent, flags = 0): void {
  check(cuda.cuStreamWaitEvent(stream, event, flags), 'cuStreamWaitEvent');
}

/** cuStreamDestroy_v2: destroys the stream once its pending work completes. */
export function streamDestroy(stream: CUstream): void {
  check(cuda.cuStreamDestroy_v2(stream), 'cuStreamDestroy_v2');
}
