/**
 * The composite ops on WebGPU, with the checks the CPU and CUDA tests use: attention (every case
 * of `attention/cases.ts`: causal, GQA/MQA, key lengths, head dims 1 to 256, Sq ≠ Sk), GRU layers,
 * stacks, ensembles, layer norm, cells and rollouts with an output projection, and svd, which
 * runs its host route here as on the CPU (WebGPU offers no dense factorizations).
 */
import { describe, expect, it } from 'vitest';
import {
  attentionCases,
  attentionInputs,
  attentionOptions,
  describeAttentionCase,
  expectAttentionMatches,
  referenceFor,
} from '../attention/cases.js';
import { attentionBlock, attentionBytes, attentionTuning, FLASH_BLOCKS, flashBlock, flashBytes, SPLIT_MIN_HEAD_DIM } from '../../../src/compute/webgpu/attention.js';
import { splitBlock, splitBytes, splitFits, splitInvocations, splitRule, type SplitBlock } from '../../../src/compute/webgpu/attention-split.js';
import { checkCell, checkGru, checkRollout, GRU_BOUND } from '../gru/checks.js';
import { knownMatrix } from '../svd/known-spectrum.js';
import { expectRecovered, runSvd } from '../svd/svd-checks.js';
import { freshSeed, relError, skipReason, suite, usePairsBySubgroups, type Pair } from './setup.js';

const pairs = usePairsBySubgroups();

/** f32 softmax arithmetic, then one rounding of the output for f16/bf16 (the CPU rounds once too). */
const ATTENTION_TOLERANCE = { f32: 1e-5, f16: 1e-3, bf16: 8e-3 } as const;

