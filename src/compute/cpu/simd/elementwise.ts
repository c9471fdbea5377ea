/**
 * Elementwise ops on the SIMD kernels: fill, copy, cast, the unary ops, the activation
 * derivatives and the broadcasting binary ops, with the CPU backend's meaning (see
 * `kernels/wasm/elementwise.c`, `binary.c`). Addresses are byte offsets into the runtime's
 * memory, counts are elements. Above {@link THRESHOLDS}.elementwiseBytes the range is split
 * across threads; an element's result never depends on the split.
 */
import type { BroadcastPlan } from '../../core/broadcast.js';
import { dtypeSize, f32ToBf16Bits, f32ToF16Bits, type DType } from '../../core/dtype.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../../core/elementwise-ops.js';
import { BINARY_CODE, DTYPE_CODE, GRAD_CODE, UNARY_CODE } from './codes.js';
import type { KernelName, SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** Default slope of leakyRelu, as the JS backend's. */
const LEAKY_SLOPE = 0.01;

/** Unary ops and derivatives without a transcendental function: the cheap elementwise threshold. */
const CHEAP = new Set<UnaryOp | ActivationGradOp>(['neg', 'abs', 'sqrt', 'rsqrt', 'relu', 'leakyRelu', 'reluGrad', 'leakyReluGrad']);

/** The threshold of an elementwise op. */
function kindOf(op: UnaryOp | ActivationGradOp): 'elementwiseBytes' | 'transcendentalBytes' {
  return CHEAP.has(op) ? 'elementwiseBytes' : 'transcendentalBytes';
}

/** Runs `kernel` over n elements in per-thread ranges; `args(start, count)` builds one call. */
export function overElements(
  rt: SimdRuntime,
  kernel: KernelName,
  n: number,
  elementBytes: number,
  args: (start: number, count: number) => number[],
  kind: 'elementwiseBytes' | 'transcendentalBytes' = 'elementwiseBytes',
): void {
  const minimum = Math.ceil(rt.threshold(kind) / elementBytes);
  if (rt.threads === 1 || n < 2 * minimum) {
    rt.run(kernel, [args(0, n)]);
    return;
  }
  // Boundaries on 64-byte lines, so threads never write the same cache line.
  const ranges = splitRange(n, rt.threads, minimum, 64 / Math.min(elementBytes, 4));
  rt.run(kernel, ranges.map(([start, end]) => args(start, end - start)), false, rt.cost(kind, n * elementBytes));
}

const scratch = new DataView(new ArrayBuffer(4));

/** The bit pattern `value` is stored as: what `TypedArray.fill` (f32, i32) or dtype.ts (f16, bf16) stores. */
export function fillBits(dtype: DType, value: number): number {
  switch (dtype) {
    case 'f32':
      scratch.setFloat32(0, value, true);
      return scratch.getUint32(0, true);
    case 'i32':
      return value | 0;
    case 'f16':
      return f32ToF16Bits(value);
    case 'bf16':
      return f32ToBf16Bits(value);
  }
}

/** Sets n elements of `dtype` at `out` to `value`. */
export function fill(rt: SimdRuntime, dtype: DType, out: number, n: number, value: number): void {
  const size = dtypeSize[dtype];
  const bits = fillBits(dtype, value);
  overElements(rt, 'fill', n, size, (s, c) => [out + s * size, c, bits, size]);
}

/** Copies `bytes` bytes (memmove's meaning). */
export function copy(rt: SimdRuntime, dst: number, src: number, bytes: number): void {
  overElements(rt, 'copy', bytes, 1, (s, c) => [dst + s, src + s, c]);
}

/** Converts n elements: through f32, rounding to nearest even; into i32 truncating and saturating, NaN → 0. */
export function cast(rt: SimdRuntime, xType: DType, x: number, outType: DType, out: number, n: number): void {
  if (xType === outType) {
    copy(rt, out, x, n * dtypeSize[xType]);
    return;
  }
  const xs = dtypeSize[xType];
  const os = dtypeSize[outType];
  overElements(rt, 'cast', n, Math.max(xs, os), (s, c) => [x + s * xs, DTYPE_CODE[xType], out + s * os, DTYPE_CODE[outType], c]);
}

/** out = op(x) over n elements; `alpha` is leakyRelu's slope. i32 takes neg and abs. */
export function unary(rt: SimdRuntime, op: UnaryOp, dtype: DType, x: number, out: number, n: number, alpha = LEAKY_SLOPE): void {
  const size = dtypeSize[dtype];
  const code = UNARY_CODE[op];
  const dt = DTYPE_CODE[dtype];
  overElements(rt, 'unary', n, size, (s, c) => [code, dt, x + s * size, out + s * size, c, alpha], kindOf(op));
}

/** out = dy·f'(x) over n elements of a float dtype; `alpha` is leakyRelu's slope. */
export function activationGrad(
  rt: SimdRuntime,
  op: ActivationGradOp,
  dtype: DType,
  x: number,
  dy: number,
  out: number,
  n: number,
  alpha = LEAKY_SLOPE,
): void {
  const size = dtypeSize[dtype];
  const code = GRAD_CODE[op];
  const dt = DTYPE_CODE[dtype];
  overElements(rt, 'activation_grad', n, size, (s, c) => [code, dt, x + s * size, dy + s * size, out + s * size, c, alpha], kindOf(op));
}

/** Writes a broadcast plan where `binary.c` reads it: rank, then shape, a strides, b strides (6 each). */
function writePlan(rt: SimdRuntime, plan: BroadcastPlan): number {
  const at = rt.structArea();
  const i32 = rt.i32;
  const base = at / 4;
  const rank = plan.outShape.length;
  i32[base] = rank;
  for (let d = 0; d < 6; d++) {
    i32[base + 1 + d] = d < rank ? plan.outShape[d]! : 1;
    i32[base + 7 + d] = d < rank ? plan.aStrides[d]! : 0;
    i32[base + 13 + d] = d < rank ? plan.bStrides[d]! : 0;
  }
  return at;
}

/** out = a op b under the front-end's broadcast plan (a, b, out of one dtype). */
export function binary(rt: SimdRuntime, op: BinaryOp, dtype: DType, a: number, b: number, out: number, plan: BroadcastPlan): void {
  const planAt = writePlan(rt, plan);
  const n = plan.outShape.reduce((p, d) => p * d, 1);
  const code = BINARY_CODE[op];
  const dt = DTYPE_CODE[dtype];
  overElements(rt, 'binary', n, dtypeSize[dtype], (s, c) => [code, dt, a, b, out, planAt, s, s + c]);
}
