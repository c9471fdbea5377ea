/**
 * The plain-data description of a dense tensor that the front-end hands to a backend: a
 * backend's opaque buffer, a dtype, a shape and an element offset.
 */
import { dtypeSize, type DType } from './dtype.js';
import { shapeSize } from './shape.js';

/** Opaque, backend-specific device (or host) memory. */
export interface BackendBuffer {
  readonly byteLength: number;
}

/**
 * A dense row-major view of a buffer: `size` elements of `dtype` starting
 * `offset` elements into `buffer`, read as `shape`.
 */
export interface TensorView {
  readonly buffer: BackendBuffer;
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Start of the view, in elements of `dtype`. */
  readonly offset: number;
  /** Number of elements (the product of `shape`; 1 for a scalar shape `[]`). */
  readonly size: number;
}

/** Builds a view; `offset` is in elements. */
export function makeView(buffer: BackendBuffer, dtype: DType, shape: readonly number[], offset = 0): TensorView {
  return { buffer, dtype, shape, offset, size: shapeSize(shape) };
}

/** Byte offset of the view's first element inside its buffer. */
export function viewByteOffset(view: TensorView): number {
  return view.offset * dtypeSize[view.dtype];
}

/** Bytes covered by the view. */
export function viewByteLength(view: TensorView): number {
  return view.size * dtypeSize[view.dtype];
}
