/**
 * What the CUDA backend's own op modules (matmul, attention, the GRU recurrence, dense linear
 * algebra) see of it: the device and context, the kernel registry, stream ordering and memory,
 * and the per-op state it owns. They take this interface, not the backend class, so the backend
 * can import them without a cycle.
 */
import type { Context } from '../../driver/context.js';
import type { Device } from '../../driver/device.js';
import type { Event } from '../../driver/event.js';
import type { Stream } from '../../driver/stream.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { BackendStream } from '../backend/backend.js';
import type { OpStates } from '../backend/op-states.js';
import type { Logger } from '../core/logger.js';
import type { TensorView } from '../core/view.js';
import type { ModuleSpec } from '../gpu/kernel-sources.js';
import type { LaunchContext } from '../gpu/launch-context.js';
import type { PooledBuffer, PooledStream } from '../gpu/pooled-backend.js';
import type { KernelRegistry, RegisteredKernel } from './kernel-registry.js';

/** A stream of the CUDA backend. */
export type CudaStream = PooledStream<Stream, Event>;
/** Device memory of the CUDA backend: a pool block. */
export type CudaBuffer = PooledBuffer<Stream, Event>;

/** The CUDA backend as its op modules use it. */
export interface CudaContext extends LaunchContext<Stream> {
  readonly device: Device;
  readonly context: Context;
  readonly registry: KernelRegistry;
  readonly logger: Logger | undefined;
  /** State the ops keep per backend, released when the backend is disposed. */
  readonly states: OpStates<CudaContext>;
  /** The runtime stream work is queued on now. */
  readonly stream: Stream;
  /** True while `gpu.capture` records: ops must queue work only (no synchronisation, no nested capture). */
  readonly capturing: boolean;
  kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): RegisteredKernel;
  alloc(byteLength: number): CudaBuffer;
  free(buffer: CudaBuffer): void;
  transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void;
  currentStream(): BackendStream;
}
