/**
 * A backend in use by one GpuCompute: the tensors it allocates, the checks every op makes on the
 * tensors it is given (alive, and of this backend), the seed sequence of the random ops, and the
 * one-time leak warning. The op front-ends take a session, never the GpuCompute façade.
 */
import { DisposedError, GpuError, InvalidArgumentError, OutOfMemoryError, UnsupportedOperationError } from '../../errors.js';
import type { OptionalOp } from '../backend/backend.js';
import type { ComposedBackend } from '../backend/composed-ops.js';
import { isFloatDType, type DType } from '../core/dtype.js';
import type { Logger } from '../core/logger.js';
import { formatShape } from '../core/shape.js';
import { describeValue, storageBytes, validateDType, validateSeed, validateShape } from '../core/validation.js';
import type { BackendBuffer } from '../core/view.js';
import { GradMode } from './grad-mode.js';
import { ScopeStack } from './scope-stack.js';
import { Tensor, TensorStorage, type TensorOwner } from './tensor.js';

export class Session implements TensorOwner {
  /** The backend executing the ops, its composable ops filled in. */
  readonly backend: ComposedBackend;
  /** Where ops and the backend log. */
  readonly logger: Logger;
  #disposed = false;
  #leakReported = false;
  #nextSeed = 0;
  /** Tensor storages allocated and not yet released (what OutOfMemoryError reports). */
  #liveStorages = 0;
  /** The open `gpu.scope` calls. */
  readonly scopes = new ScopeStack();
  /** Whether ops record for autograd now (`gpu.noGrad`, `gpu.capture`). */
  readonly gradMode = new GradMode();
  /** While a capture records: the storages it holds (of tensors its ops read and it did not create). */
  #held: Set<TensorStorage> | undefined = undefined;
  /** Storages created while the current capture records. */
  #created = new WeakSet<TensorStorage>();

  constructor(backend: ComposedBackend, logger: Logger) {
    this.backend = backend;
    this.logger = logger;
  }

