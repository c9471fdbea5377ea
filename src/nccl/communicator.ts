import type { Context } from '../driver/context.js';
import type { Device } from '../driver/device.js';
import type { DeviceBuffer } from '../driver/device-buffer.js';
import { guard, unguard } from '../driver/leak-guard.js';
import { forgetCurrentContext } from '../driver/raw/context.js';
import type { Stream } from '../driver/stream.js';
import { DisposedError, GpuError, InvalidArgumentError } from '../errors.js';
import { NcclError } from './nccl-error.js';
import { allGather, allReduce, broadcast, recv, reduce, reduceScatter, send } from './raw/collectives.js';
import { commAbort, commCount, commCuDevice, commDestroy, commGetAsyncError, commInitAll, commInitRank, commUserRank } from './raw/comm.js';
import type { NcclCommHandle } from './raw/handles.js';
import { NCCL_DTYPES, NCCL_REDUCE_OPS, type NcclDType, type NcclReduceOp } from './types.js';
import { NcclUniqueId } from './unique-id.js';

/** How {@link NcclCommunicator.initRank} finds the other ranks. */
export interface NcclRankOptions {
  /** The communicator's id, from the rank that made it ({@link NcclUniqueId.create}). */
  id: NcclUniqueId;
  /** This rank, 0 ≤ rank < size. */
  rank: number;
  /** The number of ranks. */
  size: number;
}

/** What every buffer-level call takes. */
export interface NcclCallOptions {
  /** The element type the buffers hold. */
  dtype: NcclDType;
  /**
   * Elements per rank: what each rank contributes (allGather), receives (reduceScatter) or
   * reduces, sends and receives (the others). Default: what the buffers hold (see each call).
   */
  count?: number;
  /** The stream to queue on, of the communicator's context (default: the legacy default stream). */
  stream?: Stream;
}

/** Options of the reductions. */
export interface NcclReduceCallOptions extends NcclCallOptions {
  /** Default 'sum'. */
  op?: NcclReduceOp;
}

/** Options of the calls with a root rank. */
export interface NcclRootCallOptions extends NcclCallOptions {
  root: number;
}

/** Options of send and recv. */
export interface NcclPeerCallOptions extends NcclCallOptions {
  /** The rank at the other end. */
  peer: number;
}

/**
 * One rank of an NCCL communicator, on one CUDA device: collectives and point-to-point transfers
 * between DeviceBuffers of its device, queued on a stream. It keeps its device's primary
 * context retained. `dispose()` (or `using`) destroys it once its queued work is done; `abort()`
 * drops it at once (after an error, or when a peer is gone). Every call checks its arguments
 * first (buffers of this device large enough for the count, ranks in range, a stream of this
 * context) and throws {@link NcclError} with NCCL's own message when NCCL refuses.
 *
 * One thread driving several ranks (see {@link NcclCommunicator.initAll}) must make their calls
 * inside `ncclGroup(() => ...)`, one call per rank.
 */
export class NcclCommunicator implements Disposable {
  /**
   * ncclCommInitAll: a communicator of `devices.length` ranks in this process, rank i on
   * devices[i] (each device once).
   */
  static initAll(devices: readonly Device[]): NcclCommunicator[] {
    const what = 'NcclCommunicator.initAll';
    if (!Array.isArray(devices) || devices.length === 0) throw new InvalidArgumentError(`${what}: devices must be a non-empty array of Device`);
    const ordinals = devices.map((d, i) => {
      if (typeof d !== 'object' || d === null || !Number.isInteger((d as Device).ordinal)) {
        throw new InvalidArgumentError(`${what}: devices[${i}] is not a Device`);
      }
      return d.ordinal;
    });
    const repeated = ordinals.find((o, i) => ordinals.indexOf(o) !== i);
    if (repeated !== undefined) throw new InvalidArgumentError(`${what}: device ${repeated} is listed twice; a communicator has one rank per device`);
    const contexts = devices.map((d) => d.primaryContext());
    let handles: NcclCommHandle[] = [];
    try {
      handles = commInitAll(ordinals);
      handles.forEach((handle, rank) => checkDevice(handle, rank, ordinals[rank]!));
    } catch (err) {
      for (const handle of handles) commAbort(handle);
      for (const c of contexts) c.dispose();
      throw err;
    } finally {
      forgetCurrentContext();
    }
    return handles.map((handle, rank) => new NcclCommunicator(handle, contexts[rank]!, rank, devices.length));
  }