describe.skipIf(skipReason)(suite('WebGPU attention'), () => {
  // Every case in f32; the 16-bit types (which only change loads and the output's rounding) on three.
  const cases = attentionCases();
  for (const [index, c] of cases.entries()) {
    for (const dtype of index % 4 === 1 ? (['f32', 'f16', 'bf16'] as const) : (['f32'] as const)) {
      it(`${describeAttentionCase(c)} ${dtype}`, () => {
        const { q, k, v } = attentionInputs(pairs.subgroups.webgpu, c, dtype);
        const { out, lse } = pairs.subgroups.webgpu.attention(q, k, v, { ...attentionOptions(c), returnLogSumExp: true });
        const label = describeAttentionCase(c);
        expectAttentionMatches(label, out, lse, referenceFor(c, q, k, v), dtype, ATTENTION_TOLERANCE[dtype]);
        const [qc, kc, vc] = [q, k, v].map((t) => pairs.subgroups.cpu.tensor(t.toArraySync() as Float32Array, t.shape, dtype));
        const cpu = pairs.subgroups.cpu.attention(qc!, kc!, vc!, { ...attentionOptions(c), returnLogSumExp: true });
        expect(relError(out.toArraySync() as Float32Array, cpu.out.toArraySync() as Float32Array, dtype), `${label}: vs CPU`).toBeLessThanOrEqual(ATTENTION_TOLERANCE[dtype]);
        for (const t of [q, k, v, out, lse, qc!, kc!, vc!, cpu.out, cpu.lse]) t.dispose();
      });
    }
  }

  it('clamps key lengths read from a device tensor', () => {
    const c = { batch: 3, heads: 2, kvHeads: 1, seqQ: 20, seqK: 30, headDim: 16, causal: true };
    const { q, k, v } = attentionInputs(pairs.subgroups.webgpu, c, 'f32');
    using lengths = pairs.subgroups.webgpu.tensor(Int32Array.from([-4, 500, 11]), [3]);
    const { out, lse } = pairs.subgroups.webgpu.attention(q, k, v, { causal: true, keyLengths: lengths, returnLogSumExp: true });
    expectAttentionMatches('device lengths', out, lse, referenceFor({ ...c, keyLengths: [0, 30, 11] }, q, k, v), 'f32');
    for (const t of [q, k, v, out, lse]) t.dispose();
  });

  it('the register-blocked kernel: blocks of each shape, shuffles and workgroup memory, NaN rows', { timeout: 300_000 }, () => {
    // Causal GQA with key lengths and the log-sum-exp: every mask at once, query and key blocks off the tile sizes.
    const c = { batch: 2, heads: 4, kvHeads: 2, seqQ: 75, seqK: 83, headDim: 64, causal: true, keyLengths: [83, 41] };
    // Rows of 16, 8 and 4 invocations (shuffles where lavapipe's subgroups of 8 hold a row), 128 invocations; without subgroups.
    const runs: [Pair, number, (typeof FLASH_BLOCKS)[number]][] = [
      [pairs.subgroups, 64, FLASH_BLOCKS[2]!],
      [pairs.subgroups, 32, FLASH_BLOCKS[1]!],
      [pairs.subgroups, 32, FLASH_BLOCKS[6]!],
      [pairs.workgroup, 32, FLASH_BLOCKS[4]!],
    ];
    const limit = pairs.subgroups.backend.dev.limits.maxComputeWorkgroupStorageSize;
    try {
      for (const [p, headDim, block] of runs) {
        {
          {
            const shuffles = p.backend.subgroupSize !== undefined && p.backend.subgroupSize % block.tc === 0;
            expect(flashBytes(block, headDim, shuffles)).toBeLessThanOrEqual(limit);
            attentionTuning.force = block;
            const cc = { ...c, headDim };
            const { q, k, v } = attentionInputs(p.webgpu, cc, 'f32');
            const { out, lse } = p.webgpu.attention(q, k, v, { ...attentionOptions(cc), returnLogSumExp: true });
            expectAttentionMatches(`D${headDim} ${JSON.stringify(block)} shuffles ${shuffles}`, out, lse, referenceFor(cc, q, k, v), 'f32', ATTENTION_TOLERANCE.f32);
            for (const t of [q, k, v, out, lse]) t.dispose();
          }
        }
      }
      // A NaN in q poisons its row (output and log-sum-exp); one in v (key 0, which every row sees) its column. Both kernels.
      // (A NaN in v under a mask: the CPU's product 0·NaN spreads it to rows that cannot see it, the GPU kernels skip masked blocks.)
      for (const force of [FLASH_BLOCKS[1]!, { lanes: 2, rows: 2, bq: 16, bkv: 16, kc: 8 }, { lanes: 2, rows: 2, bq: 16, bkv: 16, kc: 8, lazy: false }, null]) {
      attentionTuning.force = force;
      const shape = [1, 2, 40, 32];
      const values = (seed: number) => Array.from({ length: 2 * 40 * 32 }, (_, i) => Math.sin(i * 0.37 + seed));
      const qv = values(1);
      qv[5 * 32 + 3] = Number.NaN;
      const vv = values(3);
      vv[7] = Number.NaN;
      const run = (g: Pair['webgpu']) => {
        using q = g.tensor(Float32Array.from(qv), shape);
        using k = g.tensor(Float32Array.from(values(2)), shape);
        using v = g.tensor(Float32Array.from(vv), shape);
        const r = g.attention(q, k, v, { causal: true, returnLogSumExp: true });
        const got = [Array.from(r.out.toArraySync() as Float32Array), Array.from(r.lse.toArraySync() as Float32Array)];
        r.out.dispose();
        r.lse.dispose();
        return got;
      };
      const [out, lse] = run(pairs.subgroups.webgpu);
      const [cOut, cLse] = run(pairs.subgroups.cpu);
      for (const [got, want, what] of [[out!, cOut!, 'out'], [lse!, cLse!, 'lse']] as const) {
        expect(got.map((x) => (Number.isNaN(x) ? 'NaN' : 0)), `${what}: NaN places (${force ? JSON.stringify(force) : 'scalar'})`).toEqual(want.map((x) => (Number.isNaN(x) ? 'NaN' : 0)));
        expect(relError(got.map((x) => (Number.isNaN(x) ? 0 : x)), want.map((x) => (Number.isNaN(x) ? 0 : x)), 'f32'), what).toBeLessThanOrEqual(1e-5);
      }
      }
    } finally {
      attentionTuning.force = undefined;
    }
  });

  it('the split kernel: lanes 1 to 8, rows 1 to 3, head dims 32 to 256, f32/f16/bf16, lazy and eager rescale (causal GQA, key lengths, log-sum-exp)', { timeout: 300_000 }, () => {
    const c = { batch: 2, heads: 4, kvHeads: 2, seqQ: 75, seqK: 83, causal: true, keyLengths: [83, 41] };
    // Small chunks: each specialisation takes seconds to build on lavapipe (subgroups of 8).
    const runs: [number, SplitBlock, 'f32' | 'f16' | 'bf16'][] = [
      [32, { lanes: 1, rows: 1, bq: 8, bkv: 8, kc: 4 }, 'f32'],
      [64, { lanes: 2, rows: 2, bq: 16, bkv: 16, kc: 8 }, 'bf16'],
      [96, { lanes: 4, rows: 3, bq: 24, bkv: 8, kc: 4 }, 'f16'],
      [256, { lanes: 8, rows: 2, bq: 16, bkv: 8, kc: 4 }, 'f32'],
      // 3 rows of 7 column groups per lane, as the rule gives head dims 160-256.
      [224, { lanes: 8, rows: 3, bq: 24, bkv: 8, kc: 8 }, 'f32'],
      // The eager rescale and the fetch without registers.
      [80, { lanes: 4, rows: 3, bq: 24, bkv: 16, kc: 8, lazy: false, prefetch: false }, 'bf16'],
    ];
    const limit = pairs.subgroups.backend.dev.limits.maxComputeWorkgroupStorageSize;
    try {
      for (const [headDim, block, dtype] of runs) {
        expect(splitFits(block, headDim, pairs.subgroups.backend.subgroupSize), `${JSON.stringify(block)} D${headDim}`).toBe(true);
        expect(splitBytes(block, headDim)).toBeLessThanOrEqual(limit);
        attentionTuning.force = block;
        const cc = { ...c, headDim };
        const { q, k, v } = attentionInputs(pairs.subgroups.webgpu, cc, dtype);
        const { out, lse } = pairs.subgroups.webgpu.attention(q, k, v, { ...attentionOptions(cc), returnLogSumExp: true });
        expectAttentionMatches(`D${headDim} ${JSON.stringify(block)} ${dtype}`, out, lse, referenceFor(cc, q, k, v), dtype, ATTENTION_TOLERANCE[dtype]);
        for (const t of [q, k, v, out, lse]) t.dispose();
      }
    } finally {
      attentionTuning.force = undefined;
    }
  });

  it('chooses a split block for every head dim it serves (multiples of 16 up to 256) where subgroups hold its lanes', () => {
    for (const sg of [8, 32]) {
      for (let d = SPLIT_MIN_HEAD_DIM; d <= 256; d += 16) {
        const b = splitBlock(d, 32768, sg);
        expect(b, `D${d} on subgroups of ${sg}`).toBeDefined();
        expect(splitFits(b!, d, sg)).toBe(true);
        expect(splitBytes(b!, d)).toBeLessThanOrEqual(32768);
        expect(splitInvocations(b!)).toBeLessThanOrEqual(256);
      }
    }
    // Head dims 112-128 and 224-256 hold 3 rows of a lane's 7-8 column groups, with the keys a
    // fetch of at most 12 elements per invocation brings; the key lengths change nothing there.
    for (const lengths of [false, true]) {
      expect(splitBlock(256, 49152, 32, splitRule(256), lengths)).toEqual({ lanes: 8, rows: 3, bq: 96, bkv: 8, kc: 8 });
      expect(splitBlock(128, 49152, 32, splitRule(128), lengths)).toEqual({ lanes: 4, rows: 3, bq: 96, bkv: 8, kc: 8 });
    }
    // D192 keeps 2 rows and the most keys that fill 48 KB; the key lengths' 4 bytes take it to 24.
    expect(splitBlock(192, 49152, 32, splitRule(192), false)).toEqual({ lanes: 8, rows: 2, bq: 64, bkv: 32, kc: 8 });
    expect(splitBlock(192, 49152, 32, splitRule(192), true)?.bkv).toBe(24);
    expect(splitBlock(96, 49152, 32, splitRule(96), false)).toEqual({ lanes: 4, rows: 2, bq: 128, bkv: 32, kc: 8 });
    expect(splitBlock(128, 49152, undefined), 'no subgroups').toBeUndefined();
    expect(splitBlock(200, 49152, 32), 'D200: 25 column groups per lane').toBeUndefined();
    expect(splitBlock(130, 49152, 32), 'D130: not a multiple of 4').toBeUndefined();
  });

  it('chooses the register-blocked kernel for head dims that are multiples of 16 where its blocks fit, the scalar one otherwise', () => {
    expect(flashBlock(64, 49152, 32)).toEqual({ bq: 64, bkv: 32, tr: 16, tc: 16 });
    expect(flashBlock(128, 49152, 32)).toBeDefined();
    expect(flashBlock(256, 49152, 32)).toBeUndefined();
    expect(flashBlock(17, 49152, 32)).toBeUndefined();
    for (const d of [16, 32, 48, 64, 80, 96, 112, 128]) {
      const b = flashBlock(d, 32768, 8);
      expect(b, `D${d} on 32 KB`).toBeDefined();
      expect(flashBytes(b!, d, 8 % b!.tc === 0)).toBeLessThanOrEqual(32768);
    }
  });

  it('blocks fit the workgroup memory of the device for every head dim up to 256', () => {
    const limit = pairs.subgroups.backend.dev.limits.maxComputeWorkgroupStorageSize;
    for (const d of [1, 64, 128, 200, 256]) {
      const block = attentionBlock(d, limit);
      expect(block, `D${d}`).toBeDefined();
      expect(attentionBytes(block!, d)).toBeLessThanOrEqual(limit);
    }
    // 16 KB (WebGPU's guaranteed minimum) still holds D 256 with the smallest block.
    expect(attentionBlock(256, 16384)).toBeUndefined();
    expect(attentionBlock(128, 16384)).toBeDefined();
  });
});

