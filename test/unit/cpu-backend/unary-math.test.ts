/**
 * The JS backend's scalar formulas (`cpu/unary-math.ts`, what the CPU backend runs on memory the
 * WebAssembly kernels do not hold, and its matmul epilogues): computed in double and rounded once
 * to f32, each must land within one f32 ulp of a float64 reference written to keep its digits in
 * the tails, over a dense grid of [-30, 30], fresh random values from every binade, and the
 * special values. A formula that cancels in double (1 + tanh u, 1 − σ(x), 1 − tanh²x) misses by
 * far more out there: gelu's tanh form gave 0 for every x below about −8.
 */
import { describe, expect, it } from 'vitest';
import { ACTIVATION_GRAD_OPS, UNARY_OP_NAMES } from '../../../src/compute/core/elementwise-ops.js';
import { DERIVATIVE_MATH, UNARY_MATH } from '../../../src/compute/cpu/unary-math.js';
import { f32Line, freshSeed, maxUlp } from '../cpu-simd/helpers.js';
import { GRAD_REF, UNARY_REF } from '../cpu-simd/reference-math.js';

const SLOPE = 0.01;

/** The largest f32 ulp error of fround(f(x)) against ref(x) over `xs`, and where. */
function worst(xs: Float32Array, f: (x: number) => number, ref: (x: number) => number): { ulp: number; at: number } {
  return maxUlp(xs, Array.from(xs, (x) => Math.fround(f(x))), ref);
}

describe('the JS backend scalar formulas', () => {
  const seed = freshSeed();
  const xs = f32Line(seed, 2 ** -7, 16);

  it.each(UNARY_OP_NAMES)(`%s is within one f32 ulp of float64 over the f32 line (seed ${seed})`, (op) => {
    const w = worst(xs, (x) => UNARY_MATH[op](x, SLOPE), (x) => UNARY_REF[op](x, SLOPE));
    expect(w.ulp, `${op}: ${w.ulp.toFixed(2)} ulp at x = ${w.at}`).toBeLessThanOrEqual(1);
  });

  it.each(ACTIVATION_GRAD_OPS)(`%s is within one f32 ulp of float64 over the f32 line (seed ${seed})`, (op) => {
    const w = worst(xs, (x) => DERIVATIVE_MATH[op](x, SLOPE), (x) => GRAD_REF[op](x, SLOPE));
    expect(w.ulp, `${op}: ${w.ulp.toFixed(2)} ulp at x = ${w.at}`).toBeLessThanOrEqual(1);
  });
});
