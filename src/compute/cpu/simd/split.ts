/** How a kernel family cuts its work into one contiguous range per thread. */

/**
 * Cuts [0, total) into at most `threads` ranges of at least `minimum` items each (one range when
 * total is below 2·minimum), with inner boundaries on multiples of `align`.
 */
export function splitRange(total: number, threads: number, minimum: number, align = 1): [number, number][] {
  const parts = Math.max(1, Math.min(threads, Math.floor(total / Math.max(1, minimum))));
  const ranges: [number, number][] = [];
  let start = 0;
  for (let p = 0; p < parts && start < total; p++) {
    const end = p === parts - 1 ? total : Math.min(total, Math.ceil((total * (p + 1)) / parts / align) * align);
    if (end > start) ranges.push([start, end]);
    start = end;
  }
  return ranges;
}
