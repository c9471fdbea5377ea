/** Shape arithmetic every layer shares: element counts, row-major strides, and how shapes read in messages. */

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

/** `[2, 3]` style rendering used in every message. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/** Whether two shapes have the same dims. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
