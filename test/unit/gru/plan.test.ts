/** The GRU kernels' launch plans (persistent, fused, sequence, rollout), whether they apply, and what 'auto' picks. */
import { describe, expect, it } from 'vitest';
import {
  autoPath,
  FUSED_COLUMNS,
  FUSED_MAX_HIDDEN,
  fusedFit,
  persistentFit,
  persistentSharedBytes,
  planFused,
  planPersistent,
  planRollout,
  planSequence,
  ROLLOUT_CLUSTER_SIZES,
  ROLLOUT_MAX_BATCH,
  rolloutClusterLayout,
  rolloutClusterPlans,
  SEQUENCE_MAX_HIDDEN,
  SEQUENCE_MAX_ROWS,
  sequenceFit,
  sequenceSharedBytes,
  type SequencePlan,
} from '../../../src/compute/cuda/gru/gru-plan.js';
import { gruFusedSpec, gruKernelNames, gruModuleSpecs, gruRolloutClusterSpec, gruRolloutSpec, gruSequenceSpec } from '../../../src/compute/cuda/gru/gru-kernels.js';
import type { DType } from '../../../src/compute/core/dtype.js';

const H200_SHARED = 232448 - 1024;
/** An H200-like device: 132 SMs, as many 256-thread blocks per SM as shared memory allows (≤ 8). */
const resident = (bytes: number) => 132 * Math.min(8, Math.floor(233472 / (bytes + 1024)));

describe('planPersistent', () => {
  it('spreads W_hh of hidden 1024 over 128 blocks of 8 units at batch 256', () => {
    const plan = planPersistent(1, 256, 1024, H200_SHARED, resident)!;
    expect(plan).toMatchObject({ tb: 8, units: 8, blocks: 128 });
    // 24 rows of 1024 f32 weights plus the staged h tiles.
    expect(plan.sharedBytes).toBe(persistentSharedBytes(1024, 8, 8));
    expect(plan.sharedBytes).toBeGreaterThan(24 * 1024 * 4);
  });

  it('uses 2 units per block for the small case and grows units until every block is resident', () => {
    expect(planPersistent(1, 32, 256, H200_SHARED, resident)).toMatchObject({ tb: 2, units: 2, blocks: 128 });
    const ensemble = planPersistent(5, 32, 512, H200_SHARED, resident)!;
    expect(ensemble).toMatchObject({ tb: 2, units: 4, blocks: 640 });
    expect(ensemble.blocks).toBeLessThanOrEqual(resident(ensemble.sharedBytes));
  });

  it('gives up when the slices cannot fit on chip', () => {
    expect(planPersistent(1, 256, 8192, H200_SHARED, resident)).toBeUndefined();
    expect(planPersistent(8, 256, 2048, H200_SHARED, resident)).toBeUndefined();
    // Five members of hidden 1024 hold 63 MB of f32 W_hh: more than every SM's shared memory.
    expect(planPersistent(5, 32, 1024, H200_SHARED, resident)).toBeUndefined();
  });
});

describe('persistentFit', () => {
  const small = planPersistent(1, 32, 256, H200_SHARED, resident)!;

  it('runs a fitting plan without layer norm, and explains why not elsewhere', () => {
    expect(persistentFit(false, small)).toEqual({ plan: small });
    expect(persistentFit(true, small)).toEqual({ reason: expect.stringMatching(/layer norm/) });
    expect(persistentFit(false, planPersistent(5, 32, 1024, H200_SHARED, resident))).toEqual({ reason: expect.stringMatching(/fit on chip/) });
  });
});