describe.skipIf(skipReason)(suite('WebGPU GRU'), () => {
  const seed = freshSeed();
  const cases = [
    { name: 'b5 in7 h33 T1', c: { batch: 5, input: 7, hidden: 33, steps: 1, seed } },
    { name: 'b5 in7 h33 T6', c: { batch: 5, input: 7, hidden: 33, steps: 6, seed } },
    { name: 'b13 in16 h40 T3 last only', c: { batch: 13, input: 16, hidden: 40, steps: 3, returnSequences: false, seed } },
    { name: 'ensemble 3 h64 b9 T3 per-member x, 2 layers', c: { batch: 9, input: 12, hidden: 64, steps: 3, ensemble: 3, layers: 2, perMemberInput: true, seed } },
    { name: 'f16 b9 h48 T4', c: { batch: 9, input: 12, hidden: 48, steps: 4, dtype: 'f16' as const, seed } },
    { name: 'bf16 b9 h48 T4', c: { batch: 9, input: 12, hidden: 48, steps: 4, dtype: 'bf16' as const, seed } },
    { name: 'layer norm ensemble 2 b4 h70 T4', c: { batch: 4, input: 8, hidden: 70, steps: 4, ensemble: 2, layerNorm: true, seed } },
    { name: 'f16 layer norm b3 h33 T3, 2 layers', c: { batch: 3, input: 5, hidden: 33, steps: 3, layers: 2, layerNorm: true, dtype: 'f16' as const, seed } },
    // Several column chunks per lane (H past lanes x columns loaded at once), rows off the row blocks.
    { name: 'b7 in9 h300 T3', c: { batch: 7, input: 9, hidden: 300, steps: 3, seed } },
    { name: 'ensemble 2 b32 in16 h256 T2', c: { batch: 32, input: 16, hidden: 256, steps: 2, ensemble: 2, seed } },
  ];
  it.each(cases)('gru $name', ({ c }) => {
    const err = checkGru(pairs.subgroups.webgpu, c);
    const bound = GRU_BOUND[c.dtype ?? 'f32'];
    expect(err.output, `output (seed ${seed})`).toBeLessThanOrEqual(bound);
    expect(err.hidden, `h_n (seed ${seed})`).toBeLessThanOrEqual(bound);
  });

  it.each(cases.filter((_, i) => i % 2 === 1 || i === 8))('gru $name, without subgroup shuffles', ({ c }) => {
    const err = checkGru(pairs.workgroup.webgpu, c);
    const bound = GRU_BOUND[c.dtype ?? 'f32'];
    expect(err.output, `output (seed ${seed})`).toBeLessThanOrEqual(bound);
    expect(err.hidden, `h_n (seed ${seed})`).toBeLessThanOrEqual(bound);
  });

  it('gruCell, shared x over an ensemble and bf16', () => {
    expect(checkCell(pairs.subgroups.webgpu, { batch: 6, input: 10, hidden: 37, ensemble: 4, seed }).error).toBeLessThanOrEqual(GRU_BOUND.f32);
    expect(checkCell(pairs.subgroups.webgpu, { batch: 3, input: 5, hidden: 33, seed, dtype: 'bf16' }).error).toBeLessThanOrEqual(GRU_BOUND.bf16);
  });

  it('gruRollout with an output projection: an ensemble, and a 2-layer stack', () => {
    const roll = checkRollout(pairs.subgroups.webgpu, { batch: 8, state: 6, hidden: 24, steps: 4, ensemble: 3, seed });
    expect(roll.states).toBeLessThanOrEqual(GRU_BOUND.f32);
    expect(roll.hidden).toBeLessThanOrEqual(GRU_BOUND.f32);
    const stacked = checkRollout(pairs.subgroups.webgpu, { batch: 7, state: 9, hidden: 20, steps: 3, layers: 2, seed });
    expect(stacked.states).toBeLessThanOrEqual(GRU_BOUND.f32);
  });
});

describe.skipIf(skipReason)(suite('WebGPU svd (host route, composed from the backend ops)'), () => {
  it('recovers the singular values and orthonormal factors of a known low-rank matrix', () => {
    const seed = freshSeed();
    const values = Array.from({ length: 8 }, (_, i) => 20 * 0.7 ** i);
    const km = knownMatrix(90, 60, values, seed);
    const r = runSvd(pairs.subgroups.webgpu, km, { rank: 6, seed });
    expectRecovered(r, km, 90, 60, 6, `seed ${seed}`);
  });

  it('gives the exact SVD of a small matrix (full: true)', () => {
    const seed = freshSeed();
    const km = knownMatrix(12, 9, [5, 4, 3, 2, 1, 0.5, 0.25, 0.125, 0.0625], seed);
    const r = runSvd(pairs.subgroups.webgpu, km, { full: true, seed });
    expectRecovered(r, km, 12, 9, 9, `seed ${seed}`);
  });
});
