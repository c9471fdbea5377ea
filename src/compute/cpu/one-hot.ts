/** One-hot encoding on the CPU: indices [outer, inner] → out [outer, classes, inner], on the calling thread. */
import type { TensorView } from '../core/view.js';
import { floatTarget, loadInt, storeFloat } from './element-io.js';

export function oneHot(indices: TensorView, out: TensorView, outer: number, classes: number, inner: number): void {
  const index = loadInt(indices);
  const dst = floatTarget(out);
  dst.fill(0);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const c = index[o * inner + i]!;
      if (c >= 0 && c < classes) dst[(o * classes + c) * inner + i] = 1;
    }
  }
  storeFloat(out, dst);
}