describe('planFused', () => {
  const SMS = 132;

  it('picks the column count from H and refuses hidden sizes past 512', () => {
    expect(planFused(1, 5, 33, SMS)?.columns).toBe(2);
    expect(planFused(1, 5, 64, SMS)?.columns).toBe(2);
    expect(planFused(1, 5, 100, SMS)?.columns).toBe(4);
    expect(planFused(1, 5, 256, SMS)?.columns).toBe(8);
    expect(planFused(1, 5, FUSED_MAX_HIDDEN, SMS)?.columns).toBe(16);
    expect(planFused(1, 5, FUSED_MAX_HIDDEN + 1, SMS)).toBeUndefined();
  });

  it('takes 4-row tiles while they need at most two blocks per SM, else the largest tile', () => {
    // 32 blocks of units · 8 tiles of 4 rows = 256 blocks ≤ 2 · 132: every block resident at once.
    expect(planFused(1, 32, 256, SMS)).toEqual({ columns: 8, rows: 4, blocks: 256, kernel: 'gru_fused_k8_r4' });
    // 1024 blocks of 4 rows would be 8 per SM: 32-row tiles load W_hh 8 times less.
    expect(planFused(1, 128, 256, SMS)).toEqual({ columns: 8, rows: 32, blocks: 128, kernel: 'gru_fused_k8_r32' });
    expect(planFused(5, 32, 256, SMS)).toMatchObject({ rows: 32, blocks: 160 });
    // 16 columns × 32 rows would spill: 16 is the largest tile there.
    expect(planFused(1, 64, 512, SMS)).toMatchObject({ columns: 16, rows: 16, blocks: 256 });
    expect(planFused(8, 256, 512, SMS)).toMatchObject({ columns: 16, rows: 16, blocks: 8 * 64 * 16 });
    expect(planFused(1, 8, 128, SMS)).toMatchObject({ rows: 4, blocks: 32 });
    expect(planFused(1, 5, 33, SMS)).toEqual({ columns: 2, rows: 4, blocks: 10, kernel: 'gru_fused_k2_r4' });
  });

  it('never takes a tile larger than the batch needs', () => {
    expect(planFused(1, 3, 256, SMS)).toMatchObject({ rows: 4, blocks: 32 });
    // 5 rows: 16 is the smallest tile that holds them, so 32 is never considered.
    expect(planFused(64, 5, 64, SMS)).toMatchObject({ rows: 16, blocks: 64 * 8 });
  });

  it('plans only kernels that its gru.cu module defines (one module per column count)', () => {
    const fused = gruModuleSpecs().filter((spec) => spec.defines?.GRU_FUSED_COLUMNS !== undefined);
    expect(fused).toHaveLength(3 * FUSED_COLUMNS.length);
    expect(gruKernelNames(gruFusedSpec('f32', 16))).toEqual(['gru_fused_k16_r4', 'gru_fused_k16_r16']);
    expect(gruKernelNames(gruFusedSpec('f32', 2))).toEqual(['gru_fused_k2_r4', 'gru_fused_k2_r16', 'gru_fused_k2_r32']);
    expect(gruKernelNames(gruFusedSpec('bf16', 8))).toContain('gru_fused_k8_r32');
    for (const e of [1, 3, 5]) {
      for (const b of [1, 3, 17, 32, 64, 130, 1024]) {
        for (const h of [1, 31, 33, 100, 256, 500, 512]) {
          const plan = planFused(e, b, h, SMS)!;
          expect(gruKernelNames(gruFusedSpec('f16', plan.columns))).toContain(plan.kernel);
          expect(32 * plan.columns).toBeGreaterThanOrEqual(h);
          expect(plan.blocks).toBe(e * Math.ceil(h / 8) * Math.ceil(b / plan.rows));
        }
      }
    }
  });
});