  /**
   * ncclCommInitRank: joins rank `rank` of `size` to the communicator `id` names, on `device`.
   * Blocks until every rank has joined (each from its own process, or thread).
   */
  static initRank(device: Device, options: NcclRankOptions): NcclCommunicator {
    const what = 'NcclCommunicator.initRank';
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`${what}: options must be { id, rank, size }`);
    const { id, rank, size } = options;
    if (!(id instanceof NcclUniqueId)) throw new InvalidArgumentError(`${what}: id must be an NcclUniqueId`);
    if (!Number.isInteger(size) || size < 1) throw new InvalidArgumentError(`${what}: size must be a positive integer, got ${String(size)}`);
    if (!Number.isInteger(rank) || rank < 0 || rank >= size) throw new InvalidArgumentError(`${what}: rank must be an integer in [0, ${size - 1}], got ${String(rank)}`);
    const context = device.primaryContext();
    try {
      // NCCL takes the device from the thread's current context.
      context.makeCurrent();
      const handle = commInitRank(size, id.internal, rank);
      try {
        checkDevice(handle, rank, device.ordinal);
      } catch (err) {
        commAbort(handle);
        throw err;
      }
      return new NcclCommunicator(handle, context, rank, size);
    } catch (err) {
      context.dispose();
      throw err;
    } finally {
      forgetCurrentContext();
    }
  }

  readonly #context: Context;
  #handle: NcclCommHandle;

  private constructor(
    handle: NcclCommHandle,
    context: Context,
    /** This communicator's rank. */
    readonly rank: number,
    /** The number of ranks. */
    readonly size: number,
  ) {
    this.#handle = handle;
    this.#context = context;
    guard(this, 'NcclCommunicator', () => {
      commDestroy(handle);
      context.dispose();
    });
  }

  /** The ncclComm_t (raw tier). */
  get handle(): NcclCommHandle {
    if (this.#handle === 0n) throw new DisposedError('NcclCommunicator');
    return this.#handle;
  }

  /** The retained primary context of the rank's device. */
  get context(): Context {
    return this.#context;
  }

  /** True after {@link dispose} or {@link abort}. */
  get disposed(): boolean {
    return this.#handle === 0n;
  }

  /** ncclCommCount and ncclCommUserRank, asked of NCCL (the same as {@link size} and {@link rank}). */
  query(): { size: number; rank: number; device: number } {
    const handle = this.handle;
    return { size: commCount(handle), rank: commUserRank(handle), device: commCuDevice(handle) };
  }

  /** An error a queued operation ran into (ncclCommGetAsyncError), as an NcclError; undefined when none. */
  asyncError(): NcclError | undefined {
    const handle = this.handle;
    const result = commGetAsyncError(handle);
    return result === 0 ? undefined : new NcclError(result, 'ncclCommGetAsyncError (a queued operation)', handle);
  }

  /** recv = op over every rank's send (`count` elements, default send's; in place when they are the same buffer). */
  allReduce(sendBuffer: DeviceBuffer, recvBuffer: DeviceBuffer, options: NcclReduceCallOptions): void {
    const c = this.#call('allReduce', options, sendBuffer.byteLength);
    const op = reduceOp('allReduce', options.op);
    this.#need('allReduce', 'send', sendBuffer, c.count * c.bytes);
    this.#need('allReduce', 'recv', recvBuffer, c.count * c.bytes);
    this.#run(() => allReduce(sendBuffer.ptr, recvBuffer.ptr, c.count, c.code, op, this.#handle, c.stream));
  }

  /** recv on every rank = send of `root` (`count` elements, default recv's; send is read on root only). */
  broadcast(sendBuffer: DeviceBuffer, recvBuffer: DeviceBuffer, options: NcclRootCallOptions): void {
    const c = this.#call('broadcast', options, recvBuffer.byteLength);
    const root = this.#rank('broadcast', 'root', options.root);
    if (this.rank === root) this.#need('broadcast', 'send', sendBuffer, c.count * c.bytes);
    this.#need('broadcast', 'recv', recvBuffer, c.count * c.bytes);
    this.#run(() => broadcast(sendBuffer.ptr, recvBuffer.ptr, c.count, c.code, root, this.#handle, c.stream));
  }

  /** recv on `root` = op over every rank's send (`count` elements, default send's; recv is written on root only). */
  reduce(sendBuffer: DeviceBuffer, recvBuffer: DeviceBuffer, options: NcclRootCallOptions & { op?: NcclReduceOp }): void {
    const c = this.#call('reduce', options, sendBuffer.byteLength);
    const op = reduceOp('reduce', options.op);
    const root = this.#rank('reduce', 'root', options.root);
    this.#need('reduce', 'send', sendBuffer, c.count * c.bytes);
    if (this.rank === root) this.#need('reduce', 'recv', recvBuffer, c.count * c.bytes);
    this.#run(() => reduce(sendBuffer.ptr, recvBuffer.ptr, c.count, c.code, op, root, this.#handle, c.stream));
  }

  /** recv = every rank's send (`count` elements each, default send's) one after another in rank order: size · count elements. */
  allGather(sendBuffer: DeviceBuffer, recvBuffer: DeviceBuffer, options: NcclCallOptions): void {
    const c = this.#call('allGather', options, sendBuffer.byteLength);
    this.#need('allGather', 'send', sendBuffer, c.count * c.bytes);
    this.#need('allGather', 'recv', recvBuffer, this.size * c.count * c.bytes);
    this.#run(() => allGather(sendBuffer.ptr, recvBuffer.ptr, c.count, c.code, this.#handle, c.stream));
  }

  /** recv (`count` elements, default recv's) = op over block `rank` of every rank's send (size · count elements). */
  reduceScatter(sendBuffer: DeviceBuffer, recvBuffer: DeviceBuffer, options: NcclReduceCallOptions): void {
    const c = this.#call('reduceScatter', options, recvBuffer.byteLength);
    const op = reduceOp('reduceScatter', options.op);
    this.#need('reduceScatter', 'send', sendBuffer, this.size * c.count * c.bytes);
    this.#need('reduceScatter', 'recv', recvBuffer, c.count * c.bytes);
    this.#run(() => reduceScatter(sendBuffer.ptr, recvBuffer.ptr, c.count, c.code, op, this.#handle, c.stream));
  }

  /** Sends `count` elements (default the buffer's) to rank `peer`, which receives them with {@link recv}. */
  send(buffer: DeviceBuffer, options: NcclPeerCallOptions): void {
    const c = this.#call('send', options, buffer.byteLength);
    const peer = this.#rank('send', 'peer', options.peer);
    this.#need('send', 'buffer', buffer, c.count * c.bytes);
    this.#run(() => send(buffer.ptr, c.count, c.code, peer, this.#handle, c.stream));
  }

  /** Receives `count` elements (default the buffer's) from rank `peer`'s {@link send}. */
  recv(buffer: DeviceBuffer, options: NcclPeerCallOptions): void {
    const c = this.#call('recv', options, buffer.byteLength);
    const peer = this.#rank('recv', 'peer', options.peer);
    this.#need('recv', 'buffer', buffer, c.count * c.bytes);
    this.#run(() => recv(buffer.ptr, c.count, c.code, peer, this.#handle, c.stream));
  }

  /** ncclCommAbort: frees the communicator now, cancelling its queued work. Idempotent. */
  abort(): void {
    this.#release(commAbort);
  }

  /** ncclCommDestroy: frees the communicator once its queued work has completed. Idempotent. */
  dispose(): void {
    this.#release(commDestroy);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #release(free: (handle: NcclCommHandle) => void): void {
    const handle = this.#handle;
    if (handle === 0n) return;
    this.#handle = 0n;
    unguard(this);
    try {
      if (!this.#context.unusable) this.#context.makeCurrent();
      free(handle);
    } finally {
      forgetCurrentContext();
      this.#context.dispose();
    }
  }

  /** Checks the common options; `count` defaults to `defaultBytes` / the element size. */
  #call(what: string, options: NcclCallOptions, defaultBytes: number): { count: number; bytes: number; code: number; stream: bigint } {
    const op = `NcclCommunicator.${what}`;
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`${op}: options must be an object with at least dtype`);
    this.#checkLive();
    const dtype = NCCL_DTYPES[options.dtype];
    if (dtype === undefined || !Object.hasOwn(NCCL_DTYPES, options.dtype)) {
      throw new InvalidArgumentError(`${op}: unknown dtype ${String(options.dtype)} (use ${Object.keys(NCCL_DTYPES).join(', ')})`);
    }
    const count = options.count ?? Math.floor(defaultBytes / dtype.bytes);
    if (!Number.isSafeInteger(count) || count < 0) throw new InvalidArgumentError(`${op}: count must be a non-negative integer, got ${String(options.count)}`);
    let stream = 0n;
    if (options.stream !== undefined) {
      if (options.stream.context.device.ordinal !== this.#context.device.ordinal) {
        throw new InvalidArgumentError(`${op}: the stream belongs to device ${options.stream.context.device.ordinal}, this rank is on device ${this.#context.device.ordinal}`);
      }
      stream = options.stream.handle;
    }
    return { count, bytes: dtype.bytes, code: dtype.code, stream };
  }

  #checkLive(): void {
    if (this.#handle === 0n) throw new DisposedError('NcclCommunicator');
  }

  #need(what: string, name: string, buffer: DeviceBuffer, bytes: number): void {
    const op = `NcclCommunicator.${what}`;
    if (typeof buffer !== 'object' || buffer === null || typeof (buffer as DeviceBuffer).byteLength !== 'number') {
      throw new InvalidArgumentError(`${op}: ${name} must be a DeviceBuffer`);
    }
    if (buffer.disposed) throw new DisposedError(`${op}: ${name} DeviceBuffer`);
    if (buffer.context.device.ordinal !== this.#context.device.ordinal) {
      throw new InvalidArgumentError(`${op}: ${name} is memory of device ${buffer.context.device.ordinal}, this rank is on device ${this.#context.device.ordinal}`);
    }
    if (buffer.byteLength < bytes) throw new InvalidArgumentError(`${op}: ${name} holds ${buffer.byteLength} bytes, the call needs ${bytes}`);
  }

  #rank(what: string, name: string, value: unknown): number {
    if (!Number.isInteger(value) || (value as number) < 0 || (value as number) >= this.size) {
      throw new InvalidArgumentError(`NcclCommunicator.${what}: ${name} must be a rank in [0, ${this.size - 1}], got ${String(value)}`);
    }
    return value as number;
  }

  #run(call: () => void): void {
    this.#context.makeCurrent();
    try {
      call();
    } finally {
      forgetCurrentContext();
    }
  }
}

/** NCCL and the driver must agree on the device (they number devices alike unless CUDA_DEVICE_ORDER sets them apart). */
function checkDevice(handle: NcclCommHandle, rank: number, ordinal: number): void {
  const device = commCuDevice(handle);
  if (device !== ordinal) {
    throw new GpuError(
      'NCCL_DEVICE_MISMATCH',
      `NCCL put rank ${rank} on CUDA device ${device}, not ${ordinal}: the CUDA runtime and driver number the devices differently (is CUDA_DEVICE_ORDER set?)`,
    );
  }
}

function reduceOp(what: string, op: NcclReduceOp | undefined): number {
  const code = NCCL_REDUCE_OPS[op ?? 'sum'];
  if (code === undefined || !Object.hasOwn(NCCL_REDUCE_OPS, op ?? 'sum')) {
    throw new InvalidArgumentError(`NcclCommunicator.${what}: unknown op ${String(op)} (use ${Object.keys(NCCL_REDUCE_OPS).join(', ')})`);
  }
  return code;
}
