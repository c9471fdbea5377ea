/** Shape arithmetic every layer shares: element counts, row-major strides, and how shapes read in messages. */

/** Number of elements of `shape` (1 for `[]`). */
export function shapeSize(shape: readonly number[]): number {
  let n = 1;
  for (let i = 0; i < shape.length; i++) n *= shape[i]!;
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
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
