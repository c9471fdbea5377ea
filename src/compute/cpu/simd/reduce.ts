/**
 * Reductions over one axis of [outer, axisLen, inner] on the SIMD kernels (`kernels/wasm/
 * reduce.c`), with the CPU backend's meaning. Work is split by outputs: whole rows when
 * inner = 1, else the outer index or, with few of those, ranges of adjacent inner positions
 * (each thread streams contiguous runs, accumulating in its scratch). Few outputs over a long axis (outer = 1, inner ≤ 64) are cut
 * into REDUCE_CHUNK-long stretches of the axis whose partial results are combined in order; the
 * cut depends on the shape only, so any thread count gives the same bits.
 */
import { dtypeSize, type DType } from '../../core/dtype.js';
import type { ReduceOp, ReducePlan } from '../../core/reduce-plan.js';
import { DTYPE_CODE, REDUCE_CODE } from './codes.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** Axis elements per partial result when the axis is cut. */
export const REDUCE_CHUNK = 1 << 16;
/** Most outputs whose axis is cut into chunks. */
const CHUNKED_MAX_INNER = 64;
/** Bytes of one partial result (`partial` in reduce.c). */
const PARTIAL_BYTES = 16;

/** Reduces x (`dtype`) into out (argmax: i32; otherwise `dtype`). */
export function reduce(rt: SimdRuntime, op: ReduceOp, dtype: DType, x: number, out: number, plan: ReducePlan): void {
  const { outer, axisLen, inner } = plan;
  const code = REDUCE_CODE[op];
  const dt = DTYPE_CODE[dtype];
  const size = dtypeSize[dtype];
  if (outer === 1 && inner <= CHUNKED_MAX_INNER && axisLen >= 2 * REDUCE_CHUNK) {
    const chunks = Math.ceil(axisLen / REDUCE_CHUNK);
    const partials = rt.temp(chunks * inner * PARTIAL_BYTES);
    try {
      const at = Number(partials.address);
      const minimum = Math.ceil(rt.threshold('reduceBytes') / (REDUCE_CHUNK * inner * size));
      const parts = splitRange(chunks, rt.threads, minimum);
      rt.run('reduce_partial', parts.map(([c0, c1]) => [code, dt, x, axisLen, inner, REDUCE_CHUNK, c0, c1, at]), true, rt.cost('reduceBytes', axisLen * inner * size));
      rt.run('reduce_combine', [[code, dt, at, chunks, inner, axisLen, out]]);
    } finally {
      rt.freeTemp(partials);
    }
    return;
  }
  const rowBytes = axisLen * inner * size;
  if (inner === 1 || outer >= rt.threads) {
    const minimum = Math.ceil(rt.threshold('reduceBytes') / rowBytes);
    const parts = splitRange(outer, rt.threads, minimum);
    rt.run('reduce', parts.map(([o0, o1]) => [code, dt, x, axisLen, inner, o0, o1, 0, inner, out]), true, rt.cost('reduceBytes', outer * rowBytes));
    return;
  }
  const minimum = Math.ceil(rt.threshold('reduceBytes') / (outer * axisLen * size));
  const parts = splitRange(inner, rt.threads, minimum, 16);
  rt.run('reduce', parts.map(([i0, i1]) => [code, dt, x, axisLen, inner, 0, outer, i0, i1, out]), true, rt.cost('reduceBytes', outer * axisLen * inner * size));
}