describe('planSequence', () => {
  const SMS = 132;

  it('picks the column count from H (8 lanes per unit) and refuses hidden sizes past 128', () => {
    expect(planSequence(1, 5, 1, SMS)).toMatchObject({ columns: 4, threads: 32 });
    expect(planSequence(1, 5, 32, SMS)).toMatchObject({ columns: 4, threads: 256 });
    expect(planSequence(1, 5, 33, SMS)).toMatchObject({ columns: 8, threads: 288 });
    expect(planSequence(1, 5, 100, SMS)).toMatchObject({ columns: 16, threads: 800 });
    expect(planSequence(1, 5, SEQUENCE_MAX_HIDDEN, SMS)).toMatchObject({ columns: 16, threads: 1024 });
    expect(planSequence(1, 5, SEQUENCE_MAX_HIDDEN + 1, SMS)).toBeUndefined();
  });

  it('spreads the rows of every member over the SMs, in passes of the smallest tile that holds them', () => {
    // One row per block while E·B ≤ SMs.
    expect(planSequence(1, 64, 64, SMS)).toMatchObject({ rowsPerBlock: 1, rows: 1, blocks: 64, kernel: 'gru_sequence_k8_r1' });
    expect(planSequence(1, 256, 32, SMS)).toMatchObject({ rowsPerBlock: 2, rows: 2, blocks: 128, kernel: 'gru_sequence_k4_r2' });
    expect(planSequence(5, 256, 64, SMS)).toMatchObject({ rowsPerBlock: 10, rows: 8, blocks: 5 * 26 });
    // 16 columns take at most 2 rows a pass and 8 a block (one gate item per thread).
    expect(planSequence(1, 700, 128, SMS)).toMatchObject({ rowsPerBlock: 6, rows: 2, blocks: 117, kernel: 'gru_sequence_k16_r2' });
    expect(planSequence(16, 300, 100, SMS)).toMatchObject({ rowsPerBlock: 8, rows: 2, blocks: 16 * 38 });
    // Past SMS · 16 rows the blocks run in waves.
    expect(planSequence(16, 300, 31, SMS)).toMatchObject({ rowsPerBlock: SEQUENCE_MAX_ROWS, rows: 8, blocks: 16 * 19 });
  });

  it('sizes shared memory for the state tile (rounded up to whole passes), the biases and the weights past registers', () => {
    // H 33: rows padded to 36 floats; 10 rows in passes of 8 → 16 rows, two buffers; 6·33 biases; 3·33 sums a row.
    expect(sequenceSharedBytes(33, 8, 288, 10, 8)).toBe(4 * (2 * 16 * 36 + 6 * 33 + 16 * 3 * 33));
    // 16 columns: a fourth of the weights (3 float4 per thread) sit in shared memory.
    expect(sequenceSharedBytes(128, 16, 1024, 1, 1)).toBe(4 * (12 * 1024 + 2 * 128 + 6 * 128 + 3 * 128));
    const largest = planSequence(64, 256, 128, SMS)!;
    expect(largest.sharedBytes).toBeLessThanOrEqual(227 * 1024);
  });

  it('plans only kernels that its gru_sequence.cu module defines (one module per column count)', () => {
    const specs = gruModuleSpecs().filter((spec) => spec.file === 'gru_sequence.cu');
    expect(specs).toHaveLength(9);
    expect(gruKernelNames(gruSequenceSpec('f32', 16))).toEqual(['gru_sequence_k16_r1', 'gru_sequence_k16_r2']);
    expect(gruKernelNames(gruSequenceSpec('bf16', 4))).toEqual(['gru_sequence_k4_r1', 'gru_sequence_k4_r2', 'gru_sequence_k4_r4', 'gru_sequence_k4_r8']);
    for (const e of [1, 3, 16]) {
      for (const b of [1, 3, 17, 130, 1024]) {
        for (const h of [1, 31, 33, 64, 100, 128]) {
          const plan = planSequence(e, b, h, SMS)!;
          expect(gruKernelNames(gruSequenceSpec('f16', plan.columns))).toContain(plan.kernel);
          expect(8 * plan.columns).toBeGreaterThanOrEqual(h);
          expect(plan.rowsPerBlock).toBeLessThanOrEqual(SEQUENCE_MAX_ROWS);
          // Every (row, unit) of a block has a thread for its gates (one item each at 16 columns, else two).
          expect(plan.rowsPerBlock * h).toBeLessThanOrEqual((plan.columns === 16 ? 1 : 2) * plan.threads);
          expect(plan.blocks).toBe(e * Math.ceil(b / plan.rowsPerBlock));
          expect(plan.threads % 32).toBe(0);
          expect(plan.threads).toBeLessThanOrEqual(1024);
        }
      }
    }
  });

  it('runs without layer norm, and explains why not elsewhere', () => {
    const plan = planSequence(1, 8, 64, SMS);
    expect(sequenceFit(false, plan)).toEqual({ plan });
    expect(sequenceFit(true, plan)).toEqual({ reason: expect.stringMatching(/layer norm/) });
    expect(sequenceFit(false, undefined)).toEqual({ reason: expect.stringMatching(/up to 128/) });
  });
});

