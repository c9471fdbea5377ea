/**
 * The CUDA backend of GpuCompute, on the driver's safe tier: one primary
 * context, a non-blocking default stream, the caching stream-aware memory pool
 * and stream ordering of {@link PooledBackend}, and the kernels under
 * `kernels/` compiled on first use.
 */
import { DisposedError, InvalidArgumentError } from '../../errors.js';
import type { Context } from '../../driver/context.js';
import { Device } from '../../driver/device.js';
import { Event } from '../../driver/event.js';
import { Graph, type GraphExec } from '../../driver/graph.js';
import { driverGetVersion } from '../../driver/raw/init.js';
import { memcpyDtoDAsync, memcpyDtoHAsync } from '../../driver/raw/memory.js';
import { memcpyPeerAsync } from '../../driver/raw/peer.js';
import { Stream } from '../../driver/stream.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { Backend, DeviceInfo, RecordedGraph } from '../backend/backend.js';
import type { TensorView } from '../core/view.js';
import type { DenseLinalg } from '../backend/dense-linalg.js';
import { OpStates } from '../backend/op-states.js';
import type { AttentionBackwardParams } from '../core/attention-backward-params.js';
import type { AttentionParams } from '../core/attention-params.js';
import { dtypeSize } from '../core/dtype.js';
import type { GruBackwardParams } from '../core/gru-backward-params.js';
import type { GruRecurrenceParams, GruRolloutParams } from '../core/gru-params.js';
import type { Logger } from '../core/logger.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import { resolvePoolLimit } from '../core/pool-limit.js';
import type { ModuleSpec } from '../gpu/kernel-sources.js';
import type { PoolStrategy } from '../gpu/memory-pool.js';
import { PooledBackend, type PooledRuntime, type PooledStream, type RecordedMemory } from '../gpu/pooled-backend.js';
import { cudaAttention } from './attention/attention.js';
import { cudaAttentionBackward } from './attention/attention-backward.js';
import { BlockCounters } from './block-counters.js';
import type { CudaBuffer, CudaContext, CudaStream } from './cuda-context.js';
import { cudaDeviceInfo } from './device-info.js';
import { cudaDenseLinalg } from './dense-linalg.js';
import { cudaSegmentMemory } from './device-memory.js';
import { cudaGruRecurrence } from './gru/gru.js';
import { cudaGruBackwardRecurrence } from './gru/gru-backward.js';
import { cudaGruRollout } from './gru/rollout.js';
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
  /** Captured graphs not yet disposed (released with the backend). */
  readonly #graphs = new Set<RecordedGraph>();
  /** Devices whose memory copies from were already set up (peer access enabled where the two can reach each other). */
  readonly #peers = new Set<number>();

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

  attentionBackward(params: AttentionBackwardParams): void {
    this.checkOpen();
    cudaAttentionBackward(this, params);
  }

  denseLinalg(): DenseLinalg | undefined {
    this.checkOpen();
    return cudaDenseLinalg(this);
  }

  gruRecurrence(params: GruRecurrenceParams): void {
    this.checkOpen();
    cudaGruRecurrence(this, params);
  }

  gruRollout(params: GruRolloutParams): boolean {
    this.checkOpen();
    return cudaGruRollout(this, params);
  }

  /**
   * Copies a tensor of another CUDA backend (another device, or another GpuCompute on this one)
   * on this backend's current stream, which first waits for the work queued on the source buffer;
   * the source's stream then waits for the copy, so the source's later work (a write, its buffer's
   * reuse) cannot overtake it. Between devices the copy is cuMemcpyPeerAsync, peer to peer once
   * peer access is enabled both ways (done on the first copy from a device that can reach this
   * one), staged through host memory by the driver otherwise.
   */
  copyFromPeer(dst: TensorView, src: TensorView, from: Backend): void {
    this.checkOpen();
    if (!(from instanceof CudaBackend)) throw new InvalidArgumentError(`copyFromPeer: the source is a ${from.kind} backend, not a CUDA one`);
    from.checkOpen();
    this.assertNotRecording('x.to(another GpuCompute)');
    from.assertNotRecording('x.to(another GpuCompute) of a tensor of the recording GpuCompute');
    const stream = this.enqueue(dst);
    const current = this.currentStream() as CudaStream;
    const source = (src.buffer as CudaBuffer).lastStream;
    from.orderStreams(source, current);
    const bytes = src.size * dtypeSize[src.dtype];
    const sameDevice = from.device.ordinal === this.device.ordinal;
    if (!sameDevice) this.#reachPeer(from);
    this.context.makeCurrent();
    if (sameDevice) memcpyDtoDAsync(this.address(dst), from.address(src), bytes, stream.handle);
    else memcpyPeerAsync(this.address(dst), this.context.handle, from.address(src), from.context.handle, bytes, stream.handle);
    this.orderStreams(current, source);
  }

  /** Enables peer access between this device and `from`'s, both ways, the first time, where they can reach each other. */
  #reachPeer(from: CudaBackend): void {
    const ordinal = from.device.ordinal;
    if (this.#peers.has(ordinal)) return;
    if (this.device.canAccessPeer(from.device) && from.device.canAccessPeer(this.device)) {
      this.context.enablePeerAccess(from.context);
      from.context.enablePeerAccess(this.context);
    }
    this.#peers.add(ordinal);
  }

  gruBackwardRecurrence(params: GruBackwardParams): void {
    this.checkOpen();
    cudaGruBackwardRecurrence(this, params);
  }

  synchronize(): void {
    this.checkOpen();
    this.assertNotRecording('synchronize (also toArraySync and every other host read)');
    this.context.synchronize();
  }

  /**
   * Captures `fn`'s work as a CUDA graph on the backend's private capture stream. The device is
   * synchronised first, so the captured work never waits on other streams; relaxed capture mode
   * lets the pool grow (cuMemAlloc) while recording.
   */
  recordGraph(fn: () => void): RecordedGraph {
    this.checkOpen();
    this.assertNotRecording('capture (captures do not nest)');
    this.context.synchronize();
    const stream = this.privateStream(0);
    // The stream's reduction counter must exist before capture: creating it synchronises.
    this.#counters.address(stream.id);
    this.startRecording(stream);
    let graph: Graph | undefined;
    let memory: RecordedMemory<Stream, Event>;
    try {
      graph = Graph.capture(stream.stream, fn, { mode: 'relaxed' });
    } finally {
      memory = this.stopRecording();
      if (graph === undefined) this.pool.releaseReservation(memory.reservation, this.#defaultStream());
    }
    let exec: GraphExec;
    try {
      exec = graph.instantiate();
    } catch (err) {
      this.pool.releaseReservation(memory.reservation, this.#defaultStream());
      throw err;
    } finally {
      graph.dispose();
    }
    const recorded = this.#replayable(exec, memory);
    this.#graphs.add(recorded);
    return recorded;
  }

  /** Replays order the graph's outside buffers, and one replay after another, onto the replaying stream. */
  #replayable(exec: GraphExec, memory: RecordedMemory<Stream, Event>): RecordedGraph {
    let last: PooledStream<Stream, Event> | undefined;
    let disposed = false;
    const graph: RecordedGraph = {
      reservedBytes: memory.reservation.bytes,
      replay: () => {
        if (disposed) throw new DisposedError('The captured graph');
        this.assertNotRecording('a replay');
        const current = this.orderOnCurrent(memory.external);
        if (last !== undefined && last !== current) this.orderStreams(last, current);
        this.context.makeCurrent();
        exec.launch(current.stream);
        last = current;
      },
      dispose: () => {
        if (disposed) return;
        disposed = true;
        this.#graphs.delete(graph);
        exec.dispose();
        if (this.context.unusable) return;
        // No replay may still run when the reserved blocks go back to the arenas.
        this.context.synchronize();
        this.pool.releaseReservation(memory.reservation, this.#defaultStream());
      },
    };
    return graph;
  }

  #defaultStream(): PooledStream<Stream, Event> {
    return this.currentStream() as PooledStream<Stream, Event>;
  }

  protected settle(): void {
    if (!this.context.unusable) this.context.synchronize();
  }

  protected releaseResources(): void {
    for (const graph of [...this.#graphs]) graph.dispose();
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
