/**
 * The split attention kernel with each query block's keys split over several workgroups and
 * merged after (`attention-key-split.ts`): the rule that chooses the parts, and the result, which
 * must mean what one workgroup per block gives (causal, GQA, key lengths down to 0, the
 * log-sum-exp, 16-bit outputs, NaN rows, parts left empty by a short causal block).
 */
import { describe, expect, it } from 'vitest';
import { attentionInputs, attentionOptions, expectAttentionMatches, referenceFor } from '../attention/cases.js';
import { attentionTuning } from '../../../src/compute/webgpu/attention.js';
import { keyParts, keySplitTuning } from '../../../src/compute/webgpu/attention-key-split.js';
import { splitBytes, splitFits, type SplitBlock } from '../../../src/compute/webgpu/attention-split.js';
import { relError, skipReason, suite, usePairsBySubgroups, type Pair } from './setup.js';

const pairs = usePairsBySubgroups();

const TOLERANCE = { f32: 1e-5, f16: 1e-3, bf16: 8e-3 } as const;

describe('the key-split rule', () => {
  const c = keySplitTuning.residentGroups;

  it('leaves a grid of whole waves or many waves alone, and splits one whose last wave is mostly idle', () => {
    // 7.8 waves: every split keeps 8 (or saves less than the merge costs).
    expect(keyParts(Math.round(7.76 * c), 2048, false)).toBe(1);
    expect(keyParts(4 * c, 4096, false)).toBe(1);
    // 3.9 waves: 9 parts would take 3.89 waves' time plus 9 workgroups' overhead (3% slower on an H200).
    expect(keyParts(Math.round(3.88 * c), 4096, false)).toBe(1);
    // 4.4 waves: 2 parts run in 4.5 waves' time instead of 5.
    expect(keyParts(Math.round(4.36 * c), 1500, false)).toBe(2);
  });

  it('splits a grid smaller than the device into about as many workgroups as it runs at once, causal or not', () => {
    for (const causal of [false, true]) {
      const groups = Math.floor(c / 8);
      const parts = keyParts(groups, 8192, causal);
      expect(parts, `causal ${causal}`).toBeGreaterThanOrEqual(4);
      expect(groups * parts, `causal ${causal}`).toBeLessThanOrEqual(c);
    }
  });

  it('keeps a causal grid that fills the device whole (its longest blocks run first, the short ones fill the last wave)', () => {
    expect(keyParts(Math.round(4.36 * c), 1500, true)).toBe(1);
  });

  it('gives every part at least minPartKeys keys, at most maxParts parts', () => {
    expect(keyParts(1, keySplitTuning.minPartKeys * 2 - 1, false)).toBe(1);
    expect(keyParts(1, keySplitTuning.minPartKeys * 3, false)).toBe(3);
    expect(keyParts(1, 1 << 20, false)).toBe(keySplitTuning.maxParts);
  });

  it('never chooses more waves than the whole-key grid, for any device size', () => {
    for (const groups of [1, 7, 64, 100, 333, 576, 1000, 1024, 5000]) {
      for (const seqK of [256, 1500, 4096]) {
        const s = keyParts(groups, seqK, false);
        for (const resident of [16, 60, 132, 304]) expect(Math.ceil((groups * s) / resident) / s).toBeLessThanOrEqual(Math.ceil(groups / resident));
      }
    }
  });
});

