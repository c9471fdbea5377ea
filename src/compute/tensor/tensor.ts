/**
 * Tensors: a dtype and a shape over reference-counted backend storage.
 * Reshapes are views that share the storage; the storage goes back to the
 * backend's pool when the last tensor using it is disposed. A
 * FinalizationRegistry frees storage that was never disposed and warns once
 * per GpuCompute, as a safety net only: call `dispose()` or use `using`.
 *
 * The ops a tensor offers as methods (`x.add(y)`, `x.exp()`, ...) are installed by
 * `tensor-methods.ts` on top of the op front-ends, so this layer knows nothing of them.
 */
import { DisposedError, InvalidArgumentError } from '../../errors.js';
import type { Backend } from '../backend/backend.js';
import { dtypeSize, fromBf16Array, fromF16Array, isFloatDType, type DType } from '../core/dtype.js';
import { formatShape, rowMajorStrides, shapeSize } from '../core/shape.js';
import { describeValue, validateShape } from '../core/validation.js';
import { noteGradRequested } from './grad-mode.js';
import type { BackendBuffer, TensorView } from '../core/view.js';

/** What tensors belong to: a backend, and where their memory goes back (a GpuCompute's session). */
export interface TensorOwner {
  readonly backend: Backend;
  /** True once the owner released its backend (its tensors are then unusable). */
  readonly disposed: boolean;
  /** A tensor's last reference went away. */
  releaseBuffer(buffer: BackendBuffer): void;
  /** The safety net freed a tensor that was never disposed. */
  reportLeak(description: string): void;
  /** A tensor was created over the owner's storage (ops, reshapes): open scopes record it. */
  adopt(tensor: Tensor): void;
  /** Exempts a tensor from every scope (a gradient belongs to its tensor, not to the scope it was made in). */
  keep(tensor: Tensor): void;
}

/**
 * @internal What autograd attaches to a tensor that a recorded op computed: its place in the
 * graph (`autograd/`), given up when the tensor goes.
 */
export interface GradOrigin {
  /** The tensor was disposed or collected: the graph behind it may be dropped once nothing else reaches it. */
  release(): void;
}

/** Backend memory shared by a tensor and its reshape views. */
export class TensorStorage {
  private refs = 1;
  /**
   * Bumped by each in-place write into the storage (an optimizer step), so autograd can refuse a
   * backward that would read a saved tensor modified since its forward.
   */
  version = 0;
  constructor(
    readonly owner: TensorOwner,
    readonly buffer: BackendBuffer,
  ) {}

  retain(): void {
    this.refs++;
  }

  /** Whether more than one reference holds it (views of one tensor, a saved copy, a capture). */
  get shared(): boolean {
    return this.refs > 1;
  }

  release(): void {
    if (--this.refs === 0) this.owner.releaseBuffer(this.buffer);
  }
}

interface LeakRecord {
  storage: TensorStorage;
  /** What the warning names (formatted only if the tensor leaks). */
  dtype: DType;
  shape: readonly number[];
}

const leakRegistry = new FinalizationRegistry<LeakRecord>(({ storage, dtype, shape }) => {
  storage.owner.reportLeak(describeTensor(dtype, shape));
  storage.release();
});

/** New tensors registered for leaks at once, at most (see `Tensor.#trackForLeaks`). */
const REGISTER_BATCH = 1024;

/** Host array of a tensor's values: Int32Array for i32, Float32Array otherwise (f16/bf16 widened). */
export type HostArray<D extends DType = DType> = D extends 'i32' ? Int32Array : Float32Array;

/** Host array of a tensor's stored words: f16/bf16 as Uint16Array bit patterns. */
export type RawHostArray<D extends DType = DType> = D extends 'i32' ? Int32Array : D extends 'f32' ? Float32Array : Uint16Array;

/**
 * A dense, row-major array on one GpuCompute's device. Create tensors through
 * the GpuCompute (`gpu.tensor`, `gpu.zeros`, `gpu.rand`, ...); ops return new tensors.
 */
