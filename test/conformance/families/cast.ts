/**
 * cast between every pair of claimed dtypes, exact: to a float dtype, round to nearest even (i32
 * through f32 first); to i32, truncate toward zero, saturate at the i32 range, NaN → 0; to the
 * same dtype, a copy. Inputs hold each dtype's hard values: NaN, ±∞, ties, the f16 overflow edge,
 * values beyond the i32 range and integers f32 cannot hold.
 */
import { describe, it } from 'vitest';
import type { DType } from '../../../src/compute/core/dtype.js';
import { product, roundTo } from '../../unit/compute/helpers.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { hardValues } from '../inputs.js';
import { Case } from '../seeds.js';

const I32_MAX = 2 ** 31 - 1;
const I32_MIN = -(2 ** 31);

/** What a value of the source becomes in `to`. */
function converted(v: number, to: DType): number {
  if (to !== 'i32') return roundTo(to)(Math.fround(v));
  if (Number.isNaN(v)) return 0;
  if (v >= I32_MAX) return I32_MAX;
  if (v <= I32_MIN) return I32_MIN;
  return Math.trunc(v) | 0;
}

export function describeCast(ctx: ConformanceContext): void {
  describe('cast', () => {
    for (const from of ctx.dtypes) {
      for (const to of ctx.dtypes) {
        it(`${from} → ${to}`, () => {
          for (const shape of [[4, 9], [1], [0]]) {
            const c = new Case(`cast ${from} → ${to} [${shape}]`);
            const x = host(hardValues(c, from, product(shape)), shape, from);
            const want = { shape, dtype: to, values: x.values.map((v) => converted(v, to)) };
            expectRun(c, ctx.run([x], (g, [t]) => g.cast(t!, to)), [want], 0);
          }
        });
      }
    }
  });
}