describe.skipIf(skipReason)(suite('WebGPU attention, keys split over workgroups'), () => {
  const run = (block: SplitBlock, parts: number, fn: () => void) => {
    const limit = pairs.subgroups.backend.dev.limits.maxComputeWorkgroupStorageSize;
    expect(splitFits(block, 64, pairs.subgroups.backend.subgroupSize)).toBe(true);
    expect(splitBytes(block, 64)).toBeLessThanOrEqual(limit);
    attentionTuning.force = block;
    keySplitTuning.force = parts;
    try {
      fn();
    } finally {
      attentionTuning.force = undefined;
      keySplitTuning.force = undefined;
    }
  };

  it('matches float64 with 2 and 3 parts: causal GQA with key lengths (one of them 0), f32 and bf16, the log-sum-exp, 8- and 24-key blocks', { timeout: 300_000 }, () => {
    // 8-key blocks: 83 keys are 11 blocks (3 parts of 4, 4 and 3); the first 16-row causal block
    // sees 16 keys, so its third part is empty; batch 1 sees none.
    const c = { batch: 3, heads: 4, kvHeads: 2, seqQ: 75, seqK: 83, headDim: 64, causal: true, keyLengths: [83, 0, 41] };
    const block: SplitBlock = { lanes: 2, rows: 2, bq: 16, bkv: 8, kc: 4 };
    // Also blocks of 24 keys (not a power of two): parts of 24-key blocks, the last a remainder.
    for (const [parts, dtype, causal, bkv] of [
      [2, 'f32', true, 8],
      [3, 'bf16', true, 8],
      [3, 'f32', false, 8],
      [2, 'f32', true, 24],
    ] as const) {
      run({ ...block, bkv }, parts, () => {
        const cc = { ...c, causal };
        const { q, k, v } = attentionInputs(pairs.subgroups.webgpu, cc, dtype);
        const { out, lse } = pairs.subgroups.webgpu.attention(q, k, v, { ...attentionOptions(cc), returnLogSumExp: true });
        expectAttentionMatches(`${parts} parts ${dtype} causal ${causal} ${bkv} keys`, out, lse, referenceFor(cc, q, k, v), dtype, TOLERANCE[dtype]);
        for (const t of [q, k, v, out, lse]) t.dispose();
      });
    }
  });

  it("the rule's own split (a hardware adapter; a software one runs the scalar kernel): long keys over few query blocks", { timeout: 300_000 }, () => {
    // 2-4 workgroups of whole keys: the rule splits each block's 1100 keys into 8 parts.
    for (const causal of [false, true]) {
      const c = { batch: 2, heads: 2, kvHeads: 1, seqQ: 40, seqK: 1100, headDim: 128, causal, keyLengths: [1100, 517] };
      const { q, k, v } = attentionInputs(pairs.subgroups.webgpu, c, 'f32');
      const { out, lse } = pairs.subgroups.webgpu.attention(q, k, v, { ...attentionOptions(c), returnLogSumExp: true });
      expectAttentionMatches(`causal ${causal}`, out, lse, referenceFor(c, q, k, v), 'f32', TOLERANCE.f32);
      for (const t of [q, k, v, out, lse]) t.dispose();
    }
  });

  it('keeps NaN rows and columns where one workgroup per block puts them', { timeout: 300_000 }, () => {
    // A NaN in q poisons its row; one in v (key 0, in the first part) its column, through the merge.
    const shape = [1, 2, 40, 64];
    const values = (seed: number) => Array.from({ length: 2 * 40 * 64 }, (_, i) => Math.sin(i * 0.37 + seed));
    const qv = values(1);
    qv[5 * 64 + 3] = Number.NaN;
    const vv = values(3);
    vv[7] = Number.NaN;
    const attend = (g: Pair['webgpu']) => {
      using q = g.tensor(Float32Array.from(qv), shape);
      using k = g.tensor(Float32Array.from(values(2)), shape);
      using v = g.tensor(Float32Array.from(vv), shape);
      const r = g.attention(q, k, v, { causal: false, returnLogSumExp: true });
      const got = [Array.from(r.out.toArraySync() as Float32Array), Array.from(r.lse.toArraySync() as Float32Array)];
      r.out.dispose();
      r.lse.dispose();
      return got;
    };
    run({ lanes: 2, rows: 2, bq: 16, bkv: 8, kc: 4 }, 3, () => {
      const [out, lse] = attend(pairs.subgroups.webgpu);
      const [cOut, cLse] = attend(pairs.subgroups.cpu);
      for (const [got, want, what] of [[out!, cOut!, 'out'], [lse!, cLse!, 'lse']] as const) {
        expect(got.map((x) => (Number.isNaN(x) ? 'NaN' : 0)), `${what}: NaN places`).toEqual(want.map((x) => (Number.isNaN(x) ? 'NaN' : 0)));
        expect(relError(got.map((x) => (Number.isNaN(x) ? 0 : x)), want.map((x) => (Number.isNaN(x) ? 0 : x)), 'f32'), what).toBeLessThanOrEqual(1e-5);
      }
    });
  });
});
