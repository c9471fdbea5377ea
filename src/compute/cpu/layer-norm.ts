/**
 * Layer normalisation over the last axis of a [rows, cols] tensor:
 * (x − mean) / √(var + eps) · gamma + beta, with the biased variance (as
 * PyTorch), mean and variance in f64 by two passes.
 */
import type { TensorView } from '../core/view.js';
import { floatTarget, loadFloat, storeFloat } from './element-io.js';

export function layerNorm(
  x: TensorView,
  gamma: TensorView | undefined,
  beta: TensorView | undefined,
  out: TensorView,
  rows: number,
  cols: number,
  eps: number,
): void {
  const src = loadFloat(x);
  const g = gamma ? loadFloat(gamma) : undefined;
  const b = beta ? loadFloat(beta) : undefined;
  const dst = floatTarget(out);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += src[base + j]!;
    const mean = sum / cols;
    let squares = 0;
    for (let j = 0; j < cols; j++) {
      const d = src[base + j]! - mean;
      squares += d * d;
    }
    const invStd = 1 / Math.sqrt(squares / cols + eps);
    for (let j = 0; j < cols; j++) {
      const normalised = (src[base + j]! - mean) * invStd;
      dst[base + j] = normalised * (g ? g[j]! : 1) + (b ? b[j]! : 0);
    }
  }
  storeFloat(out, dst);
}