export class Tensor<D extends DType = DType> {
  /** Element type. */
  readonly dtype: D;
  /** Extent of each dim; `[]` is a scalar. */
  readonly shape: readonly number[];
  /** Number of elements. */
  readonly size: number;
  /** @internal What the tensor belongs to (its GpuCompute's session). */
  readonly owner: TensorOwner;
  private readonly storage: TensorStorage;
  private readonly offset: number;
  private isDisposed = false;
  /** Whether the leak registry holds this tensor (see `Tensor.#trackForLeaks`). */
  #registered = false;
  #view: TensorView | undefined = undefined;
  /** @internal Where autograd recorded this tensor (undefined on leaves and on tensors no recorded op made). */
  origin: GradOrigin | undefined = undefined;
  #leafRequiresGrad = false;
  #grad: Tensor<D> | undefined = undefined;

  /**
   * The gradient a backward accumulated into this tensor (a leaf that requires grad), in its shape
   * and dtype; undefined until a backward reaches it. It belongs to this tensor: no `gpu.scope`
   * disposes it, {@link Tensor.zeroGrad} and {@link Tensor.dispose} do. Assigning replaces it and
   * disposes the previous one (`t.grad = undefined` is `t.zeroGrad()`); an assigned tensor of this
   * GpuCompute, shape and dtype then belongs to this tensor.
   */
  declare grad: Tensor<D> | undefined;

  // `grad` reads as the field declared above, through an accessor: a gradient belongs to its
  // tensor, so one replaced by an assignment is disposed, and an assigned one is kept from scopes.
  static {
    Object.defineProperty(this.prototype, 'grad', {
      configurable: true,
      get(this: Tensor): Tensor | undefined {
        return this.#grad;
      },
      set(this: Tensor, value: unknown) {
        if (value === this.#grad) return;
        if (value !== undefined) this.#checkGrad(value);
        const previous = this.#grad;
        this.#grad = value as Tensor | undefined;
        if (value !== undefined) this.owner.keep(value as Tensor);
        previous?.dispose();
      },
    });
  }

  /** @internal Use the GpuCompute factories; this adopts one reference to `storage`. */
  constructor(storage: TensorStorage, dtype: D, shape: readonly number[], offset = 0) {
    this.owner = storage.owner;
    this.storage = storage;
    this.dtype = dtype;
    this.shape = Object.isFrozen(shape) ? shape : Object.freeze([...shape]);
    this.size = shapeSize(shape);
    this.offset = offset;
    Tensor.#trackForLeaks(this);
    this.owner.adopt(this);
  }

  /** New tensors not yet registered for leaks. */
  static #awaitingRegistration: Tensor[] = [];
  static #registrationQueued = false;

  /**
   * Registering a tensor for leaks and unregistering it cost about 0.9 µs (V8), as much as the
   * rest of a small op's front-end, and most tensors are disposed within a few ops of their
   * creation. So new tensors wait in a list; at the end of the current task, or once it holds
   * REGISTER_BATCH, the ones still live are registered. A tensor dropped without dispose()
   * meanwhile is held by the list until then, so it is registered and reported all the same.
   */
  static #trackForLeaks(t: Tensor): void {
    const awaiting = Tensor.#awaitingRegistration;
    awaiting.push(t);
    if (awaiting.length >= REGISTER_BATCH) {
      Tensor.#registerAwaiting();
    } else if (!Tensor.#registrationQueued) {
      Tensor.#registrationQueued = true;
      queueMicrotask(() => {
        Tensor.#registrationQueued = false;
        Tensor.#registerAwaiting();
      });
    }
  }

  static #registerAwaiting(): void {
    for (const t of Tensor.#awaitingRegistration) {
      if (t.isDisposed || t.#registered) continue;
      leakRegistry.register(t, { storage: t.storage, dtype: t.dtype, shape: t.shape }, t);
      t.#registered = true;
    }
    Tensor.#awaitingRegistration.length = 0;
  }

  /** Number of dims. */
  get rank(): number {
    return this.shape.length;
  }

  /** Row-major element strides. */
  get strides(): number[] {
    return rowMajorStrides(this.shape);
  }

  /** Bytes the elements take. */
  get byteLength(): number {
    return this.size * dtypeSize[this.dtype];
  }

  /**
   * Whether gradients flow to this tensor: a leaf marked with {@link Tensor.requiresGrad_}, or the
   * result of an op recorded while one of its inputs required grad.
   */
  get requiresGrad(): boolean {
    return this.#leafRequiresGrad || this.origin !== undefined;
  }

