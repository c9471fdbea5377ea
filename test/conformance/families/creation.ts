/**
 * Creation and copies: tensors from host data (rounded to their dtype, or f16/bf16 bit patterns
 * kept as given), zeros/ones/full/empty, both read-backs, and copy, which must be exact and own
 * its storage.
 */
import { describe, expect, it } from 'vitest';
import { product } from '../../unit/compute/helpers.js';
import { expectRun, expectValues } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { hardValues } from '../inputs.js';
import { Case } from '../seeds.js';

const SHAPES: number[][] = [[], [1], [7], [4, 9], [2, 3, 5], [0], [4, 0, 3]];

export function describeCreation(ctx: ConformanceContext): void {
  describe('creation and copy', () => {
    for (const dtype of ctx.dtypes) {
      it(`tensor holds its data rounded to ${dtype}, and copy reproduces it exactly in its own storage`, () => {
        for (const shape of SHAPES) {
          const c = new Case(`tensor/copy ${dtype} [${shape}]`);
          const x = host(hardValues(c, dtype, product(shape)), shape, dtype);
          expectRun(c, ctx.run([x], (_g, [t]) => t!), [x], 0);
          // The source goes back to the pool before the copy is read, and the next tensor may take its memory.
          const copied = ctx.run([x], (g, [t]) => {
            const y = g.copy(t!);
            t!.dispose();
            return [y, g.full(shape, 3, dtype)];
          });
          expectRun(c, copied, [x, host(new Array(product(shape)).fill(3), shape, dtype)], 0);
          const view = ctx.run([x], (g, [t]) => {
            using flat = t!.reshape([-1]);
            return g.copy(flat);
          });
          expectRun(c, view, [{ ...x, shape: [product(shape)] }], 0);
        }
      });

      it(`zeros, ones, full and empty in ${dtype}`, () => {
        const values = dtype === 'i32' ? [0, -7, 2 ** 31 - 1, -(2 ** 31)] : [0, -0, 1 / 3, -2.5e-3, 1e5, -1e-9, NaN, Infinity, -Infinity, 65519];
        for (const shape of [[], [5], [2, 3, 1], [0, 2]]) {
          const c = new Case(`full ${dtype} [${shape}]`);
          const n = product(shape);
          const runs = ctx.run([], (g) => [g.zeros(shape, dtype), g.ones(shape, dtype), ...values.map((v) => g.full(shape, v, dtype))]);
          const want = [0, 1, ...values].map((v) => host(new Array(n).fill(v), shape, dtype));
          expectRun(c, runs, want, 0);
          using e = ctx.gpu.empty(shape, dtype);
          expect([e.shape, e.dtype, e.size], c.msg('empty')).toEqual([shape, dtype, n]);
        }
      });

      it(`toArray and toRawArray (async) read what the synchronous reads do in ${dtype}`, async () => {
        const c = new Case(`async read ${dtype}`);
        const x = host(hardValues(c, dtype, 61), [61], dtype);
        using t = ctx.gpu.tensor(dtype === 'i32' ? Int32Array.from(x.values) : Float32Array.from(x.values), x.shape, dtype);
        expectValues(c, 'toArray', { ...x, values: Array.from(await t.toArray()) }, x, 0);
        expect(Array.from(await t.toRawArray()), c.msg('toRawArray')).toEqual(Array.from(t.toRawArraySync()));
      });
    }

    for (const dtype of ctx.floatDtypes(['f16', 'bf16'])) {
      it(`a Uint16Array in ${dtype} is stored as bit patterns, NaN payloads and all`, () => {
        const c = new Case(`bits ${dtype}`);
        const bits = Uint16Array.from(c.ints(257, 0, 0xffff));
        bits.set([0x7c01, 0xfe00, 0x7fff, 0x8000, 0x0001, 0x7f81, 0xffff]);
        using t = ctx.gpu.tensor(bits, [257], dtype);
        expect(Array.from(t.toRawArraySync()), c.msg('bits read back')).toEqual(Array.from(bits));
        using y = ctx.gpu.copy(t);
        expect(Array.from(y.toRawArraySync()), c.msg('bits of the copy')).toEqual(Array.from(bits));
      });
    }
  });
}
