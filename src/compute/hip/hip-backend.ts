/**
 * The HIP backend of GpuCompute (AMD GPUs): one device, non-blocking streams,
 * the same caching stream-aware memory pool and stream-ordering rules as the
 * CUDA backend, and the portable kernels of `kernels/` compiled by hiprtc for
 * the device's target and wavefront size. Ops run through the same launchers
 * as on CUDA; the ops whose kernels are CUDA-only it leaves out, with the reasons in `support.ts`.
 *
 * Not yet run on an AMD GPU: its compile path is tested in CI (hiprtc for
 * gfx90a and gfx1030), its launch path only by sharing the CUDA launchers.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import { HipDeviceBuffer } from '../../hip/device-buffer.js';
import { HipDevice } from '../../hip/device.js';
import { HipEvent } from '../../hip/event.js';
import { HipPinnedBuffer } from '../../hip/pinned-buffer.js';
import { memcpyDtoDAsync, memcpyDtoHAsync, memcpyHtoDAsync } from '../../hip/raw/memory.js';
import { HipStream } from '../../hip/stream.js';
import type { Backend, DeviceInfo } from '../backend/backend.js';
import type { ModuleSpec } from '../gpu/kernel-sources.js';
import type { LaunchKernel } from '../gpu/launch-context.js';
import { PooledBackend, type PooledRuntime } from '../gpu/pooled-backend.js';
import type { Logger } from '../core/logger.js';
import { resolvePoolLimit } from '../core/pool-limit.js';
import type { TensorView } from '../core/view.js';
import { hipSegmentMemory } from './hip-device-memory.js';
import { HIP_UNSUPPORTED } from './support.js';
import { hipDeviceInfo } from './device-info.js';
import { HipKernelRegistry } from './hip-kernel-registry.js';

export type { HipBackendStream } from './hip-device-memory.js';

/** Options of {@link createHipBackend}. */
export interface HipBackendOptions {
  device?: number;
  poolLimitBytes?: number;
  logger?: Logger;
}

/** Counters per block-counter page (one u32 per stream, zero between kernels). */
const COUNTERS = 1024;

/**
 * Opens the HIP backend on a device.
 * @throws LibraryNotFoundError without a HIP runtime, HipError when it refuses,
 *   InvalidArgumentError for a device ordinal that does not exist.
 */
export function createHipBackend(options: HipBackendOptions = {}): HipBackend {
  return new HipBackend(HipDevice.get(options.device ?? 0), resolvePoolLimit(options.poolLimitBytes), options.logger);
}

/** The HIP runtime calls behind the HIP backend's memory and streams. */
function hipRuntime(device: HipDevice): PooledRuntime<HipStream, HipEvent> {
  return {
    name: 'HIP',
    createStream: () => HipStream.create(device, { nonBlocking: true }),
    createMarker: () => HipEvent.create(device, { timing: false }),
    makeCurrent: () => device.makeCurrent(),
    write: (stream, dst, src) => {
      memcpyHtoDAsync(dst, src, src.byteLength, stream.handle);
      // HIP may read pageable memory after the call returns: wait, as the caller may reuse `src` at once.
      stream.synchronize();
    },
    read: (stream, dst, src) => {
      memcpyDtoHAsync(dst, src, dst.byteLength, stream.handle);
      stream.synchronize();
    },
    readAsync: async (stream, dst, src) => {
      const staging = HipPinnedBuffer.alloc(device, dst.byteLength);
      try {
        memcpyDtoHAsync(staging.address, src, dst.byteLength, stream.handle);
        await stream.synchronizeAsync();
        dst.set(staging.bytes);
      } finally {
        staging.dispose();
      }
    },
    copy: (stream, dst, src, bytes) => memcpyDtoDAsync(dst, src, bytes, stream.handle),
  };
}

/** The HIP implementation of {@link Backend}, and the op context of the shared launchers. */
export class HipBackend extends PooledBackend<HipStream, HipEvent> implements Backend {
  readonly kind = 'hip' as const;
  readonly unsupported = HIP_UNSUPPORTED;
  readonly device: HipDevice;
  readonly multiprocessorCount: number;
  readonly warpSize: number;
  /** HIP has no thread-block clusters. */
  readonly clusterLaunch = false;
  readonly #registry: HipKernelRegistry;
  readonly #counters: HipDeviceBuffer;

  /** @internal Use {@link createHipBackend}. */
  constructor(device: HipDevice, limitBytes: number | undefined, logger: Logger | undefined) {
    super(hipRuntime(device), hipSegmentMemory(device), { strategy: 'best-fit', ...(limitBytes === undefined ? {} : { limitBytes }) });
    this.device = device;
    this.multiprocessorCount = device.multiprocessorCount;
    this.warpSize = device.warpSize;
    this.#registry = new HipKernelRegistry(device, logger);
    this.#counters = HipDeviceBuffer.alloc(device, COUNTERS * 4);
    this.#counters.copyFrom(new Uint32Array(COUNTERS));
  }

  info(): DeviceInfo {
    this.checkOpen();
    return hipDeviceInfo(this.device);
  }

  synchronize(): void {
    this.checkOpen();
    this.device.synchronize();
  }

  protected settle(): void {
    this.device.synchronize();
  }

  protected releaseResources(): void {
    this.#counters.dispose();
    this.#registry.dispose();
  }

  // ------------------------------------------------------------ LaunchContext (the rest: PooledBackend)

  /** Also makes the device current on this thread: HIP launches go to the current device. */
  override enqueue(...views: (TensorView | undefined)[]): HipStream {
    const stream = super.enqueue(...views);
    this.device.makeCurrent();
    return stream;
  }

  blockCounter(): bigint {
    const id = this.currentStreamId;
    if (id >= COUNTERS) throw new InvalidArgumentError(`the HIP backend keeps block counters for ${COUNTERS} streams`);
    return this.#counters.ptr + BigInt(id * 4);
  }

  kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): LaunchKernel<HipStream> {
    return this.#registry.get(key, spec, name, signature);
  }
}
