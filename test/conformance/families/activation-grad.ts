/**
 * activationGrad for every activation of the table (each derivative op), in every float dtype:
 * dy·f'(x) against the float64 derivative, and NaN in x or dy giving NaN.
 */
import { it } from 'vitest';
import { ACTIVATION_GRAD, type ActivationName } from '../../../src/compute/core/elementwise-ops.js';
import type { ActivationGradOptions } from '../../../src/compute/ops/elementwise.js';
import { product } from '../../unit/compute/helpers.js';
import { derivativeRef } from '../../unit/compute/reference.js';
import { expectRun, TOLERANCE } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { Case } from '../seeds.js';

/**
 * No single-element shape: a derivative has roots (geluTanh's near x = −0.75) where it is a
 * difference of terms, so one element's relative error means nothing there; norm-wise over a
 * dozen or more it does.
 */
const SHAPES: number[][] = [[13], [2, 1, 9], [3, 5, 7]];
const ACTIVATIONS = Object.keys(ACTIVATION_GRAD) as ActivationName[];

/** Each activation with the options that select it: its own name, and gelu's tanh form through `approximate`. */
const FORMS: { name: ActivationName; options: ActivationGradOptions; reference: ActivationName; slope: number }[] = [
  ...ACTIVATIONS.map((name) => ({ name, options: { slope: 0.07 }, reference: name, slope: 0.07 })),
  { name: 'gelu', options: { approximate: 'tanh' }, reference: 'geluTanh', slope: 0.01 },
  { name: 'leakyRelu', options: {}, reference: 'leakyRelu', slope: 0.01 },
];

export function describeActivationGrad(ctx: ConformanceContext): void {
  ctx.describeOps('activationGrad', ['activationGrad'], () => {
    for (const form of FORMS) {
      for (const dtype of ctx.floatDtypes()) {
        it(`${form.name} ${JSON.stringify(form.options)} in ${dtype}`, () => {
          const label = `activationGrad ${form.name} ${JSON.stringify(form.options)} ${dtype}`;
          const cases = SHAPES.map((shape) => {
            const c = new Case(`${label} [${shape}]`);
            const n = product(shape);
            // x away from relu's kink.
            return { c, shape, xs: c.normal(n, 2).map((v) => (Math.abs(v) < 1e-3 ? v + 0.01 : v)), dys: c.normal(n) };
          });
          cases.push({ c: new Case(`${label} NaN`), shape: [4], xs: [NaN, 1, -1, NaN], dys: [1, NaN, 0.5, NaN] });
          for (const { c, shape, xs, dys } of cases) {
            const x = host(xs, shape, dtype);
            const dy = host(dys, shape, dtype);
            const values = x.values.map((v, i) => {
              const d = dy.values[i]!;
              return Number.isNaN(v) || Number.isNaN(d) ? NaN : d * derivativeRef(form.reference, v, form.slope);
            });
            const runs = ctx.run([x, dy], (g, [tx, tdy]) => g.activationGrad(form.name, tx!, tdy!, form.options));
            expectRun(c, runs, [{ ...x, values }], TOLERANCE[dtype]);
          }
        });
      }
    }
  });
}