describe('fusedFit and autoPath', () => {
  const small = { ensemble: 1, batch: 32, hidden: 256, layerNorm: false, precision: 'highest' as 'highest' | 'tf32', dtype: 'f32' as DType };
  const plan = (s: typeof small) => planFused(s.ensemble, s.batch, s.hidden, 132);
  const seq = (s: typeof small): SequencePlan | undefined => planSequence(s.ensemble, s.batch, s.hidden, 132);
  const auto = (s: typeof small) => autoPath(s, plan(s), seq(s));

  it('runs a plan without layer norm, and explains why not elsewhere', () => {
    expect(fusedFit(false, plan(small))).toEqual({ plan: plan(small) });
    expect(fusedFit(true, plan(small))).toEqual({ reason: expect.stringMatching(/layer norm/) });
    expect(fusedFit(false, undefined)).toEqual({ reason: expect.stringMatching(/up to 512/) });
  });

  it('takes the sequence kernel for hidden sizes up to 128 and products up to its limit', () => {
    for (const hidden of [1, 32, 64, 100, 128]) for (const batch of [1, 3, 64, 256]) expect(auto({ ...small, hidden, batch })).toBe('sequence');
    expect(auto({ ...small, hidden: 64, ensemble: 16, batch: 256 })).toBe('sequence');
    // 5 · 256 · 128² = 5 · 2^22 is the limit; 6 members step.
    expect(auto({ ...small, hidden: 128, ensemble: 5, batch: 256 })).toBe('sequence');
    expect(auto({ ...small, hidden: 128, ensemble: 6, batch: 256 })).toBe('steps');
    // Under TF32 the tensor-core products take over at 2^22, as from the fused path.
    expect(auto({ ...small, hidden: 128, batch: 256, precision: 'tf32' })).toBe('sequence');
    expect(auto({ ...small, hidden: 128, batch: 257, precision: 'tf32' })).toBe('steps');
    expect(auto({ ...small, hidden: 128, layerNorm: true })).toBe('steps');
    expect(auto({ ...small, hidden: 129 })).toBe('fused');
    // 16-bit layers keep the fused path.
    expect(auto({ ...small, hidden: 64, dtype: 'bf16' })).toBe('fused');
    expect(auto({ ...small, hidden: 64, dtype: 'f16' })).toBe('fused');
  });

  it('takes fused for small products, steps for large ones, layer norm or hidden past 512', () => {
    expect(auto(small)).toBe('fused');
    expect(auto({ ...small, precision: 'tf32' })).toBe('fused');
    expect(auto({ ...small, layerNorm: true })).toBe('steps');
    expect(auto({ ...small, batch: 256, hidden: 1024 })).toBe('steps');
    // 32 · 512² = 2^23: the f32 limit; TF32 tensor cores take over sooner (2^22).
    const mid = { ...small, batch: 32, hidden: 512 };
    expect(auto(mid)).toBe('fused');
    expect(auto({ ...mid, batch: 33 })).toBe('steps');
    expect(auto({ ...mid, precision: 'tf32' })).toBe('steps');
    expect(auto({ ...mid, batch: 16, precision: 'tf32' })).toBe('fused');
    // The hybrid trainer's ensemble (5 · 32 · 256² > 2^23) steps.
    expect(auto({ ...small, ensemble: 5 })).toBe('steps');
  });
});

