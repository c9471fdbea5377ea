/**
 * Backward formulas that subtract nearly equal terms (softmax, layerNorm, the losses) run in f32
 * for 16-bit tensors, as PyTorch does, and round once at the end.
 */
import type { DType } from '../core/dtype.js';
import { cast } from '../ops/elementwise.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/**
 * Runs `fn` on the tensors of `inputs` in f32 (16-bit ones cast, f32 ones as they are) and casts
 * each tensor it returns to the dtype given beside it.
 */
export function inF32(
  s: Session,
  inputs: readonly (Tensor | undefined)[],
  fn: (...f32: (Tensor | undefined)[]) => readonly (readonly [Tensor | undefined, DType])[],
): (Tensor | undefined)[] {
  const casts: Tensor[] = [];
  try {
    const wide = inputs.map((t) => {
      if (t === undefined || t.dtype === 'f32') return t;
      const c = cast(s, t, 'f32');
      casts.push(c);
      return c;
    });
    return fn(...wide).map(([t, dtype]) => {
      if (t === undefined || t.dtype === dtype) return t;
      try {
        return cast(s, t, dtype);
      } finally {
        t.dispose();
      }
    });
  } finally {
    for (const c of casts) c.dispose();
  }
}
