/**
 * The WebGPU GRU step kernel's blockings (`gruTuning`: batch rows per workgroup, lanes per unit,
 * invocations per workgroup), forced on shapes that leave row blocks, unit blocks and column
 * chunks partly filled, with and without subgroup shuffles: the default picks only some of them
 * on any one device (rows per workgroup follow the shape, lanes per unit the subgroup size).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { gruTuning } from '../../../src/compute/webgpu/gru.js';
import { checkGru, GRU_BOUND } from '../gru/checks.js';
import { freshSeed, randomValues, relError, skipReason, suite, twin, usePairsBySubgroups } from './setup.js';

const pairs = usePairsBySubgroups();

const defaults = { ...gruTuning };
afterEach(() => {
  Object.assign(gruTuning, defaults);
});

/** Each with subgroup shuffles; the first two also through workgroup memory (only the reduction differs). */
const BLOCKINGS = [
  { nb: 4, ks: 8, wg: 256 },
  { nb: 16, ks: 32, wg: 256 },
  { nb: 8, ks: 16, wg: 128 },
  { nb: 2, ks: 32, wg: 64 },
];

describe.skipIf(skipReason)(suite('WebGPU GRU step blockings'), () => {
  const seed = freshSeed();
  const cases = [
    { name: 'b13 in9 h300 T2', c: { batch: 13, input: 9, hidden: 300, steps: 2, seed } },
    { name: 'layer norm ensemble 2 b5 h70 T3', c: { batch: 5, input: 8, hidden: 70, steps: 3, ensemble: 2, layerNorm: true, seed } },
    { name: 'bf16 b9 h48 T3 last only', c: { batch: 9, input: 12, hidden: 48, steps: 3, dtype: 'bf16' as const, returnSequences: false, seed } },
  ];
  for (const [index, blocking] of BLOCKINGS.entries()) {
    const label = `rows ${blocking.nb}, lanes ${blocking.ks}, workgroup ${blocking.wg}`;
    for (const [shuffles, which] of index < 2 ? ([[true, 'shuffles'], [false, 'workgroup memory']] as const) : ([[true, 'shuffles']] as const)) {
      it.each(cases)(`gru $name, ${label}, ${which}`, ({ c }) => {
        Object.assign(gruTuning, blocking);
        const err = checkGru((shuffles ? pairs.subgroups : pairs.workgroup).webgpu, c);
        const bound = GRU_BOUND[c.dtype ?? 'f32'];
        expect(err.output, `output (seed ${seed})`).toBeLessThanOrEqual(bound);
        expect(err.hidden, `h_n (seed ${seed})`).toBeLessThanOrEqual(bound);
      });
    }
  }

  it('gru without biases, against the CPU backend', () => {
    const [B, T, I, H] = [6, 3, 5, 40];
    const [x, xc] = twin(pairs.subgroups, randomValues(B * T * I, seed), [B, T, I], 'f32');
    const [h0, h0c] = twin(pairs.subgroups, randomValues(B * H, seed + 1, 0.5), [B, H], 'f32');
    const [wIh, wIhc] = twin(pairs.subgroups, randomValues(3 * H * I, seed + 2, 0.2), [3 * H, I], 'f32');
    const [wHh, wHhc] = twin(pairs.subgroups, randomValues(3 * H * H, seed + 3, 0.2), [3 * H, H], 'f32');
    const ours = pairs.subgroups.webgpu.gru(x, h0, { wIh, wHh });
    const theirs = pairs.subgroups.cpu.gru(xc, h0c, { wIh: wIhc, wHh: wHhc });
    const read = (t: typeof x) => t.toArraySync() as Float32Array;
    expect(relError(read(ours.output), read(theirs.output)), `seed ${seed}`).toBeLessThanOrEqual(GRU_BOUND.f32);
    expect(relError(read(ours.hidden), read(theirs.hidden)), `seed ${seed}`).toBeLessThanOrEqual(GRU_BOUND.f32);
    for (const t of [x, xc, h0, h0c, wIh, wIhc, wHh, wHhc, ours.output, ours.hidden, theirs.output, theirs.hidden]) t.dispose();
  });
});
