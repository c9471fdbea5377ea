/**
 * Elementwise ops on WebGPU: fill, copy, cast, unary ops and activations, their derivatives,
 * and broadcasting binary ops; the math is in `kernels/wgsl/math.wgsl`. An invocation takes one
 * element of a 32-bit output (neighbouring invocations, neighbouring words: fully coalesced) and
 * two of a 16-bit one (one 32-bit word, stored whole).
 */
import type { BroadcastPlan } from '../core/broadcast.js';
import { dtypeSize, f32ToBf16Bits, f32ToF16Bits, type DType } from '../core/dtype.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { TensorView } from '../core/view.js';
import type { Groups } from './dispatcher.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import type { WebGpuBuffer } from './webgpu-memory.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();
const GROUP = 256;

/** Whether an output dtype is written two elements per invocation. */
function pairs(dtype: DType): boolean {
  return dtype === 'f16' || dtype === 'bf16';
}

/** Workgroups for `n` outputs of `dtype`. */
function groupsFor(ctx: WebGpuOpContext, n: number, dtype: DType): Groups {
  return groups1d(ctx, pairs(dtype) ? Math.ceil(n / 2) : n, GROUP);
}

/** f(x) in WGSL, as a function body over `x` (leakyRelu's slope is `P.alpha`). */
const UNARY_BODY: Record<UnaryOp, string> = {
  neg: 'return -x;',
  abs: 'return abs(x);',
  exp: 'return exp_acc(x);',
  log: 'return log_acc(x);',
  sqrt: 'return select(sqrt(x), f32_nan(), x < 0.0);',
  // ±0 → ±Infinity (1/√−0 = 1/−0), as on the CPU.
  rsqrt: 'return select(select(1.0 / sqrt(x), f32_nan(), x < 0.0), bitcast<f32>(0x7f800000u | (bitcast<u32>(x) & 0x80000000u)), x == 0.0);',
  relu: 'return relu(x);',
  leakyRelu: 'return select(P.alpha * x, x, x > 0.0);',
  sigmoid: 'return sigmoid(x);',
  tanh: 'return tanh_acc(x);',
  gelu: 'return gelu(x);',
  geluTanh: 'return gelu_tanh(x);',
  silu: 'return silu(x);',
  softplus: 'return softplus(x);',
};

/** The i32 forms (wrapping: WGSL's abs and negation map INT_MIN to itself). */
const INT_UNARY: Partial<Record<UnaryOp, string>> = { neg: '-x', abs: 'abs(x)' };

/** dy · f'(x) in WGSL, as a function body over `x` and `dy`; NaN in x stays NaN. */
const GRAD_BODY: Record<ActivationGradOp, string> = {
  reluGrad: 'return dy * select(select(0.0, 1.0, x > 0.0), x, is_nan(x));',
  leakyReluGrad: 'return dy * select(select(P.alpha, 1.0, x > 0.0), x, is_nan(x));',
  sigmoidGrad: 'return dy * sigmoid_slope(x);',
  tanhGrad: 'return dy * (4.0 * sigmoid_slope(2.0 * x));',
  geluGrad: 'return dy * (normal_cdf(x) + x * (INV_SQRT_2PI * exp_acc(-0.5 * x * x)));',
  // Where σ'(v) underflows for a finite x the second term is 0, not 0·∞ once x³ overflows (as in kernels/ops.cuh).
  geluTanhGrad:
    'let v = gelu_tanh_arg(x); let slope = sigmoid_slope(v); let dv = 2.0 * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_C * x * x); ' +
    'return dy * (sigmoid(v) + select(x * slope * dv, 0.0, slope == 0.0 && is_finite(x)));',
  siluGrad: 'return dy * (sigmoid(x) + x * sigmoid_slope(x));',
  softplusGrad: 'return dy * sigmoid(x);',
};

const FLOAT_BINARY: Record<BinaryOp, string> = { add: 'a + b', sub: 'a - b', mul: 'a * b', div: 'a / b', max: 'math_max(a, b)', min: 'math_min(a, b)' };
const INT_BINARY: Partial<Record<BinaryOp, string>> = { add: 'a + b', sub: 'a - b', mul: 'a * b', max: 'max(a, b)', min: 'min(a, b)' };

/** The element bit pattern of `value` in `dtype`, rounded as the CPU backend rounds it. */
function fillBits(dtype: TensorView['dtype'], value: number): number {
  switch (dtype) {
    case 'f32':
      return new Uint32Array(Float32Array.of(value).buffer)[0]!;
    case 'i32':
      return value >>> 0;
    case 'f16':
      return f32ToF16Bits(value);
    case 'bf16':
      return f32ToBf16Bits(value);
  }
}

export function fill(ctx: WebGpuOpContext, out: TensorView, value: number): void {
  const spec = cachedSpec(specs, `fill|${out.dtype}`, () => ({
    op: 'fill',
    files: ['fill.wgsl'],
    flags: { PAIRS: pairs(out.dtype) },
    roles: [{ name: 'out', dtype: out.dtype, write: true }],
    params: [['n', 'u32'], ['bits', 'u32']],
  }));
  ctx.dispatcher.run(spec, [out], [out.size, fillBits(out.dtype, value)], groupsFor(ctx, out.size, out.dtype));
}

/**
 * dst ← src bit for bit: a buffer copy where WebGPU allows one (different buffers, 4-byte
 * aligned ends), else the copy kernel.
 */
