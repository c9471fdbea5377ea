/**
 * The row ops over the last axis, natively or composed from the core ops: softmax and logSoftmax
 * (stable; a NaN or +∞ in a row, or a row of −∞ only, gives a row of NaN; −∞ entries give 0 and
 * −∞) and layerNorm (biased variance, with and without gamma and beta, any eps; a NaN row stays
 * NaN, a constant row gives beta), on odd columns and on rows far from 0.
 */
import { describe, it } from 'vitest';
import { product } from '../../unit/compute/helpers.js';
import { rowsRef } from '../../unit/compute/reference.js';
import { expectRun, TOLERANCE } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host, type Values } from '../host.js';
import { Case } from '../seeds.js';

const SHAPES: number[][] = [[5, 7], [3, 1, 13], [2, 33], [4, 1], [1], [], [2, 0]];

function softmaxRow(row: number[], log: boolean): number[] {
  if (row.some((v) => Number.isNaN(v) || v === Infinity) || row.every((v) => v === -Infinity)) return row.map(() => NaN);
  const max = Math.max(...row);
  const sum = row.reduce((s, v) => s + Math.exp(v - max), 0);
  return row.map((v) => (log ? v - max - Math.log(sum) : Math.exp(v - max) / sum));
}

function layerNormRow(row: number[], gamma: readonly number[] | undefined, beta: readonly number[] | undefined, eps: number): number[] {
  const mean = row.reduce((s, v) => s + v, 0) / row.length;
  const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / row.length;
  return row.map((v, j) => ((v - mean) / Math.sqrt(variance + eps)) * (gamma?.[j] ?? 1) + (beta?.[j] ?? 0));
}

function cols(shape: readonly number[]): number {
  return shape.length === 0 ? 1 : shape[shape.length - 1]!;
}

/** Rows of [4, 9]: a NaN, −∞ in half, −∞ only, a +∞. */
function specialRows(c: Case): number[] {
  const v = c.normal(4 * 9, 3);
  v[4] = NaN;
  for (let j = 0; j < 4; j++) v[9 + j] = -Infinity;
  for (let j = 0; j < 9; j++) v[18 + j] = -Infinity;
  v[31] = Infinity;
  return v;
}

/**
 * Rows of [2, 9] far from 0: ±offset + spread·z, alone in their tensor so their error is not
 * diluted by other rows'. softmax: ±1000 + 3·z (as the CUDA row tests), where a kernel must not
 * lose the rounding of the maximum. layerNorm: ±1030 + 20·z, where an f32 variance taken as
 * E[x²] − E[x]² is off by ~1e-4 and a two-pass one by ~u·1030/20 = 3e-6.
 */
function farRows(c: Case, offset: number, spread: number): number[] {
  return c.normal(2 * 9, spread).map((v, i) => v + (i < 9 ? offset : -offset));
}

export function describeRows(ctx: ConformanceContext): void {
  describe('softmax, logSoftmax and layerNorm', () => {
    for (const dtype of ctx.floatDtypes()) {
      it(`softmax and logSoftmax in ${dtype} over odd rows`, () => {
        const inputs = SHAPES.map((shape) => {
          const c = new Case(`softmax ${dtype} [${shape}]`);
          return { c, x: host(c.normal(product(shape), 3), shape, dtype) };
        });
        const special = new Case(`softmax ${dtype} special rows`);
        const far = new Case(`softmax ${dtype} rows far from 0`);
        inputs.push({ c: special, x: host(specialRows(special), [4, 9], dtype) }, { c: far, x: host(farRows(far, 1000, 3), [2, 9], dtype) });
        for (const { c, x } of inputs) {
          const want = (log: boolean): Values => ({ ...x, values: rowsRef(x.values, cols(x.shape), (row) => softmaxRow(row, log)) });
          const runs = ctx.run([x], (g, [t]) => [g.softmax(t!), g.logSoftmax(t!)]);
          expectRun(c, runs, [want(false), want(true)], TOLERANCE[dtype]);
        }
      });

      it(`layerNorm in ${dtype}, with and without gamma and beta`, () => {
        const inputs = SHAPES.filter((shape) => shape.length > 0).map((shape) => {
          const c = new Case(`layerNorm ${dtype} [${shape}]`);
          return { c, x: host(c.normal(product(shape), 2, 3), shape, dtype) };
        });
        // A NaN row, and a constant one (variance 0: gamma·0 + beta).
        const special = new Case(`layerNorm ${dtype} special rows`);
        inputs.push({ c: special, x: host([NaN, ...special.normal(8), ...new Array<number>(9).fill(0.75)], [2, 9], dtype) });
        const far = new Case(`layerNorm ${dtype} rows far from 0`);
        inputs.push({ c: far, x: host(farRows(far, 1030, 20), [2, 9], dtype) });
        for (const { c, x } of inputs) {
          const n = cols(x.shape);
          const gamma = host(c.normal(n, 0.5, 1), [n], dtype);
          const beta = host(c.normal(n), [n], dtype);
          for (const [withGamma, withBeta] of [[false, false], [true, false], [false, true], [true, true]] as const) {
            for (const eps of [undefined, 1e-3]) {
              const runs = ctx.run([x, gamma, beta], (g, [t, tg, tb]) => g.layerNorm(t!, withGamma ? tg : undefined, withBeta ? tb : null, eps));
              const g = withGamma ? gamma.values : undefined;
              const b = withBeta ? beta.values : undefined;
              const want = { ...x, values: rowsRef(x.values, n, (row) => layerNormRow(row, g, b, eps ?? 1e-5)) };
              expectRun(new Case(`${c.label} gamma ${withGamma} beta ${withBeta} eps ${eps}`), runs, [want], TOLERANCE[dtype]);
            }
          }
        }
      });
    }
  });
}
