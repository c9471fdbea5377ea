/**
 * How results are judged: against a float64 reference computed on the host from the same inputs,
 * and, for a backend other than the CPU, against the CPU backend's result for the same inputs.
 * NaN and ±∞ must sit exactly where the expected values have them (after rounding to the output
 * dtype, so an overflow to ∞ counts as one); the finite values are compared norm-wise.
 */
import { expect } from 'vitest';
import type { DType } from '../../src/compute/core/dtype.js';
import { relError, roundTo } from '../unit/compute/helpers.js';
import type { Values } from './host.js';
import type { Case } from './seeds.js';

/** Norm-wise bounds of one rounding to the dtype on top of f32 arithmetic (the project's elementwise tolerances); i32 is exact. */
export const TOLERANCE: Record<DType, number> = { f32: 1e-5, f16: 1e-3, bf16: 8e-3, i32: 0 };

/** The outputs of one op run on the backend under test, and on the CPU backend unless that is the one under test. */
export interface Runs {
  got: Values[];
  cpu: Values[] | undefined;
  /** Bytes left in use once the inputs and outputs were disposed (the op's own temporaries that it kept). */
  leaked: number;
}

/**
 * `got` has `want`'s shape and dtype, the same non-finite values at the same places, and finite
 * values within `tolerance` norm-wise; tolerance 0 demands every element equal (NaN equal to NaN,
 * +0 and -0 apart), for ops that are exact by contract.
 */
export function expectValues(c: Case, what: string, got: Values, want: Values, tolerance: number): void {
  expect(got.shape, c.msg(`${what}: shape`)).toEqual(want.shape);
  expect(got.dtype, c.msg(`${what}: dtype`)).toBe(want.dtype);
  expect(got.values.length, c.msg(`${what}: size`)).toBe(want.values.length);
  const round = roundTo(got.dtype);
  const finiteGot: number[] = [];
  const finiteWant: number[] = [];
  for (let i = 0; i < want.values.length; i++) {
    const g = got.values[i]!;
    const w = want.values[i]!;
    const exact = tolerance === 0 ? w : round(w);
    if (tolerance === 0 || !Number.isFinite(exact)) {
      // expect only on a mismatch: one call per element would dominate the suite's time.
      if (!Object.is(g, exact)) expect(g, c.msg(`${what}: element ${i}`)).toBe(exact);
    } else if (!Number.isFinite(g)) {
      expect(g, c.msg(`${what}: element ${i}`)).toBe(w);
    } else {
      finiteGot.push(g);
      finiteWant.push(w);
    }
  }
  if (tolerance > 0) expect(relError(finiteGot, finiteWant, got.dtype), c.msg(`${what}: norm-wise error`)).toBeLessThanOrEqual(tolerance);
}

/** No bytes left in use, and each output against its reference and, where there is one, the CPU backend's, with one tolerance per output (or one for all). */
export function expectRun(c: Case, runs: Runs, want: readonly Values[], tolerance: number | readonly number[]): void {
  expect(runs.leaked, c.msg('bytes left in use after disposing inputs and outputs')).toBe(0);
  expect(runs.got.length, c.msg('number of outputs')).toBe(want.length);
  want.forEach((w, i) => {
    const tol = typeof tolerance === 'number' ? tolerance : tolerance[i]!;
    const which = want.length === 1 ? 'output' : `output ${i}`;
    expectValues(c, `${which} vs float64 reference`, runs.got[i]!, w, tol);
    if (runs.cpu) expectValues(c, `${which} vs the CPU backend`, runs.got[i]!, runs.cpu[i]!, tol);
  });
}
