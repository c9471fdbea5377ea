/** The HIP runtime calls behind the memory pool's device view (see `segment-memory.ts`). */
import { HipDeviceBuffer } from '../../hip/device-buffer.js';
import type { HipDevice } from '../../hip/device.js';
import { HipEvent } from '../../hip/event.js';
import { HipError } from '../../hip/hip-error.js';
import { HipResult } from '../../hip/hip-result.js';
import { SegmentMemory } from '../gpu/segment-memory.js';
import type { HipStream } from '../../hip/stream.js';
import type { PooledStream } from '../gpu/pooled-backend.js';

/** A stream of the HIP backend. */
export type HipBackendStream = PooledStream<HipStream, HipEvent>;

export function hipSegmentMemory(device: HipDevice): SegmentMemory<HipBackendStream> {
  return new SegmentMemory<HipBackendStream>({
    allocate: (bytes) => {
      try {
        return HipDeviceBuffer.alloc(device, bytes);
      } catch (err) {
        if (err instanceof HipError && err.result === HipResult.hipErrorOutOfMemory) return undefined;
        throw err;
      }
    },
    synchronize: () => device.synchronize(),
    memoryInfo: () => device.memoryInfo(),
    createEvent: () => {
      const event = HipEvent.create(device, { timing: false });
      return { record: (stream) => event.record(stream.stream), query: () => event.query(), dispose: () => event.dispose() };
    },
  });
}