  /**
   * Marks this leaf as requiring grad (or not, with `false`): the ops it goes through from now on
   * are recorded, and a backward fills {@link Tensor.grad}. Only float tensors have gradients, and
   * only a leaf can be marked (the result of a recorded op already requires grad; `detach()` gives
   * a leaf over the same storage). Returns this tensor.
   */
  requiresGrad_(requiresGrad: boolean = true): this {
    const op = 'requiresGrad_';
    this.#checkLive(op);
    if (typeof requiresGrad !== 'boolean') throw new InvalidArgumentError(`${op}: requiresGrad must be a boolean, got ${describeValue(requiresGrad)}`);
    if (requiresGrad && !isFloatDType(this.dtype)) {
      throw new InvalidArgumentError(`${op}: only float tensors (f32, f16, bf16) have gradients, got ${this.describe()}; cast it first, e.g. gpu.cast(x, 'f32')`);
    }
    if (this.origin !== undefined) {
      throw new InvalidArgumentError(
        `${op}: ${this.describe()} is the result of a recorded op, not a leaf: it already requires grad; use detach() for a leaf over the same storage`,
      );
    }
    this.#leafRequiresGrad = requiresGrad;
    if (requiresGrad) noteGradRequested();
    return this;
  }

  /** Disposes {@link Tensor.grad} and forgets it, so the next backward starts from zero. */
  zeroGrad(): void {
    this.#checkLive('zeroGrad');
    this.grad = undefined;
  }

  /**
   * A leaf over the same storage (no copy) that no gradient flows through: the ops on it are not
   * recorded unless it is marked with {@link Tensor.requiresGrad_}. Dispose it like any tensor.
   */
  detach(): Tensor<D> {
    this.#checkLive('detach');
    this.storage.retain();
    return new Tensor(this.storage, this.dtype, this.shape, this.offset);
  }

  /** True after `dispose()` (or after its GpuCompute was disposed). */
  get disposed(): boolean {
    return this.isDisposed || this.owner.disposed;
  }

