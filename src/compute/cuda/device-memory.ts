/** The CUDA driver calls behind the memory pool's device view (see `segment-memory.ts`). */
import type { Context } from '../../driver/context.js';
import { CudaError } from '../../driver/cuda-error.js';
import { DeviceBuffer } from '../../driver/device-buffer.js';
import { Event } from '../../driver/event.js';
import { CudaResult } from '../../driver/result-code.js';
import { SegmentMemory } from '../gpu/segment-memory.js';
import type { CudaStream } from './cuda-context.js';

export function cudaSegmentMemory(context: Context): SegmentMemory<CudaStream> {
  return new SegmentMemory<CudaStream>({
    allocate: (bytes) => {
      try {
        return DeviceBuffer.alloc(context, bytes);
      } catch (err) {
        if (err instanceof CudaError && err.result === CudaResult.CUDA_ERROR_OUT_OF_MEMORY) return undefined;
        throw err;
      }
    },
    synchronize: () => context.synchronize(),
    memoryInfo: () => context.memoryInfo(),
    createEvent: () => {
      const event = Event.create(context, { timing: false });
      return { record: (stream) => event.record(stream.stream), query: () => event.query(), dispose: () => event.dispose() };
    },
    broken: () => context.unusable,
  });
}