export function copy(ctx: WebGpuOpContext, dst: TensorView, src: TensorView): void {
  const size = dtypeSize[src.dtype];
  const from = src.buffer as WebGpuBuffer;
  const to = dst.buffer as WebGpuBuffer;
  const srcByte = from.byteOffset + src.offset * size;
  const dstByte = to.byteOffset + dst.offset * size;
  const bytes = src.size * size;
  if (from.segment !== to.segment && srcByte % 4 === 0 && dstByte % 4 === 0 && bytes % 4 === 0) {
    ctx.batch.encoder('copy').copyBufferToBuffer(from.segment.buffer, srcByte, to.segment.buffer, dstByte, bytes);
    return;
  }
  const spec = cachedSpec(specs, `copy|${src.dtype}`, () => ({
    op: 'copy',
    files: ['copy.wgsl'],
    flags: { PAIRS: pairs(src.dtype) },
    roles: [
      { name: 'x', dtype: src.dtype },
      { name: 'out', dtype: src.dtype, write: true },
    ],
    params: [['n', 'u32']],
  }));
  ctx.dispatcher.run(spec, [src, dst], [src.size], groupsFor(ctx, src.size, src.dtype));
}

/** out ← x converted (x and out differ in dtype). */
export function cast(ctx: WebGpuOpContext, x: TensorView, out: TensorView): void {
  const spec = cachedSpec(specs, `cast|${x.dtype}|${out.dtype}`, () => ({
    op: 'cast',
    files: ['cast.wgsl'],
    flags: { PAIRS: pairs(out.dtype) },
    roles: [
      { name: 'x', dtype: x.dtype },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['n', 'u32']],
  }));
  ctx.dispatcher.run(spec, [x, out], [x.size], groupsFor(ctx, x.size, out.dtype));
}

export function unary(ctx: WebGpuOpContext, op: UnaryOp, x: TensorView, out: TensorView, alpha: number): void {
  const int = x.dtype === 'i32';
  const spec = cachedSpec(specs, `unary|${op}|${x.dtype}`, () => ({
    op,
    files: ['math.wgsl', 'unary.wgsl'],
    flags: { INT: int, PAIRS: pairs(out.dtype) },
    consts: int ? { EXPR: INT_UNARY[op]! } : ({ BODY: UNARY_BODY[op] } as Record<string, string>),
    roles: [
      { name: 'x', dtype: x.dtype },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['n', 'u32'], ['alpha', 'f32']],
  }));
  ctx.dispatcher.run(spec, [x, out], [x.size, alpha], groupsFor(ctx, x.size, out.dtype));
}

export function activationGrad(ctx: WebGpuOpContext, op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha: number): void {
  const spec = cachedSpec(specs, `grad|${op}|${x.dtype}`, () => ({
    op,
    files: ['math.wgsl', 'activation-grad.wgsl'],
    flags: { PAIRS: pairs(out.dtype) },
    consts: { BODY: GRAD_BODY[op] },
    roles: [
      { name: 'x', dtype: x.dtype },
      { name: 'dy', dtype: dy.dtype },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['n', 'u32'], ['alpha', 'f32']],
  }));
  ctx.dispatcher.run(spec, [x, dy, out], [x.size, alpha], groupsFor(ctx, x.size, out.dtype));
}

/** Dims 1..5 (padded with leading 1s), then the strides of a and b over dims 0..5 (padded with 0s). */
const GENERAL_PARAMS = [
  ...[1, 2, 3, 4, 5].map((d) => [`d${d}`, 'u32'] as const),
  ...[0, 1, 2, 3, 4, 5].map((d) => [`a${d}`, 'u32'] as const),
  ...[0, 1, 2, 3, 4, 5].map((d) => [`b${d}`, 'u32'] as const),
];

export function binary(ctx: WebGpuOpContext, op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
  const int = a.dtype === 'i32';
  const kind = plan.kind;
  const spec = cachedSpec(specs, `binary|${op}|${a.dtype}|${kind}`, () => ({
    op,
    files: ['binary.wgsl'],
    flags: {
      INT: int,
      PAIRS: pairs(out.dtype),
      GENERAL: kind === 'general',
      SAME: kind === 'same',
      SCALAR_A: kind === 'scalarA',
      SCALAR_B: kind === 'scalarB',
      ROW_A: kind === 'rowA',
      ROW_B: kind === 'rowB',
    },
    consts: { EXPR: int ? INT_BINARY[op]! : FLOAT_BINARY[op] },
    roles: [
      { name: 'a', dtype: a.dtype },
      { name: 'b', dtype: b.dtype },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: kind === 'general' ? [['n', 'u32'], ...GENERAL_PARAMS] : [['n', 'u32'], ['cols', 'u32']],
  }));
  const n = out.size;
  let values: number[];
  if (kind === 'general') {
    const pad = 6 - plan.outShape.length;
    const dims = [...new Array<number>(pad).fill(1), ...plan.outShape];
    const as = [...new Array<number>(pad).fill(0), ...plan.aStrides];
    const bs = [...new Array<number>(pad).fill(0), ...plan.bStrides];
    values = [n, ...dims.slice(1), ...as, ...bs];
  } else {
    values = [n, plan.outShape[plan.outShape.length - 1]!];
  }
  ctx.dispatcher.run(spec, [a, b, out], values, groupsFor(ctx, n, out.dtype));
}
