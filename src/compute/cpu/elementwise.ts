/**
 * Elementwise CPU ops: unary math and activations, activation backward,
 * broadcasting binary ops, cast and fill.
 */
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import { dtypeSize, f32ToBf16Bits, f32ToF16Bits } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import * as act from './unary-math.js';
import { DERIVATIVE_MATH, UNARY_MATH } from './unary-math.js';
import { cpuBuffer, floatTarget, loadFloat, loadInt, storeFloat } from './element-io.js';

type NumericArray = Float32Array | Int32Array;

/**
 * Loops written out per op, each its own function, so V8 sees one call target and one array type
 * per loop and inlines the arithmetic: a shared loop over a scalar function runs 2–7x slower once
 * it has seen a few ops (measured on this project's development machine). An op without a loop
 * here runs that shared loop over its function in `unary-math.ts`: the same meaning, slower.
 */
type UnaryLoop = (x: Float32Array, out: Float32Array, alpha: number) => void;

const FLOAT_UNARY: Partial<Record<UnaryOp, UnaryLoop>> = {
  neg: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = -x[i]!; },
  abs: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = Math.abs(x[i]!); },
  exp: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = Math.exp(x[i]!); },
  log: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = Math.log(x[i]!); },
  sqrt: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = Math.sqrt(x[i]!); },
  rsqrt: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = 1 / Math.sqrt(x[i]!); },
  // Math.max keeps NaN (as PyTorch's relu does) and maps -0 to +0.
  relu: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = Math.max(x[i]!, 0); },
  leakyRelu: (x, out, alpha) => { for (let i = 0; i < x.length; i++) { const v = x[i]!; out[i] = v > 0 ? v : alpha * v; } },
  sigmoid: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = act.sigmoid(x[i]!); },
  tanh: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = Math.tanh(x[i]!); },
  gelu: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = act.gelu(x[i]!); },
  geluTanh: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = act.geluTanh(x[i]!); },
  silu: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = act.silu(x[i]!); },
  softplus: (x, out) => { for (let i = 0; i < x.length; i++) out[i] = act.softplus(x[i]!); },
};

type GradLoop = (x: Float32Array, dy: Float32Array, out: Float32Array, alpha: number) => void;

/** As {@link FLOAT_UNARY}, for the derivatives. */
const FLOAT_GRAD: Partial<Record<ActivationGradOp, GradLoop>> = {
  reluGrad: (x, dy, out) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.reluDerivative(x[i]!); },
  leakyReluGrad: (x, dy, out, alpha) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.leakyReluDerivative(x[i]!, alpha); },
  sigmoidGrad: (x, dy, out) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.sigmoidDerivative(x[i]!); },
  tanhGrad: (x, dy, out) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.tanhDerivative(x[i]!); },
  geluGrad: (x, dy, out) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.geluDerivative(x[i]!); },
  geluTanhGrad: (x, dy, out) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.geluTanhDerivative(x[i]!); },
  siluGrad: (x, dy, out) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.siluDerivative(x[i]!); },
  softplusGrad: (x, dy, out) => { for (let i = 0; i < x.length; i++) out[i] = dy[i]! * act.softplusDerivative(x[i]!); },
};

/**
 * One contiguous run of a binary op: n outputs from a and b read with steps
 * aStep/bStep (1, or 0 for a repeated element). Layouts are built from runs.
 */
type BinaryRun<T extends NumericArray> = (a: T, ai: number, aStep: number, b: T, bi: number, bStep: number, out: T, oi: number, n: number) => void;

const FLOAT_BINARY: Record<BinaryOp, BinaryRun<Float32Array>> = {
  add: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = a[ai + j * as]! + b[bi + j * bs]!; },
  sub: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = a[ai + j * as]! - b[bi + j * bs]!; },
  mul: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = a[ai + j * as]! * b[bi + j * bs]!; },
  div: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = a[ai + j * as]! / b[bi + j * bs]!; },
  // Math.max/min propagate NaN, the documented meaning on every backend.
  max: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = Math.max(a[ai + j * as]!, b[bi + j * bs]!); },
  min: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = Math.min(a[ai + j * as]!, b[bi + j * bs]!); },
};

/** The binary ops the front-end allows on i32 (division is float-only). */
type IntBinaryOp = Exclude<BinaryOp, 'div'>;

/** i32 arithmetic wraps modulo 2^32, as on the GPU. */
const INT_BINARY: Record<IntBinaryOp, BinaryRun<Int32Array>> = {
  add: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = (a[ai + j * as]! + b[bi + j * bs]!) | 0; },
  sub: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = (a[ai + j * as]! - b[bi + j * bs]!) | 0; },
  mul: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = Math.imul(a[ai + j * as]!, b[bi + j * bs]!); },
  max: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = Math.max(a[ai + j * as]!, b[bi + j * bs]!); },
  min: (a, ai, as, b, bi, bs, out, oi, n) => { for (let j = 0; j < n; j++) out[oi + j] = Math.min(a[ai + j * as]!, b[bi + j * bs]!); },
};

