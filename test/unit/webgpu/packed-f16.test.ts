/**
 * f16 on a device without shader-f16 (NVIDIA's Vulkan driver): f16 tensors packed two to a
 * 32-bit word like bf16, stored with atomics. lavapipe has shader-f16, so the other suites take
 * the native path; here the backend is told not to, and every kind of kernel runs once in f16
 * against the CPU backend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attentionCases, attentionInputs, attentionOptions, expectAttentionMatches, referenceFor } from '../attention/cases.js';
import { checkGru } from '../gru/checks.js';
import { closePair, expectMatches, freshSeed, openPair, randomValues, relError, skipReason, suite, twin, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (skipReason === undefined) pair = await openPair({ shaderF16: false });
});
afterAll(() => closePair(pair));

describe.skipIf(skipReason)(suite('WebGPU f16 packed in 32-bit words (no shader-f16)'), () => {
  it('the backend packs f16', () => {
    expect(pair.backend.dispatcher.nativeF16).toBe(false);
  });

  it('elementwise, broadcasting, casts and fills give the CPU backend bits (gelu within one f16 step)', async () => {
    const n = 1031;
    const [x, xc] = twin(pair, randomValues(n, freshSeed(), 3), [n], 'f16');
    const [r, rc] = twin(pair, randomValues(7, freshSeed()), [7], 'f16');
    using x2 = x.reshape([1, n]);
    using x2c = xc.reshape([1, n]);
    using twos = pair.webgpu.full([3, 7], 2, 'f16');
    using twosc = pair.cpu.full([3, 7], 2, 'f16');
    using wide = pair.webgpu.cast(x, 'f32');
    using widec = pair.cpu.cast(xc, 'f32');
    {
      // gelu is rounded to f16 from each backend's own f32 erf, neither correctly rounded: a value
      // near a rounding boundary may land one f16 step apart, never more.
      using ours = pair.webgpu.gelu(x);
      using theirs = pair.cpu.gelu(xc);
      const [a, b] = [(await ours.toRawArray()) as Uint16Array, (await theirs.toRawArray()) as Uint16Array];
      // Bits of one sign are ordered like the values; +0 and −0 count as equal.
      const steps = (p: number, q: number) => (((p | q) & 0x7fff) === 0 ? 0 : Math.abs(p - q));
      for (let i = 0; i < n; i++) expect(steps(a[i]!, b[i]!), `gelu bits at ${i}: ${a[i]} vs ${b[i]}`).toBeLessThanOrEqual(1);
    }
    for (const [ours, theirs] of [
      [pair.webgpu.add(x, x), pair.cpu.add(xc, xc)],
      [pair.webgpu.mul(twos, r), pair.cpu.mul(twosc, rc)],
      [pair.webgpu.cast(wide, 'f16'), pair.cpu.cast(widec, 'f16')],
      [pair.webgpu.cast(x, 'i32'), pair.cpu.cast(xc, 'i32')],
      [pair.webgpu.cast(x, 'bf16'), pair.cpu.cast(xc, 'bf16')],
      [pair.webgpu.transpose(x2), pair.cpu.transpose(x2c)],
    ] as const) {
      expect(await ours.toRawArray()).toEqual(await theirs.toRawArray());
      ours.dispose();
      theirs.dispose();
    }
    for (const t of [x, xc, r, rc]) t.dispose();
  });

  it('rand is bit-identical; reductions, softmax and layerNorm match', async () => {
    const seed = freshSeed();
    using u = pair.webgpu.rand([1001], { seed, dtype: 'f16' });
    using uc = pair.cpu.rand([1001], { seed, dtype: 'f16' });
    expect(await u.toRawArray()).toEqual(await uc.toRawArray());
    const [x, xc] = twin(pair, randomValues(37 * 129, freshSeed()), [37, 129], 'f16');
    for (const [name, ours, theirs] of [
      ['sum', pair.webgpu.sum(x, 1), pair.cpu.sum(xc, 1)],
      ['argmax', pair.webgpu.argmax(x, 0), pair.cpu.argmax(xc, 0)],
      ['softmax', pair.webgpu.softmax(x), pair.cpu.softmax(xc)],
      ['layerNorm', pair.webgpu.layerNorm(x), pair.cpu.layerNorm(xc)],
    ] as const) {
      const want = await valuesOf(theirs);
      expectMatches(name, await valuesOf(ours), want, want, ours.dtype, 2e-3);
      ours.dispose();
      theirs.dispose();
    }
    x.dispose();
    xc.dispose();
  });

  it('matmul with the fused epilogue, attention and a GRU', () => {
    const [a, ac] = twin(pair, randomValues(19 * 23, freshSeed()), [19, 23], 'f16');
    const [b, bc] = twin(pair, randomValues(23 * 13, freshSeed()), [23, 13], 'f16');
    const [bias, biasc] = twin(pair, randomValues(13, freshSeed()), [13], 'f16');
    using y = pair.webgpu.matmul(a, b, { bias, activation: 'gelu' });
    using yc = pair.cpu.matmul(ac, bc, { bias: biasc, activation: 'gelu' });
    expect(relError(y.toArraySync() as Float32Array, yc.toArraySync() as Float32Array, 'f16')).toBeLessThanOrEqual(1e-3);
    for (const t of [a, ac, b, bc, bias, biasc]) t.dispose();

    const c = attentionCases()[3]!;
    const { q, k, v } = attentionInputs(pair.webgpu, c, 'f16');
    const { out, lse } = pair.webgpu.attention(q, k, v, { ...attentionOptions(c), returnLogSumExp: true });
    expectAttentionMatches('attention f16 packed', out, lse, referenceFor(c, q, k, v), 'f16');
    for (const t of [q, k, v, out, lse]) t.dispose();

    const err = checkGru(pair.webgpu, { batch: 5, input: 6, hidden: 33, steps: 3, dtype: 'f16', seed: freshSeed() });
    expect(err.output).toBeLessThanOrEqual(2e-3);
    expect(err.hidden).toBeLessThanOrEqual(2e-3);
  });
});
