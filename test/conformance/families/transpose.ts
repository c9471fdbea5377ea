/** transpose of the last two dims, batched over the leading ones, in every dtype: an exact move of every value. */
import { describe, it } from 'vitest';
import { product } from '../../unit/compute/helpers.js';
import { expectRun } from '../compare.js';
import type { ConformanceContext } from '../context.js';
import { host } from '../host.js';
import { hardValues } from '../inputs.js';
import { Case } from '../seeds.js';

const SHAPES: number[][] = [[1, 1], [1, 7], [7, 1], [5, 3], [2, 9, 5], [2, 1, 3, 4], [3, 2, 1, 6], [0, 3], [3, 0], [2, 0, 4]];

export function describeTranspose(ctx: ConformanceContext): void {
  describe('transpose', () => {
    for (const dtype of ctx.dtypes) {
      it(`swaps the last two dims in ${dtype}`, () => {
        for (const shape of SHAPES) {
          const c = new Case(`transpose ${dtype} [${shape}]`);
          const x = host(hardValues(c, dtype, product(shape)), shape, dtype);
          const [rows, cols] = shape.slice(-2) as [number, number];
          const batch = product(shape.slice(0, -2));
          const values: number[] = [];
          for (let b = 0; b < batch; b++) {
            for (let j = 0; j < cols; j++) for (let i = 0; i < rows; i++) values.push(x.values[(b * rows + i) * cols + j]!);
          }
          const want = { shape: [...shape.slice(0, -2), cols, rows], dtype, values };
          expectRun(c, ctx.run([x], (g, [t]) => g.transpose(t!)), [want], 0);
        }
      });
    }
  });
}
