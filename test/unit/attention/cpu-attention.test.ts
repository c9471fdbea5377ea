/**
 * Attention on the CPU backend against a direct float64 reference (every case of
 * `cases.ts` in every dtype), its edge cases, and the front-end's typed errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { cpuCompute } from '../compute/helpers.js';
import {
  attentionCases,
  attentionInputs,
  attentionOptions,
  describeAttentionCase,
  expectAttentionMatches,
  referenceFor,
} from './cases.js';

let gpu: GpuCompute;
let other: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
  other = await cpuCompute();
});
afterAll(() => {
  gpu.dispose();
  other.dispose();
});

describe('attention on the CPU backend', () => {
  for (const c of attentionCases()) {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      it(`${describeAttentionCase(c)} ${dtype}`, () => {
        const { q, k, v } = attentionInputs(gpu, c, dtype);
        const { out, lse } = gpu.attention(q, k, v, { ...attentionOptions(c), returnLogSumExp: true });
        expect(out.shape).toEqual(q.shape);
        expect(out.dtype).toBe(dtype);
        expect(lse.shape).toEqual(q.shape.slice(0, 3));
        expect(lse.dtype).toBe('f32');
        expectAttentionMatches(describeAttentionCase(c), out, lse, referenceFor(c, q, k, v), dtype);
        for (const t of [q, k, v, out, lse]) t.dispose();
      });
    }
  }

  it('takes key lengths as an i32 tensor, clamped to [0, seqK], and gives zeros for rows with no key', () => {
    const c = { batch: 3, heads: 2, kvHeads: 2, seqQ: 9, seqK: 12, headDim: 32, causal: false };
    const { q, k, v } = attentionInputs(gpu, c, 'f32');
    const lengths = gpu.tensor(Int32Array.from([-3, 1000, 5]), [3]);
    const { out, lse } = gpu.attention(q, k, v, { keyLengths: lengths, returnLogSumExp: true });
    expectAttentionMatches('tensor lengths', out, lse, referenceFor({ ...c, keyLengths: [0, 12, 5] }, q, k, v), 'f32');
    const values = out.toArraySync() as Float32Array;
    expect(values.subarray(0, 2 * 9 * 32).every((x) => x === 0)).toBe(true);
    for (const t of [q, k, v, out, lse, lengths]) t.dispose();
  });

  it('returns only the output without returnLogSumExp, with the default scale 1/√D', () => {
    const c = { batch: 1, heads: 1, kvHeads: 1, seqQ: 5, seqK: 7, headDim: 64, causal: false };
    const { q, k, v } = attentionInputs(gpu, c, 'f32');
    const out = gpu.attention(q, k, v);
    const explicit = gpu.attention(q, k, v, { scale: 1 / 8 });
    expect(Array.from(out.toArraySync())).toEqual(Array.from(explicit.toArraySync()));
    for (const t of [q, k, v, out, explicit]) t.dispose();
  });

  it('handles empty queries and empty key sequences', () => {
    const q0 = gpu.zeros([2, 2, 0, 32]);
    const k = gpu.rand([2, 2, 5, 32]);
    const empty = gpu.attention(q0, k, k);
    expect(empty.shape).toEqual([2, 2, 0, 32]);
    const q = gpu.rand([1, 2, 3, 32]);
    const k0 = gpu.zeros([1, 1, 0, 32]);
    const { out, lse } = gpu.attention(q, k0, k0, { returnLogSumExp: true, causal: true });
    expect(Array.from(out.toArraySync()).every((x) => x === 0)).toBe(true);
    expect(Array.from(lse.toArraySync()).every((x) => x === -Infinity)).toBe(true);
    for (const t of [q0, k, empty, q, k0, out, lse]) t.dispose();
  });

  it('rejects bad input with typed errors before computing', () => {
    const q = gpu.rand([2, 4, 8, 32]);
    const k = gpu.rand([2, 2, 6, 32]);
    const bad = (f: () => unknown, pattern: RegExp) => expect(f).toThrow(pattern);
    const expectInvalid = (f: () => unknown) => expect(f).toThrow(InvalidArgumentError);
    bad(() => gpu.attention(gpu.rand([4, 8, 32]), k, k), /q must be \[batch, heads, seq, headDim\]/);
    bad(() => gpu.attention(q, gpu.rand([2, 3, 6, 32]), gpu.rand([2, 3, 6, 32])), /multiple of k\/v heads/);
    bad(() => gpu.attention(q, gpu.rand([2, 2, 6, 16]), gpu.rand([2, 2, 6, 16])), /head dims differ/);
    bad(() => gpu.attention(q, k, gpu.rand([2, 2, 7, 32])), /must have the shape of k/);
    bad(() => gpu.attention(q, gpu.rand([1, 2, 6, 32]), gpu.rand([1, 2, 6, 32])), /batch differs/);
    bad(() => gpu.attention(gpu.rand([1, 1, 2, 257]), gpu.rand([1, 1, 2, 257]), gpu.rand([1, 1, 2, 257])), /head dim must be 1\.\.256/);
    bad(() => gpu.attention(q, gpu.cast(k, 'f16'), k), /dtype mismatch: k is f16/);
    bad(() => gpu.attention(gpu.cast(q, 'i32'), k, k), /q must be f32, f16 or bf16/);
    bad(() => gpu.attention(q, k, k, { scale: Number.NaN }), /scale must be a finite number/);
    bad(() => gpu.attention(q, k, k, { causal: 1 as unknown as boolean }), /causal must be a boolean/);
    bad(() => gpu.attention(q, k, k, { keyLengths: [6] }), /keyLengths has 1 entries/);
    bad(() => gpu.attention(q, k, k, { keyLengths: [6, 7] }), /keyLengths\[1\] must be an integer in \[0, 6\]/);
    bad(() => gpu.attention(q, k, k, { keyLengths: [1.5, 2] }), /keyLengths\[0\]/);
    bad(() => gpu.attention(q, k, k, { keyLengths: gpu.rand([2]) as never }), /keyLengths must be an i32 tensor \[2\]/);
    bad(() => gpu.attention(q, k, k, null as never), /options must be an object/);
    expectInvalid(() => gpu.attention(q, k, k, { keyLengths: other.tensor(Int32Array.from([1, 2]), [2]) }));
    expectInvalid(() => gpu.attention(q, other.rand([2, 2, 6, 32]), k));
    expectInvalid(() => gpu.attention(q, k, 'v' as never));
    const gone = gpu.rand([2, 2, 6, 32]);
    gone.dispose();
    expect(() => gpu.attention(q, k, gone)).toThrow(DisposedError);
    q.dispose();
    k.dispose();
  });
});
