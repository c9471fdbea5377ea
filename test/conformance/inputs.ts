/**
 * Inputs for ops that must move or convert values exactly (creation, copy, cast, transpose):
 * random draws with each dtype's hard values mixed in at the front, so even small tensors hold them.
 */
import type { DType } from '../../src/compute/core/dtype.js';
import type { Case } from './seeds.js';

const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

/**
 * Float inputs that stress storage and conversion: NaN, ±∞, -0, ties for rounding to f16 and bf16
 * (nearest even), the f16 overflow edge, values that underflow f16, and values beyond the i32
 * range (saturation) or just inside it.
 */
export const FLOAT_SPECIALS: readonly number[] = [
  NaN, Infinity, -Infinity, -0, 0.5, -0.5, 1.5, -2.5,
  1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -8, 1 + 3 * 2 ** -8,
  65504, 65519, 65520, -1e5, 6e-8, -1e-9, 1 / 3,
  2147483520, 2 ** 31, -(2 ** 31), -2147483904, 3e9, -3e9, 1e38,
];

/** i32 inputs at the edges: the range's ends, and integers f32 (and so f16/bf16) cannot hold exactly. */
export const INT_SPECIALS: readonly number[] = [0, 1, -1, I32_MAX, I32_MIN, 16777217, -16777219, 65504, 65520, 2049, 257];

/** n values for a tensor of `dtype`: the dtype's specials first, then random ones (float: spread over ±1000; i32: the whole range). */
export function hardValues(c: Case, dtype: DType, n: number): number[] {
  const specials = dtype === 'i32' ? INT_SPECIALS : FLOAT_SPECIALS;
  const random = dtype === 'i32' ? c.ints(n, I32_MIN, I32_MAX) : c.normal(n, 1000);
  return random.map((v, i) => (i < specials.length ? specials[i]! : v));
}