export function unary(op: UnaryOp, x: TensorView, out: TensorView, alpha = 0.01): void {
  if (x.dtype === 'i32') {
    // Only the ops the table marks as taking i32 reach here; `| 0` wraps modulo 2^32 (neg and abs map INT_MIN to itself).
    const src = loadInt(x);
    const dst = loadInt(out);
    const f = UNARY_MATH[op];
    for (let i = 0; i < src.length; i++) dst[i] = f(src[i]!, 0) | 0;
    return;
  }
  const dst = floatTarget(out);
  const src = loadFloat(x);
  const loop = FLOAT_UNARY[op];
  if (loop) loop(src, dst, alpha);
  else {
    const f = UNARY_MATH[op];
    for (let i = 0; i < src.length; i++) dst[i] = f(src[i]!, alpha);
  }
  storeFloat(out, dst);
}

export function activationGrad(op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha = 0.01): void {
  const dst = floatTarget(out);
  const [src, grad] = [loadFloat(x), loadFloat(dy)];
  const loop = FLOAT_GRAD[op];
  if (loop) loop(src, grad, dst, alpha);
  else {
    const f = DERIVATIVE_MATH[op];
    for (let i = 0; i < src.length; i++) dst[i] = grad[i]! * f(src[i]!, alpha);
  }
  storeFloat(out, dst);
}

export function binary(op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
  if (a.dtype === 'i32') {
    broadcastApply(INT_BINARY[op as IntBinaryOp], loadInt(a), loadInt(b), loadInt(out), plan);
    return;
  }
  const dst = floatTarget(out);
  broadcastApply(FLOAT_BINARY[op], loadFloat(a), loadFloat(b), dst, plan);
  storeFloat(out, dst);
}

/** Covers the plan's output with runs: one for dense/scalar layouts, one per row otherwise. */
function broadcastApply<T extends NumericArray>(run: BinaryRun<T>, a: T, b: T, out: T, plan: BroadcastPlan): void {
  const n = out.length;
  switch (plan.kind) {
    case 'same':
      run(a, 0, 1, b, 0, 1, out, 0, n);
      return;
    case 'scalarB':
      run(a, 0, 1, b, 0, 0, out, 0, n);
      return;
    case 'scalarA':
      run(a, 0, 0, b, 0, 1, out, 0, n);
      return;
    case 'rowB':
    case 'rowA': {
      const cols = plan.outShape[plan.outShape.length - 1]!;
      const rowIsB = plan.kind === 'rowB';
      for (let base = 0; base < n; base += cols) {
        run(a, rowIsB ? base : 0, 1, b, rowIsB ? 0 : base, 1, out, base, cols);
      }
      return;
    }
    case 'general':
      generalBroadcast(run, a, b, out, plan);
      return;
  }
}

/** Walks the output in row-major order: one run per innermost row, an odometer over the outer dims. */
function generalBroadcast<T extends NumericArray>(run: BinaryRun<T>, a: T, b: T, out: T, plan: BroadcastPlan): void {
  const { outShape, aStrides, bStrides } = plan;
  const rank = outShape.length;
  const inner = outShape[rank - 1]!;
  const aInner = aStrides[rank - 1]!;
  const bInner = bStrides[rank - 1]!;
  const index = new Array<number>(rank).fill(0);
  let ai = 0;
  let bi = 0;
  for (let base = 0; base < out.length; base += inner) {
    run(a, ai, aInner, b, bi, bInner, out, base, inner);
    for (let d = rank - 2; d >= 0; d--) {
      index[d]!++;
      ai += aStrides[d]!;
      bi += bStrides[d]!;
      if (index[d]! < outShape[d]!) break;
      ai -= aStrides[d]! * outShape[d]!;
      bi -= bStrides[d]! * outShape[d]!;
      index[d] = 0;
    }
  }
}

/** Float → i32: truncate toward zero, saturate at the i32 range, NaN → 0 (as `cvt.rzi.s32.f32`). */
function floatToInt(v: number): number {
  if (Number.isNaN(v)) return 0;
  if (v >= 2147483647) return 2147483647;
  if (v <= -2147483648) return -2147483648;
  return Math.trunc(v);
}

export function cast(x: TensorView, out: TensorView): void {
  if (x.dtype === out.dtype) {
    copy(out, x);
    return;
  }
  if (out.dtype === 'i32') {
    const src = loadFloat(x);
    const dst = loadInt(out);
    for (let i = 0; i < src.length; i++) dst[i] = floatToInt(src[i]!);
    return;
  }
  // i32 and float sources both go through f32, as the GPU does.
  storeFloat(out, loadFloat(x));
}

/** Bit-exact copy of `src` into `dst` (same dtype, same size). */
export function copy(dst: TensorView, src: TensorView): void {
  const elementBytes = dtypeSize[src.dtype];
  const from = cpuBuffer(src).bytes.subarray(src.offset * elementBytes, (src.offset + src.size) * elementBytes);
  cpuBuffer(dst).bytes.set(from, dst.offset * elementBytes);
}

export function fill(out: TensorView, value: number): void {
  const buf = cpuBuffer(out);
  const end = out.offset + out.size;
  switch (out.dtype) {
    case 'f32':
      buf.f32.fill(value, out.offset, end);
      return;
    case 'i32':
      buf.i32.fill(value, out.offset, end);
      return;
    case 'f16':
      buf.u16.fill(f32ToF16Bits(value), out.offset, end);
      return;
    case 'bf16':
      buf.u16.fill(f32ToBf16Bits(value), out.offset, end);
      return;
  }
}
