/**
 * Philox on WebGPU against the CPU backend: uniform values bit for bit, normal values within one
 * unit in the last place (float-float Box–Muller against the CPU's f64), dropout masks equal and
 * kept values scaled by the same f32 factor — in every float dtype, on sizes that end mid-block.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePair, FLOAT_DTYPES, freshSeed, openPair, randomValues, relError, skipReason, suite, twin, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (skipReason === undefined) pair = await openPair();
});
afterAll(() => closePair(pair));

describe.skipIf(skipReason)(suite('WebGPU random'), () => {
  it.each(FLOAT_DTYPES)('uniform values equal the CPU backend bit for bit (%s)', async (dtype) => {
    for (const n of [1, 3, 4, 1031]) {
      for (const [low, high] of [[0, 1], [-3, 7.5], [1e-3, 2e-3]]) {
        const seed = freshSeed() * 2 ** 20 + 12345;
        using a = pair.webgpu.rand([n], { seed, low, high, dtype });
        using b = pair.cpu.rand([n], { seed, low, high, dtype });
        expect(await a.toRawArray(), `seed ${seed} [${low}, ${high}) n=${n}`).toEqual(await b.toRawArray());
      }
    }
  });

  it.each(FLOAT_DTYPES)('normal values equal the CPU backend within one ulp (%s)', async (dtype) => {
    const seed = freshSeed();
    using a = pair.webgpu.randn([4099], { seed, mean: 1.5, std: 2, dtype });
    using b = pair.cpu.randn([4099], { seed, mean: 1.5, std: 2, dtype });
    const ga = await valuesOf(a);
    const gb = await valuesOf(b);
    const ulp = dtype === 'f32' ? 2 ** -23 : dtype === 'f16' ? 2 ** -10 : 2 ** -7;
    let differing = 0;
    for (let i = 0; i < ga.length; i++) {
      expect(Math.abs(ga[i]! - gb[i]!), `element ${i} (seed ${seed})`).toBeLessThanOrEqual(ulp * Math.max(1, Math.abs(gb[i]!)));
      if (ga[i] !== gb[i]) differing++;
    }
    // Float-float keeps about 44 bits: a last-bit difference is rare.
    expect(differing, `seed ${seed}`).toBeLessThanOrEqual(ga.length / 100);
  });

  it.each(FLOAT_DTYPES)('dropout keeps the same elements as the CPU backend, scaled by 1/(1-p) (%s)', async (dtype) => {
    const n = 2053;
    const seed = freshSeed();
    const [x, xc] = twin(pair, randomValues(n, freshSeed()), [n], dtype);
    for (const p of [0.1, 0.5, 0.9]) {
      using y = pair.webgpu.dropout(x, p, seed);
      using yc = pair.cpu.dropout(xc, p, seed);
      const gy = await valuesOf(y);
      const cy = await valuesOf(yc);
      const hx = await valuesOf(x);
      const kept = gy.filter((v) => v !== 0).length / n;
      expect(Math.abs(kept - (1 - p))).toBeLessThan(0.066);  // six standard errors at p = 0.5
      const ref = hx.map((v, i) => (cy[i] === 0 ? 0 : v / (1 - p)));
      expect(relError(gy, ref, dtype)).toBeLessThanOrEqual(dtype === 'f32' ? 1e-6 : dtype === 'f16' ? 1e-3 : 8e-3);
      expect(await y.toRawArray()).toEqual(await yc.toRawArray());
    }
    x.dispose();
    xc.dispose();
  });
});
