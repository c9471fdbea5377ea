/**
 * Accuracy of the vectorised elementary functions (kernels/wasm/vmath.h) against float64 over the
 * whole f32 line: a dense grid over [-30, 30] (step 2^-9), fresh random mantissas in every binade
 * of both signs (subnormals to 3.4e38), and the special values. The f32 error is measured in ulps
 * of the true value (subnormal ulps for tiny results); ±inf, NaN and overflow must match exactly.
 * Both builds are measured where the engine runs both. Measured maxima on the development machine
 * (relaxed-simd / simd128): exp 0.82 / 1.11, log 0.77, sqrt 0.5, rsqrt 1.45, sigmoid 2.28, tanh 1.49,
 * gelu 4.92 / 4.90, geluTanh 2.96 / 3.07, silu 2.68 / 2.74, softplus 1.75 / 1.91 (over every f32
 * of magnitude 2^-8 to 128, further: see ulp-bounds.ts); derivatives:
 * sigmoid 3.51, tanh 3.52, gelu 3.62, geluTanh 4.41 / 5.09, silu 4.28 / 5.26, softplus 2.28
 * (over every f32 of the sensitive magnitudes they reach further, up to 7.92: see ulp-bounds.ts)
 * (leakyRelu and its derivative: one rounding of a double product, ≤ 0.5).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ACTIVATION_GRAD_OPS, UNARY_OP_NAMES } from '../../../src/compute/core/elementwise-ops.js';
import { activationGrad, unary } from '../../../src/compute/cpu/simd/elementwise.js';
import type { SimdRuntime } from '../../../src/compute/cpu/simd/runtime.js';
import { relaxedSimdSupported, type SimdVariant } from '../../../src/compute/cpu/simd/wasm-module.js';
import { FLOAT_DTYPES, decode, encode, f32Line, freshSeed, get, maxUlp, prng, put, runtime, ulpError } from './helpers.js';
import { ULP_BOUND as BOUND } from './ulp-bounds.js';
import { GRAD_REF, UNARY_REF } from './reference-math.js';


const SLOPE = 0.01;

const variants: SimdVariant[] = relaxedSimdSupported() ? ['relaxed-simd', 'simd128'] : ['simd128'];
const runtimes = new Map<SimdVariant, SimdRuntime>(variants.map((v) => [v, runtime(1, v)]));
afterAll(async () => {
  for (const rt of runtimes.values()) await rt.dispose();
});

describe.each(variants)('%s build', (variant) => {
  const rt = runtimes.get(variant)!;
  const seed = freshSeed();
  const xs = f32Line(seed, 2 ** -9, 48);
  const n = xs.length;
  const x = put(rt, new Uint8Array(xs.buffer));
  const ones = put(rt, new Uint8Array(new Float32Array(n).fill(1).buffer));
  const out = put(rt, new Uint8Array(n * 4));

  it.each(UNARY_OP_NAMES)(`%s is within its ulp bound over the f32 line (sweep seed ${seed})`, (op) => {
    unary(rt, op, 'f32', x, out, n, SLOPE);
    const worst = maxUlp(xs, decode(get(rt, out, n * 4), 'f32'), (v) => UNARY_REF[op](v, SLOPE));
    expect(worst.ulp, `${op}: ${worst.ulp.toFixed(2)} ulp at x = ${worst.at}`).toBeLessThanOrEqual(BOUND[op]);
  });

  it.each(ACTIVATION_GRAD_OPS)(`%s is within its ulp bound over the f32 line (sweep seed ${seed})`, (op) => {
    activationGrad(rt, op, 'f32', x, ones, out, n, SLOPE);
    const worst = maxUlp(xs, decode(get(rt, out, n * 4), 'f32'), (v) => GRAD_REF[op](v, SLOPE));
    expect(worst.ulp, `${op}: ${worst.ulp.toFixed(2)} ulp at x = ${worst.at}`).toBeLessThanOrEqual(BOUND[op]);
  });
});

describe('16-bit outputs', () => {
  const rt = runtimes.get(variants[0]!)!;
  // f32 results a few ulps off the true value, rounded once to 16 bits: at most one 16-bit ulp.
  it.each(FLOAT_DTYPES.filter((d) => d !== 'f32'))('%s results are within one ulp of the true value', (dtype) => {
    const next = prng(freshSeed());
    const values = Array.from({ length: 20001 }, () => (next() - 0.5) * 24);
    const n = values.length;
    const bytes = encode(values, dtype);
    const inputs = decode(bytes, dtype);
    const x = put(rt, bytes);
    const out = put(rt, new Uint8Array(n * 2));
    for (const op of ['exp', 'tanh', 'gelu', 'softplus', 'sigmoid', 'silu'] as const) {
      unary(rt, op, dtype, x, out, n);
      const got = decode(get(rt, out, n * 2), dtype);
      let worst = 0;
      for (let i = 0; i < n; i++) {
        const ref = UNARY_REF[op](inputs[i]!, SLOPE);
        if (Number.isFinite(ref) && Math.abs(ref) < 60000) worst = Math.max(worst, ulpError(got[i]!, ref, dtype));
      }
      expect(worst, `${op} ${dtype}`).toBeLessThanOrEqual(1);
    }
  });
});
