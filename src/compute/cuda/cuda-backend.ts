/**
 * The CUDA backend of GpuCompute, on the driver's safe tier: one primary
 * context, a non-blocking default stream, the caching stream-aware memory pool
 * and stream ordering of {@link PooledBackend}, and the kernels under
 * `kernels/` compiled on first use.
 */
import type { Context } from '../../driver/context.js';
import { Device } from '../../driver/device.js';
import { Event } from '../../driver/event.js';
import { driverGetVersion } from '../../driver/raw/init.js';
import { memcpyDtoDAsync, memcpyDtoHAsync } from '../../driver/raw/memory.js';
import { Stream } from '../../driver/stream.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { Backend, DeviceInfo } from '../backend/backend.js';
import type { DenseLinalg } from '../backend/dense-linalg.js';
import { OpStates } from '../backend/op-states.js';
import type { AttentionParams } from '../core/attention-params.js';
import type { GruRecurrenceParams } from '../core/gru-params.js';
import type { Logger } from '../core/logger.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import { resolvePoolLimit } from '../core/pool-limit.js';
import type { ModuleSpec } from '../gpu/kernel-sources.js';
import type { PoolStrategy } from '../gpu/memory-pool.js';
import { PooledBackend, type PooledRuntime } from '../gpu/pooled-backend.js';
import { cudaAttention } from './attention/attention.js';
import { BlockCounters } from './block-counters.js';
import type { CudaContext } from './cuda-context.js';
import { cudaDeviceInfo } from './device-info.js';
import { cudaDenseLinalg } from './dense-linalg.js';
import { cudaSegmentMemory } from './device-memory.js';
import { cudaGruRecurrence } from './gru/gru.js';
import { copyDeviceToHost, copyHostToDevice, PinnedStaging } from './host-copy.js';
import { KernelRegistry, type RegisteredKernel } from './kernel-registry.js';
import { cudaMatmul } from './matmul/matmul.js';

export type { CudaBuffer, CudaStream } from './cuda-context.js';

/** Options of {@link createCudaBackend}. */
export interface CudaBackendOptions {
  /** Device ordinal; default 0. */
  device?: number;
  /** Pool limit in bytes; default `GPUCOMPUTE_POOL_LIMIT` or none. */
  poolLimitBytes?: number;
  /** Pool arena strategy; default best-fit (see `PoolStrategy`). */
  poolStrategy?: PoolStrategy;
  /** Receives debug lines (kernel compiles) and warnings. */
  logger?: Logger;
}

/**
 * Opens the CUDA backend on a device.
 * @throws LibraryNotFoundError without a CUDA driver, CudaError when the
 *   driver refuses, InvalidArgumentError for a device ordinal that does not exist.
 */
export function createCudaBackend(options: CudaBackendOptions = {}): CudaBackend {
  const ordinal = options.device ?? 0;
  const device = Device.get(ordinal);
  const context = device.primaryContext();
  try {
    return new CudaBackend(device, context, {
      limitBytes: resolvePoolLimit(options.poolLimitBytes),
      strategy: options.poolStrategy ?? 'best-fit',
      logger: options.logger,
    });
  } catch (err) {
    context.dispose();
    throw err;
  }
}

/** The driver calls behind the CUDA backend's memory and streams. */
function cudaRuntime(context: Context, staging: PinnedStaging): PooledRuntime<Stream, Event> {
  return {
    name: 'CUDA',
    createStream: () => Stream.create(context, { nonBlocking: true }),
    createMarker: () => Event.create(context, { timing: false }),
    makeCurrent: () => context.makeCurrent(),
    write: copyHostToDevice,
    read: copyDeviceToHost,
    readAsync: async (stream, dst, src) => {
      const pinned = staging.acquire(dst.byteLength);
      try {
        memcpyDtoHAsync(pinned.address, src, dst.byteLength, stream.handle);
        await stream.synchronizeAsync();
        dst.set(pinned.bytes.subarray(0, dst.byteLength));
      } finally {
        staging.release(pinned);
      }
    },
    copy: (stream, dst, src, bytes) => memcpyDtoDAsync(dst, src, bytes, stream.handle),
  };
}

/** The CUDA implementation of {@link Backend}; also the context the op launchers and matmul work in. */
export class CudaBackend extends PooledBackend<Stream, Event> implements Backend, CudaContext {
  readonly kind = 'cuda' as const;
  readonly device: Device;
  readonly context: Context;
  readonly registry: KernelRegistry;
  readonly multiprocessorCount: number;
  readonly warpSize: number;
  readonly clusterLaunch: boolean;
  readonly logger: Logger | undefined;
  readonly states: OpStates<CudaContext> = new OpStates<CudaContext>(this);
  readonly #staging: PinnedStaging;
  readonly #counters: BlockCounters;

  /** @internal Use {@link createCudaBackend}. */
  constructor(
    device: Device,
    context: Context,
    options: { limitBytes: number | undefined; strategy: PoolStrategy; logger: Logger | undefined },
  ) {
    const staging = new PinnedStaging(context);
    super(cudaRuntime(context, staging), cudaSegmentMemory(context), {
      strategy: options.strategy,
      ...(options.limitBytes === undefined ? {} : { limitBytes: options.limitBytes }),
    });
    this.#staging = staging;
    this.device = device;
    this.context = context;
    this.logger = options.logger;
    this.multiprocessorCount = device.multiprocessorCount;
    this.warpSize = device.warpSize;
    this.clusterLaunch = device.clusterLaunch;
    this.registry = new KernelRegistry(context, options.logger ? { logger: options.logger } : {});
    this.#counters = new BlockCounters(context);
  }

  info(): DeviceInfo {
    this.checkOpen();
    return cudaDeviceInfo(this.device, driverGetVersion(), this.context.memoryInfo().free);
  }

  // ------------------------------------------------------------ ops (memory, streams: PooledBackend; the portable ops: PortableOpsBackend)

  matmul(params: MatmulParams): void {
    this.checkOpen();
    cudaMatmul(this, params);
  }

  attention(params: AttentionParams): void {
    this.checkOpen();
    cudaAttention(this, params);
  }

  denseLinalg(): DenseLinalg | undefined {
    this.checkOpen();
    return cudaDenseLinalg(this);
  }

  gruRecurrence(params: GruRecurrenceParams): void {
    this.checkOpen();
    cudaGruRecurrence(this, params);
  }

  synchronize(): void {
    this.checkOpen();
    this.context.synchronize();
  }

  protected settle(): void {
    if (!this.context.unusable) this.context.synchronize();
  }

  protected releaseResources(): void {
    this.#staging.dispose();
    this.#counters.dispose();
    // Library handles, graphs and modules belong to the context: release them before it goes.
    this.states.dispose();
    this.registry.dispose();
  }

  protected override closeDevice(): void {
    this.context.dispose();
  }

  // ------------------------------------------------------------ CudaContext (the rest: PooledBackend)

  blockCounter(): bigint {
    return this.#counters.address(this.currentStreamId);
  }

  kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): RegisteredKernel {
    return this.registry.cached(key) ?? this.registry.get(spec(), name, signature, key);
  }
}
