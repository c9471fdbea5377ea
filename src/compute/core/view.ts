/**
 * The plain-data description of a dense tensor that the front-end hands to a
 * backend, and the shape arithmetic every backend shares.
 */
import type { DType } from './dtype.js';
import { dtypeSize } from './dtype.js';

/** Opaque, backend-specific device (or host) memory. */
export interface BackendBuffer {
  readonly byteLength: number;
}

/**
 * A dense row-major view of a buffer: `size` elements of `dtype` starting
 * `offset` elements into `buffer`, read as `shape`.
 */
export interface TensorView {
  buffer: BackendBuffer;
  dtype: DType;
  shape: readonly number[];
  /** Start of the view, in elements of `dtype`. */
  offset: number;
  /** Number of elements (the product of `shape`; 1 for a scalar shape `[]`). */
  size: number;
}

/** Number of elements of `shape` (1 for `[]`). */
export function shapeSize(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major element strides of `shape` (the last dimension has stride 1). */
export function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
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
