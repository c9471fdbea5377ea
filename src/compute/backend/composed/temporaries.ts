/** Scratch tensors of a composed op, allocated from its backend's pool and all freed together. */
import type { DType } from '../../core/dtype.js';
import { makeView, type TensorView } from '../../core/view.js';
import { dtypeSize } from '../../core/dtype.js';
import { formatShape, shapeSize } from '../../core/shape.js';
import { OutOfMemoryError } from '../../../errors.js';
import type { BackendCore } from '../backend.js';

export class Temporaries {
  readonly #backend: BackendCore;
  readonly #views: TensorView[] = [];

  constructor(backend: BackendCore) {
    this.#backend = backend;
  }

  /** A new dense view of `shape` (freed with the others). */
  view(dtype: DType, shape: readonly number[]): TensorView {
    let buffer;
    try {
      buffer = this.#backend.alloc(Math.max(shapeSize(shape), 1) * dtypeSize[dtype]);
    } catch (err) {
      // The op's front-end adds the op's name.
      if (err instanceof OutOfMemoryError) err.message = `a ${dtype} tensor of shape ${formatShape(shape)} (scratch): ${err.message}`;
      throw err;
    }
    const view = makeView(buffer, dtype, shape);
    this.#views.push(view);
    return view;
  }

  /**
   * `x` as f32: itself when it is f32, else a cast copy (composed ops compute in f32, as the
   * native kernels do, so 16-bit inputs are not rounded between steps).
   */
  f32(x: TensorView): TensorView {
    if (x.dtype === 'f32') return x;
    const copy = this.view('f32', x.shape);
    this.#backend.cast(x, copy);
    return copy;
  }

  /** Frees every view. GPU pools order the frees after the queued work, so this is safe at once. */
  [Symbol.dispose](): void {
    for (const view of this.#views) this.#backend.free(view.buffer);
    this.#views.length = 0;
  }
}
