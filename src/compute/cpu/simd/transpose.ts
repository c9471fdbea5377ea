/**
 * Swaps the last two dims of [batch, rows, cols] on the SIMD kernels (`kernels/wasm/
 * transpose.c`), moving raw element bits. Work is cut into strips of 32 source rows.
 */
import { dtypeSize, type DType } from '../../core/dtype.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** Source rows per strip (STRIP in transpose.c). */
const STRIP = 32;

export function transpose(rt: SimdRuntime, dtype: DType, x: number, out: number, batch: number, rows: number, cols: number): void {
  const size = dtypeSize[dtype];
  const strips = batch * Math.ceil(rows / STRIP);
  const minimum = Math.ceil(rt.threshold('transposeBytes') / (STRIP * cols * size));
  rt.run('transpose', splitRange(strips, rt.threads, minimum).map(([s0, s1]) => [size, x, out, rows, cols, s0, s1]), false, rt.cost('transposeBytes', batch * rows * cols * size));
}