describe('planRollout', () => {
  it('takes the smallest column counts that cover H and S, a block per 8 units or columns of a member', () => {
    expect(planRollout(5, 32, 256, 128)).toEqual({ kh: 8, ks: 4, blocks: 5 * 32 });
    expect(planRollout(1, 1, 1, 1)).toEqual({ kh: 2, ks: 2, blocks: 1 });
    expect(planRollout(3, 7, 33, 100)).toEqual({ kh: 2, ks: 4, blocks: 3 * 13 });
    expect(planRollout(2, 9, 64, 65)).toEqual({ kh: 2, ks: 4, blocks: 2 * 9 });
  });

  it('declines sizes past 256 and batches past its limit, saying which', () => {
    expect(planRollout(1, 32, 257, 16)).toEqual({ reason: expect.stringMatching(/up to 256/) });
    expect(planRollout(1, 32, 16, 300)).toEqual({ reason: expect.stringMatching(/up to 256/) });
    expect(planRollout(1, ROLLOUT_MAX_BATCH + 1, 16, 16)).toEqual({ reason: expect.stringMatching(/batches up to/) });
    expect(planRollout(1, ROLLOUT_MAX_BATCH, 16, 16)).not.toHaveProperty('reason');
  });

  it('names a module of gru_rollout.cu that every plan can find among the specialisations', () => {
    const specs = gruModuleSpecs().map((s) => JSON.stringify(s));
    for (const [H, S] of [[1, 1], [64, 65], [256, 256], [100, 200]] as const) {
      const p = planRollout(2, 8, H, S) as { kh: number; ks: number };
      const spec = gruRolloutSpec('bf16', p.kh, p.ks);
      expect(specs).toContain(JSON.stringify(spec));
      expect(gruKernelNames(spec)).toEqual(['gru_rollout']);
    }
  });
});

describe('rolloutClusterPlans', () => {
  const H200_OPTIN = 232448;

  it('lays the pipeline member (b32 h256 s128) over 16 CTAs only: 16 units and 8 columns each, 193 KiB', () => {
    const sums = (52 + 52) * 32;
    const biases = 6 * 16 + 8;
    expect(rolloutClusterPlans(32, 256, 128, H200_OPTIN)).toEqual([
      { cluster: 16, units: 16, columns: 8, ldGate: 52, ldOut: 12, ldBatch: 36, pad: 32, sharedBytes: 4 * (384 * 52 + 256 * 12 + 640 * 36 + sums + biases) },
    ]);
    // Over 8 CTAs the weights alone take 170 KiB of each: with x and h, past the opt-in limit.
    expect(rolloutClusterLayout(8, 32, 256, 128).sharedBytes).toBeGreaterThan(H200_OPTIN);
  });

  it('keeps the sizes in order, pads ragged shapes and leaves out what does not fit', () => {
    const sizes = rolloutClusterPlans(7, 33, 9, H200_OPTIN).map((p) => p.cluster);
    expect(sizes).toEqual([...ROLLOUT_CLUSTER_SIZES]);
    // Strides 4 past a multiple of 8 floats.
    expect(rolloutClusterLayout(4, 7, 33, 9)).toMatchObject({ units: 9, columns: 3, ldGate: 36, ldOut: 12, pad: 8, ldBatch: 12 });
    // Batch 256 of h250 s200: x and both h buffers alone are 700 rows of 260 floats.
    expect(rolloutClusterPlans(256, 250, 200, H200_OPTIN)).toEqual([]);
    expect(rolloutClusterPlans(32, 256, 128, H200_OPTIN, [8, 4])).toEqual([]);
  });

  it('names the module of gru_rollout_cluster.cu among the specialisations', () => {
    const specs = gruModuleSpecs().map((s) => JSON.stringify(s));
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      expect(specs).toContain(JSON.stringify(gruRolloutClusterSpec(dtype)));
      expect(gruKernelNames(gruRolloutClusterSpec(dtype))).toEqual(['gru_rollout_cluster']);
    }
  });
});