  /**
   * The backend-level description of this tensor (advanced: for code that
   * calls a {@link Backend} directly). Throws {@link DisposedError} once disposed.
   */
  get view(): TensorView {
    this.assertLive();
    // Made once: ops read the views of their operands on every call.
    return (this.#view ??= { buffer: this.storage.buffer, dtype: this.dtype, shape: this.shape, offset: this.offset, size: this.size });
  }

  /** Throws {@link DisposedError} when this tensor or its GpuCompute is disposed. */
  assertLive(): void {
    if (this.isDisposed) throw new DisposedError(this.describe());
    if (this.owner.disposed) throw new DisposedError(`the GpuCompute holding ${this.describe()}`);
  }

  /**
   * A view with another shape over the same storage (no copy). One dim may be
   * -1 and is inferred. The view must be disposed like any tensor; the storage
   * lives until the last of them is.
   */
  reshape(...shape: number[] | [readonly number[]]): Tensor<D> {
    this.assertLive();
    if (Array.isArray(shape[0]) && shape.length > 1) {
      throw new InvalidArgumentError(
        `reshape: takes the dims as one array or as separate numbers, not both; got ${describeValue(shape[0])} and then ${shape.slice(1).map(describeValue).join(', ')}`,
      );
    }
    const requested: readonly unknown[] = Array.isArray(shape[0]) ? shape[0] : shape;
    const resolved = resolveReshape(this, requested);
    this.storage.retain();
    return new Tensor(this.storage, this.dtype, resolved, this.offset);
  }

  /** Copies the values to the host without blocking the event loop. f16/bf16 come back as f32. */
  async toArray(): Promise<HostArray<D>> {
    return widen(this.dtype, await this.toRawArray()) as HostArray<D>;
  }

  /** Copies the values to the host, waiting for the device. f16/bf16 come back as f32. */
  toArraySync(): HostArray<D> {
    return widen(this.dtype, this.toRawArraySync()) as HostArray<D>;
  }

  /** Copies the stored words to the host without blocking the event loop (f16/bf16 as bit patterns). */
  async toRawArray(): Promise<RawHostArray<D>> {
    this.assertLive();
    const host = this.hostArray();
    if (this.size === 0) return host;
    // Hold the storage so a dispose() during the await cannot recycle it mid-copy.
    this.storage.retain();
    try {
      await this.owner.backend.readAsync(this.storage.buffer, host, this.offset * dtypeSize[this.dtype]);
    } finally {
      this.storage.release();
    }
    return host;
  }

  /** Copies the stored words to the host, waiting for the device (f16/bf16 as bit patterns). */
  toRawArraySync(): RawHostArray<D> {
    this.assertLive();
    const host = this.hostArray();
    if (this.size > 0) this.owner.backend.read(this.storage.buffer, host, this.offset * dtypeSize[this.dtype]);
    return host;
  }

  /** @internal The storage this tensor shares with its views (a captured graph holds it while it may read it). */
  get sharedStorage(): TensorStorage {
    return this.storage;
  }

  /** Releases this tensor's reference to its storage, its gradient and its place in the autograd graph. Safe to call twice. */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    if (this.#registered) leakRegistry.unregister(this);
    this.storage.release();
    const grad = this.#grad;
    this.#grad = undefined;
    grad?.dispose();
    const origin = this.origin;
    this.origin = undefined;
    origin?.release();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** e.g. `Tensor(f32 [2, 3])`. */
  toString(): string {
    return this.describe();
  }

  private hostArray(): RawHostArray<D> {
    const dtype: DType = this.dtype;
    switch (dtype) {
      case 'f32':
        return new Float32Array(this.size) as RawHostArray<D>;
      case 'i32':
        return new Int32Array(this.size) as RawHostArray<D>;
      case 'f16':
      case 'bf16':
        return new Uint16Array(this.size) as RawHostArray<D>;
    }
  }

  private describe(): string {
    return describeTensor(this.dtype, this.shape);
  }

  /** Refuses a disposed receiver the way op front-ends refuse a disposed argument (named `x`). */
  #checkLive(op: string): void {
    if (this.owner.disposed) throw new DisposedError(`${op}: x: the GpuCompute holding ${this.describe()}`);
    if (this.isDisposed) throw new DisposedError(`${op}: x ${this.describe()}`);
  }

  /** A gradient must be a live tensor of the same owner, shape and dtype. */
  #checkGrad(value: unknown): void {
    const op = 'grad';
    this.#checkLive(op);
    if (!(value instanceof Tensor)) throw new InvalidArgumentError(`${op}: must be a Tensor or undefined, got ${describeValue(value)}`);
    value.#checkLive(op);
    if (value.owner !== this.owner) throw new InvalidArgumentError(`${op}: ${value.describe()} belongs to another GpuCompute than ${this.describe()}`);
    if (value.dtype !== this.dtype || value.shape.length !== this.shape.length || value.shape.some((d, i) => d !== this.shape[i])) {
      throw new InvalidArgumentError(`${op}: the gradient of ${this.describe()} must have its shape and dtype, got ${value.describe()}`);
    }
  }
}

function describeTensor(dtype: DType, shape: readonly number[]): string {
  return `Tensor(${dtype} ${formatShape(shape)})`;
}

function widen(dtype: DType, raw: RawHostArray): HostArray {
  if (dtype === 'f16') return fromF16Array(raw as Uint16Array);
  if (dtype === 'bf16') return fromBf16Array(raw as Uint16Array);
  return raw as HostArray;
}

/** Validates a reshape target and infers its -1 dim. */
function resolveReshape(tensor: Tensor, requested: readonly unknown[]): readonly number[] {
  const op = 'reshape';
  const inferred = requested.filter((d) => d === -1).length;
  if (inferred > 1) throw new InvalidArgumentError(`${op}: only one dim may be -1, got ${describeValue(requested)}`);
  // Without a -1 the validated shape is the new one (frozen, as the tensor keeps it).
  const known = validateShape(op, inferred === 0 ? requested : requested.filter((d) => d !== -1));
  const knownSize = shapeSize(known);
  if (inferred === 1) {
    if (knownSize === 0 || tensor.size % knownSize !== 0) {
      throw new InvalidArgumentError(
        `${op}: cannot reshape ${tensor.toString()} (${tensor.size} elements) to ${formatShape(requested as number[])}`,
      );
    }
    return requested.map((d) => (d === -1 ? tensor.size / knownSize : (d as number)));
  }
  if (knownSize !== tensor.size) {
    throw new InvalidArgumentError(
      `${op}: cannot reshape ${tensor.toString()} (${tensor.size} elements) to ${formatShape(requested as number[])} (${knownSize} elements)`,
    );
  }
  return known;
}
