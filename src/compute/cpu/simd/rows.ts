/**
 * Row-wise ops over [rows, cols] on the SIMD kernels (`kernels/wasm/rows.c`): softmax,
 * logSoftmax and layerNorm, with the CPU backend's meaning. Rows are split across threads.
 */
import { dtypeSize, type DType } from '../../core/dtype.js';
import { DTYPE_CODE } from './codes.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

function rowRanges(rt: SimdRuntime, rows: number, cols: number, dtype: DType): [number, number][] {
  return splitRange(rows, rt.threads, Math.ceil(rt.threshold('rowsBytes') / (cols * dtypeSize[dtype])));
}

/** Softmax over each row (logSoftmax when `log`); an all -inf row gives NaN. */
export function softmax(rt: SimdRuntime, dtype: DType, x: number, out: number, rows: number, cols: number, log: boolean): void {
  const dt = DTYPE_CODE[dtype];
  rt.run('softmax', rowRanges(rt, rows, cols, dtype).map(([r0, r1]) => [dt, x, out, cols, r0, r1, log ? 1 : 0]), false, rt.cost('rowsBytes', rows * cols * dtypeSize[dtype]));
}

/** (x − mean)/√(var + eps)·gamma + beta over each row; gamma and beta ([cols], `dtype`) may be absent. */
export function layerNorm(
  rt: SimdRuntime,
  dtype: DType,
  x: number,
  gamma: number | undefined,
  beta: number | undefined,
  out: number,
  rows: number,
  cols: number,
  eps: number,
): void {
  const dt = DTYPE_CODE[dtype];
  rt.run(
    'layer_norm',
    rowRanges(rt, rows, cols, dtype).map(([r0, r1]) => [dt, x, gamma ?? 0, beta ?? 0, out, cols, r0, r1, eps]),
    false,
    rt.cost('rowsBytes', rows * cols * dtypeSize[dtype]),
  );
}
