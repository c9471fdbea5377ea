/**
 * The CPU backend's products through the machine's BLAS (`src/blas/`): per batch entry one
 * sgemm of alpha·op(A)·op(B) into f32 (in place for an f32 output; 16-bit operands widened to
 * f32 first), then the epilogue (beta·C, bias, activation) in one pass that rounds once to the
 * output dtype. f32 accumulation, as the GPU backends'.
 */
import type { Blas } from '../../blas/blas.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import { cpuBuffer, floatTarget, loadFloat, storeFloat } from './element-io.js';
import { UNARY_MATH } from './unary-math.js';

/** `GPUCOMPUTE_BLAS=0` keeps the CPU backend off the BLAS (its own kernels run instead). */
export function blasEnabled(): boolean {
  return process.env.GPUCOMPUTE_BLAS !== '0';
}

/** Runs `params` (validated by the front-end; never an empty output) through `blas`. */
export function blasMatmul(blas: Blas, params: MatmulParams): void {
  const { m, n, k, batch, transA, transB, alpha, beta } = params;
  // f32 operands are read in place; 16-bit ones widened once for the whole call.
  const a = operand(params.a);
  const b = operand(params.b);
  const out = floatTarget(params.out);
  for (let e = 0; e < batch; e++) {
    blas.sgemm({
      transA,
      transB,
      m,
      n,
      k,
      alpha,
      a: a.values,
      aOffset: a.offset + e * params.aBatchStride,
      b: b.values,
      bOffset: b.offset + e * params.bBatchStride,
      beta: 0,
      c: out,
      cOffset: e * m * n,
    });
  }
  const c = params.c && beta !== 0 ? loadFloat(params.c) : undefined;
  const bias = params.bias ? loadFloat(params.bias) : undefined;
  const activation = params.activation ? UNARY_MATH[params.activation] : undefined;
  if (c || bias || activation) {
    for (let e = 0; e < batch; e++) {
      const cBase = e * params.cBatchStride;
      const outBase = e * m * n;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          const at = outBase + i * n + j;
          let v = out[at]!;
          if (c) v += beta * c[cBase + i * n + j]!;
          if (bias) v += bias[j]!;
          if (activation) v = activation(v, 0);
          out[at] = v;
        }
      }
    }
  }
  storeFloat(params.out, out);
}

/** An operand as f32 values and where its view starts in them. */
function operand(view: MatmulParams['a']): { values: Float32Array; offset: number } {
  if (view.dtype === 'f32') return { values: cpuBuffer(view).f32, offset: view.offset };
  return { values: loadFloat(view), offset: 0 };
}
