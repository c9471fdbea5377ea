/**
 * Softmax and logSoftmax over the last axis of a [rows, cols] tensor, stable
 * by subtracting the row maximum; the normaliser accumulates in f64.
 */
import type { TensorView } from '../core/view.js';
import { floatTarget, loadFloat, storeFloat } from './element-io.js';

export function softmax(x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
  const src = loadFloat(x);
  const dst = floatTarget(out);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let max = -Infinity;
    for (let j = 0; j < cols; j++) max = Math.max(max, src[base + j]!);
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += Math.exp(src[base + j]! - max);
    if (log) {
      const shift = max + Math.log(sum);
      for (let j = 0; j < cols; j++) dst[base + j] = src[base + j]! - shift;
    } else {
      const scale = 1 / sum;
      for (let j = 0; j < cols; j++) dst[base + j] = Math.exp(src[base + j]! - max) * scale;
    }
  }
  storeFloat(out, dst);
}
