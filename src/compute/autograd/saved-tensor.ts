/**
 * A tensor an op's backward reads, held by the autograd graph: a reference to its storage (as a
 * capture holds the storages its graph reads), so `dispose()` or a `gpu.scope` ending does not
 * free what a backward still needs. Released once the backward has run, or when the graph is
 * dropped.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import { Tensor, type TensorStorage } from '../tensor/tensor.js';

export class SavedTensor {
  readonly #storage: TensorStorage;
  readonly #dtype: DType;
  readonly #shape: readonly number[];
  readonly #offset: number;
  /** The storage's version when saved: an in-place write since then makes the saved value stale. */
  readonly #version: number;
  #released = false;

  /** Holds `t`'s storage (t must be live). */
  constructor(t: Tensor) {
    const { offset } = t.view;
    this.#storage = t.sharedStorage;
    this.#storage.retain();
    this.#dtype = t.dtype;
    this.#shape = t.shape;
    this.#offset = offset;
    this.#version = this.#storage.version;
  }

  /**
   * A new tensor over the saved storage (the caller disposes it). `op` (the backward's caller) and
   * `by` (the op that saved it) name the refusal of a value an in-place write changed since.
   */
  open(op: string, by: string): Tensor {
    if (this.#storage.version !== this.#version) {
      throw new InvalidArgumentError(
        `${op}: a Tensor(${this.#dtype} [${this.#shape.join(', ')}]) that ${by} saved for its gradient was modified in place ` +
          `(by an optimizer step) after the forward; run backward before the step, or compute the forward again`,
      );
    }
    this.#storage.retain();
    return new Tensor(this.#storage, this.#dtype, this.#shape, this.#offset);
  }

  /** Gives the storage back. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#storage.release();
  }
}
