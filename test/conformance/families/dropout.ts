/**
 * dropout: element i is kept when its Philox uniform (the stream of `rand`) is ≥ f32(p), and a
 * kept value is x·f32(1/(1−p)) in one f32 multiply, rounded to the dtype: so the mask and the
 * values are exact, in every dtype. p = 0 and p = 1 are the front-end's (a copy and zeros) and
 * need no backend op.
 */
import { describe, it } from 'vitest';
import { product, roundTo } from '../../unit/compute/helpers.js';
import { philoxUnit } from '../../unit/compute/philox-reference.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { Case } from '../seeds.js';

const SHAPES: number[][] = [[1], [3, 37], [2, 5, 7]];

export function describeDropout(ctx: ConformanceContext): void {
  describe('dropout', () => {
    ctx.describeOps('0 < p < 1', ['dropout'], () => {
      for (const dtype of ctx.floatDtypes()) {
        it(`keeps the Philox mask's elements, scaled exactly, in ${dtype}`, () => {
          for (const shape of SHAPES) {
            for (const p of [0.1, 0.5, 0.9]) {
              const c = new Case(`dropout ${dtype} [${shape}] p ${p}`);
              const seed = c.subSeed();
              const values = c.normal(product(shape), 2).map((v, i) => [NaN, Infinity, -0][i] ?? v);
              const x = host(values, shape, dtype);
              const scale = Math.fround(1 / (1 - p));
              const kept = x.values.map((v, i) => (philoxUnit(seed, i) >= Math.fround(p) ? roundTo(dtype)(Math.fround(v * scale)) : 0));
              expectRun(c, ctx.run([x], (g, [t]) => g.dropout(t!, p, seed)), [{ ...x, values: kept }], 0);
            }
          }
        });
      }
    });

    for (const dtype of ctx.floatDtypes()) {
      it(`is a copy at p = 0 and zeros at p = 1 in ${dtype}`, () => {
        const c = new Case(`dropout ${dtype} p 0 and 1`);
        const x = host(c.normal(35, 2), [5, 7], dtype);
        const runs = ctx.run([x], (g, [t]) => [g.dropout(t!, 0, 3), g.dropout(t!, 1, 3)]);
        expectRun(c, runs, [x, { ...x, values: x.values.map(() => 0) }], 0);
      });
    }
  });
}
