/** Swaps the last two dims of a [batch, rows, cols] tensor by moving raw element bits. */
import type { TensorView } from '../core/view.js';
import { cpuBuffer } from './element-io.js';

export function transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
  const wide = x.dtype === 'f32' || x.dtype === 'i32';
  const src = wide ? cpuBuffer(x).u32 : cpuBuffer(x).u16;
  const dst = wide ? cpuBuffer(out).u32 : cpuBuffer(out).u16;
  const matrix = rows * cols;
  // Tiles keep both the reads and the writes cache-friendly on large matrices.
  const tile = 32;
  for (let m = 0; m < batch; m++) {
    const srcBase = x.offset + m * matrix;
    const dstBase = out.offset + m * matrix;
    for (let r0 = 0; r0 < rows; r0 += tile) {
      const r1 = Math.min(r0 + tile, rows);
      for (let c0 = 0; c0 < cols; c0 += tile) {
        const c1 = Math.min(c0 + tile, cols);
        for (let r = r0; r < r1; r++) {
          for (let c = c0; c < c1; c++) dst[dstBase + c * rows + r] = src[srcBase + r * cols + c]!;
        }
      }
    }
  }
}