  /** True after {@link Session.dispose}. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** @throws DisposedError once disposed. */
  assertLive(): void {
    if (this.#disposed) throw new DisposedError('GpuCompute');
  }

  /**
   * An uninitialised tensor of `shape` and `dtype`, both checked in the name of `op`. Empty
   * tensors still get one element of storage, so every tensor owns a real buffer. A size no
   * buffer can hold is refused, and the backend's allocation errors (OutOfMemoryError) name `op`
   * and the tensor, since the backend cannot know which op asked.
   */
  empty<D extends DType>(op: string, shape: unknown, dtype: unknown): Tensor<D> {
    this.assertLive();
    const s = validateShape(op, shape);
    const d = validateDType(op, dtype) as D;
    const bytes = storageBytes(op, s, d);
    let buffer: BackendBuffer;
    try {
      buffer = this.backend.alloc(bytes);
    } catch (err) {
      // (V8 formats err.stack when first read, so its first line shows the new message too.)
      if (err instanceof GpuError) err.message = `${op}: a ${d} tensor of shape ${formatShape(s)}: ${err.message}`;
      if (err instanceof OutOfMemoryError) {
        err.liveTensors = this.#liveStorages;
        err.message +=
          `; ${this.#liveStorages} tensor allocation${this.#liveStorages === 1 ? ' is' : 's are'} still live. Tensors that are ` +
          `unreachable but not disposed hold their memory until the garbage collector runs: dispose() them, declare them ` +
          `with \`using\`, or run the loop body in gpu.scope(() => ...)`;
      }
      throw err;
    }
    this.#liveStorages++;
    const storage = new TensorStorage(this, buffer);
    if (this.#held) this.#created.add(storage);
    return new Tensor(storage, d, s);
  }

  /**
   * A new tensor that `fill` writes (skipped when it is empty); disposed again when `fill`
   * throws, so an op that fails in the backend leaves nothing allocated.
   */
  produce<D extends DType>(op: string, shape: unknown, dtype: unknown, fill: (out: Tensor<D>) => void): Tensor<D> {
    const out = this.empty<D>(op, shape, dtype);
    if (out.size === 0) return out;
    try {
      fill(out);
    } catch (err) {
      out.dispose();
      if (err instanceof OutOfMemoryError && !err.message.startsWith(`${op}: `)) err.message = `${op}: ${err.message}`;
      throw err;
    }
    return out;
  }

  /** Throws unless `t` is a live tensor of this session; `name` is the argument's name in `op`'s messages. */
  checkTensor(op: string, t: unknown, name: string): asserts t is Tensor {
    this.assertLive();
    if (!(t instanceof Tensor)) throw new InvalidArgumentError(`${op}: ${name} must be a Tensor, got ${describeValue(t)}`);
    if (t.disposed) throw new DisposedError(t.owner.disposed ? `${op}: ${name}: the GpuCompute holding ${t.toString()}` : `${op}: ${name} ${t.toString()}`);
    if (t.owner !== this) {
      const other = t.owner instanceof Session ? t.owner.label() : 'another owner';
      throw new InvalidArgumentError(
        `${op}: ${name} ${t.toString()} belongs to another GpuCompute (${other}), not this one (${this.label()}); ` +
          `copy it over with gpu.tensor(await x.toArray(), x.shape, x.dtype)`,
      );
    }
    if (this.#held) this.#hold(t);
  }

  /**
   * Starts holding, for a capture that records now, the storage of every tensor an op reads that
   * the capture did not create: a replay reads them, so they must outlive their tensors. Returns
   * the set the storages go into; the capture releases them when it is disposed.
   */
  holdForCapture(): Set<TensorStorage> {
    this.#held = new Set();
    this.#created = new WeakSet();
    return this.#held;
  }

  /** Stops holding storages for the capture. */
  endHoldForCapture(): void {
    this.#held = undefined;
  }

  #hold(t: Tensor): void {
    const storage = t.sharedStorage;
    if (this.#created.has(storage) || this.#held!.has(storage)) return;
    storage.retain();
    this.#held!.add(storage);
  }

  /** {@link Session.checkTensor}, and a float dtype. */
  checkFloat(op: string, t: unknown, name: string): asserts t is Tensor {
    this.checkTensor(op, t, name);
    if (!isFloatDType(t.dtype)) {
      throw new InvalidArgumentError(
        `${op}: ${name} must be a float tensor (f32, f16 or bf16), got ${t.toString()}; cast it first, e.g. gpu.cast(x, 'f32')`,
      );
    }
  }

  /**
   * Throws UnsupportedOperationError, with the backend's reason, unless it has the optional ops
   * `needed`; `op` is the public op that needs them. Called before anything is allocated.
   */
  assertSupports(op: string, ...needed: OptionalOp[]): void {
    for (let i = 0; i < needed.length; i++) {
      const name = needed[i]!;
      if (typeof this.backend[name] !== 'function') {
        throw new UnsupportedOperationError(op, this.backend.kind, this.backend.unsupported?.[name] ?? `it has no ${name}`);
      }
    }
  }

  /** The seed the next call without one will get (autograd replays a dropout mask with it). */
  peekSeed(): number {
    return this.#nextSeed;
  }

  /** `seed` checked, or the next seed of this session's sequence (0, 1, 2, ...). */
  seed(op: string, seed: unknown): number {
    return seed === undefined ? this.#nextSeed++ : validateSeed(op, seed);
  }

  /** e.g. `cuda:0 NVIDIA H100 80GB HBM3`, for messages. */
  label(): string {
    if (this.#disposed) return `${this.backend.kind}, disposed`;
    const info = this.backend.info();
    return `${info.backend}:${info.ordinal} ${info.deviceName}`;
  }

  /** Releases the backend and its memory; every tensor of this session becomes unusable. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.backend.dispose();
  }

  /** @internal TensorOwner: a tensor's last reference went away. */
  releaseBuffer(buffer: BackendBuffer): void {
    this.#liveStorages--;
    // After dispose() the backend has released everything at once.
    if (!this.#disposed) this.backend.free(buffer);
  }

  /** @internal TensorOwner: open scopes record every new tensor. */
  adopt(tensor: Tensor): void {
    this.scopes.adopt(tensor);
  }

  /** @internal TensorOwner: exempts a tensor from every scope. */
  keep(tensor: Tensor): void {
    this.scopes.keep(tensor);
  }

  /** @internal TensorOwner: the safety net freed a tensor that was never disposed. */
  reportLeak(description: string): void {
    // After dispose() nothing leaked: the backend released every buffer at once.
    if (this.#leakReported || this.#disposed) return;
    this.#leakReported = true;
    this.logger.warn(
      `${description} was garbage-collected without dispose(); its memory was freed late. ` +
        `Call dispose() or declare tensors with \`using\` (reported once per GpuCompute).`,
    );
  }
}
