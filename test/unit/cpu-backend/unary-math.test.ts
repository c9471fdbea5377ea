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
import { freshSeed, prng, SPECIAL_VALUES, ulpError } from '../cpu-simd/helpers.js';
import { GRAD_REF, UNARY_REF } from '../cpu-simd/reference-math.js';

const SLOPE = 0.01;

/** f32 inputs: the special values, [-30, 30] in steps of 2^-7, and random mantissas in every binade of both signs. */
function inputs(seed: number): Float32Array {
  const points: number[] = [...SPECIAL_VALUES];
  for (let x = -30; x <= 30; x += 2 ** -7) points.push(x);
  const next = prng(seed);
  const bits = new Uint32Array(1);
  const value = new Float32Array(bits.buffer);
  for (let exponent = 0; exponent < 255; exponent++) {
    for (let k = 0; k < 16; k++) {
      for (const sign of [0, 1]) {
        bits[0] = ((sign << 31) | (exponent << 23) | Math.floor(next() * 0x800000)) >>> 0;
        points.push(value[0]!);
      }
    }
  }
  return Float32Array.from(points);
}

/** The largest f32 ulp error of fround(f(x)) against ref(x), and where; a reference beyond f32 (∞, NaN) must be met exactly. */
function worst(xs: Float32Array, f: (x: number) => number, ref: (x: number) => number): { ulp: number; at: number } {
  let w = { ulp: 0, at: 0 };
  for (const x of xs) {
    const [got, want] = [Math.fround(f(x)), ref(x)];
    const rounded = Math.fround(want);
    const u = Number.isFinite(rounded) ? ulpError(got, want, 'f32') : Object.is(got, rounded) || (Number.isNaN(got) && Number.isNaN(rounded)) ? 0 : Infinity;
    if (u > w.ulp) w = { ulp: u, at: x };
  }
  return w;
}

describe('the JS backend scalar formulas', () => {
  const seed = freshSeed();
  const xs = inputs(seed);

  it.each(UNARY_OP_NAMES)(`%s is within one f32 ulp of float64 over the f32 line (seed ${seed})`, (op) => {
    const w = worst(xs, (x) => UNARY_MATH[op](x, SLOPE), (x) => UNARY_REF[op](x, SLOPE));
    expect(w.ulp, `${op}: ${w.ulp.toFixed(2)} ulp at x = ${w.at}`).toBeLessThanOrEqual(1);
  });

  it.each(ACTIVATION_GRAD_OPS)(`%s is within one f32 ulp of float64 over the f32 line (seed ${seed})`, (op) => {
    const w = worst(xs, (x) => DERIVATIVE_MATH[op](x, SLOPE), (x) => GRAD_REF[op](x, SLOPE));
    expect(w.ulp, `${op}: ${w.ulp.toFixed(2)} ulp at x = ${w.at}`).toBeLessThanOrEqual(1);
  });
});
