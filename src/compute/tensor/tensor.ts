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
import { dtypeSize, fromBf16Array, fromF16Array, type DType } from '../core/dtype.js';
import { formatShape, rowMajorStrides, shapeSize } from '../core/shape.js';
import { describeValue, validateShape } from '../core/validation.js';
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
}

/** Backend memory shared by a tensor and its reshape views. */
export class TensorStorage {
  private refs = 1;
  constructor(
    readonly owner: TensorOwner,
    readonly buffer: BackendBuffer,
  ) {}

  retain(): void {
    this.refs++;
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

  /** @internal Use the GpuCompute factories; this adopts one reference to `storage`. */
  constructor(storage: TensorStorage, dtype: D, shape: readonly number[], offset = 0) {
    this.owner = storage.owner;
    this.storage = storage;
    this.dtype = dtype;
    this.shape = Object.isFrozen(shape) ? shape : Object.freeze([...shape]);
    this.size = shapeSize(shape);
    this.offset = offset;
    leakRegistry.register(this, { storage, dtype, shape: this.shape }, this);
    this.owner.adopt(this);
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
    return { buffer: this.storage.buffer, dtype: this.dtype, shape: this.shape, offset: this.offset, size: this.size };
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

  /** Releases this tensor's reference to its storage. Safe to call twice. */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    leakRegistry.unregister(this);
    this.storage.release();
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
function resolveReshape(tensor: Tensor, requested: readonly unknown[]): number[] {
  const op = 'reshape';
  const inferred = requested.filter((d) => d === -1).length;
  if (inferred > 1) throw new InvalidArgumentError(`${op}: only one dim may be -1, got ${describeValue(requested)}`);
  const known = validateShape(op, requested.filter((d) => d !== -1));
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
  return [...(requested as number[])];
}
