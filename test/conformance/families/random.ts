/**
 * rand and randn. rand must follow the Philox stream bit for bit in every float dtype (the
 * uniform is exact in f32 and rounded once on store) and stay in [low, high) as documented;
 * randn uses transcendentals that differ in the last bits between implementations, so it must
 * be within a unit in the last place of the dtype.
 */
import { describe, expect, it } from 'vitest';
import { product, roundTo } from '../../unit/compute/helpers.js';
import { philoxNormal, philoxUniform } from '../../unit/compute/philox-reference.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext, FloatDType } from '../context.js';
import { Case } from '../seeds.js';

const SHAPES: number[][] = [[1], [7], [3, 37], [2, 3, 5]];

/** One unit in the last place of each dtype, relative: randn's allowance (norm-wise, so looser than per element). */
const ULP: Record<FloatDType, number> = { f32: 2 ** -22, f16: 2 ** -10, bf16: 2 ** -7 };

export function describeRandom(ctx: ConformanceContext): void {
  describe('rand and randn', () => {
    for (const dtype of ctx.floatDtypes()) {
      it(`rand in ${dtype} is the Philox uniform stream bit for bit (seeds above 2^32 too)`, () => {
        for (const shape of SHAPES) {
          const c = new Case(`rand ${dtype} [${shape}]`);
          for (const seed of [c.subSeed(), 0, 2 ** 40 + 7]) {
            for (const range of [undefined, { low: -2.5, high: 7.25 }]) {
              const runs = ctx.run([], (g) => g.rand(shape, { seed, dtype, ...range }));
              const values = Array.from({ length: product(shape) }, (_, i) => roundTo(dtype)(philoxUniform(seed, i, range?.low ?? 0, range?.high ?? 1)));
              expectRun(new Case(`${c.label} seed ${seed} [${range?.low ?? 0}, ${range?.high ?? 1})`), runs, [{ shape, dtype, values }], 0);
            }
          }
        }
      });

      it(`rand in ${dtype} stays in its documented range: [low, high) in f32, [low, high] once rounded to 16 bits`, () => {
        // Enough draws that a value rounding up to high (a 2^-12 chance per draw in f16) shows.
        const c = new Case(`rand ${dtype} range`);
        const closed = dtype !== 'f32';
        for (const [low, high] of [[0, 1], [-2.5, 7.25]] as const) {
          using t = ctx.gpu.rand([32768], { seed: c.subSeed(), dtype, low, high });
          const values = Array.from(t.toArraySync());
          const inside = (v: number) => v >= low && (closed ? v <= high : v < high);
          expect(values.filter((v) => !inside(v)).slice(0, 5), c.msg(`values outside [${low}, ${high}${closed ? ']' : ')'}`)).toEqual([]);
        }
      });

      it(`randn in ${dtype} is mean + std·(Box–Muller on the Philox stream) within an ulp`, () => {
        for (const shape of SHAPES) {
          const c = new Case(`randn ${dtype} [${shape}]`);
          const seed = c.subSeed();
          for (const [mean, std] of [[0, 1], [1.5, 2], [-3, 0]] as const) {
            const runs = ctx.run([], (g) => g.randn(shape, { seed, dtype, mean, std }));
            const values = Array.from({ length: product(shape) }, (_, i) => mean + std * philoxNormal(seed, i));
            expectRun(new Case(`${c.label} mean ${mean} std ${std}`), runs, [{ shape, dtype, values }], ULP[dtype]);
          }
        }
      });
    }
  });
}
