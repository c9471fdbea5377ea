/**
 * gpu.gruRollout's one-launch path on CUDA: taken by 'auto' for one layer without layer norm, over
 * thread-block clusters where a member fits one (kernels/gru_rollout_cluster.cu, sm_90+) and by the
 * cooperative kernel (kernels/gru_rollout.cu) elsewhere. Each kernel must give what the CPU backend
 * gives (and what the CUDA step-by-step path gives) on fresh random inputs: ensembles with shared
 * or per-member states and projections, absent biases and h0, f16/bf16, odd sizes, batches staged
 * in several chunks, a grid smaller than its groups (weights reloaded per group), a single step,
 * clusters of every size with CTAs that own fewer units or columns than others, or none; replayed
 * inside gpu.capture; and it leaves the pool balanced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { GruRolloutParams } from '../../../src/compute/core/gru-params.js';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import { ROLLOUT_CLUSTER_SIZES, rolloutClusterPlans } from '../../../src/compute/cuda/gru/gru-plan.js';
import { runGruRollout, type RolloutKernel } from '../../../src/compute/cuda/gru/rollout.js';
import { autoClusterPlan } from '../../../src/compute/cuda/gru/rollout-cluster.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { GRU_BOUND } from '../../unit/gru/checks.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, freshSeed, openPair, randomValues, relError, valuesOf, type Pair } from '../compute/setup.js';

interface RolloutCase {
  name: string;
  E?: number;
  B: number;
  S: number;
  H: number;
  T: number;
  dtype?: 'f32' | 'f16' | 'bf16';
  perMemberState?: boolean;
  sharedProjection?: boolean;
  biases?: boolean;
  h0?: boolean;
}

const CASES: RolloutCase[] = [
  { name: 'the pipeline: ensemble 5 b32 s128 h256 T10', E: 5, B: 32, S: 128, H: 256, T: 10, biases: true },
  { name: 'ensemble 3 b7 s9 h33 T4, per-member states, shared projection, no GRU biases', E: 3, B: 7, S: 9, H: 33, T: 4, perMemberState: true, sharedProjection: true, h0: true },
  { name: 'b5 s20 h100 T3 f16 with h0', B: 5, S: 20, H: 100, T: 3, dtype: 'f16', biases: true, h0: true },
  { name: 'ensemble 2 b13 s64 h64 T6 bf16', E: 2, B: 13, S: 64, H: 64, T: 6, dtype: 'bf16', biases: true },
  { name: 'ensemble 16 b9 s32 h256 T3 (more groups than resident blocks)', E: 16, B: 9, S: 32, H: 256, T: 3, biases: true },
  { name: 'b1 s1 h1 T1', B: 1, S: 1, H: 1, T: 1, biases: true, h0: true },
  { name: 'ensemble 4 b256 s200 h250 T2', E: 4, B: 256, S: 200, H: 250, T: 2, biases: true },
];

/** The case's tensors on one GpuCompute, from the seed alone (so CUDA and the CPU get the same values). */
function inputs(g: GpuCompute, c: RolloutCase, seed: number) {
  const dtype: DType = c.dtype ?? 'f32';
  const lead = c.E === undefined ? [] : [c.E];
  const t = (shape: number[], k: number, scale: number) => g.tensor(randomValues(shape.reduce((a, b) => a * b, 1), seed + k, scale), shape, dtype);
  const weights = {
    wIh: t([...lead, 3 * c.H, c.S], 1, 1 / Math.sqrt(c.S)),
    wHh: t([...lead, 3 * c.H, c.H], 2, 1 / Math.sqrt(c.H)),
    ...(c.biases ? { bIh: t([...lead, 3 * c.H], 3, 0.2), bHh: t([...lead, 3 * c.H], 4, 0.2) } : {}),
  };
  const projLead = c.sharedProjection ? [] : lead;
  const projection = { weight: t([...projLead, c.S, c.H], 5, 1 / Math.sqrt(c.H)), bias: t([...projLead, c.S], 6, 0.1) };
  const state = t(c.perMemberState ? [...lead, c.B, c.S] : [c.B, c.S], 7, 1);
  const h0 = c.h0 ? t([...lead, c.B, c.H], 8, 0.5) : undefined;
  const all = [...Object.values(weights), projection.weight, projection.bias, state, ...(h0 ? [h0] : [])];
  return { weights, projection, state, h0, all };
}

function rollout(g: GpuCompute, c: RolloutCase, seed: number, path: 'auto' | 'steps') {
  const i = inputs(g, c, seed);
  try {
    const r = g.gruRollout(i.state, i.h0, i.weights, { steps: c.T, outputProjection: i.projection, path });
    const got = { states: valuesOf(r.states), hidden: valuesOf(r.hidden), shapes: [r.states.shape, r.hidden.shape] };
    r.states.dispose();
    r.hidden.dispose();
    return got;
  } finally {
    for (const t of i.all) t.dispose();
  }
}

describe.skipIf(!gpuAvailable)('gruRollout in one launch on CUDA', () => {
  let pair: Pair;
  let backend: CudaBackend;
  /** The kernel the one-launch path is asked for, and the kernels it ran (it declines where none applies). */
  let kernel: RolloutKernel = 'auto';
  const taken: string[] = [];
  beforeAll(async () => {
    pair = await openPair();
    backend = pair.cuda.backend as CudaBackend;
    (backend as { gruRollout(p: GruRolloutParams): boolean }).gruRollout = (p) => {
      const ran = runGruRollout(backend, p, kernel);
      if (ran !== undefined) taken.push(ran);
      return ran !== undefined;
    };
  });
  afterAll(() => closePair(pair));

  /** The kernel 'auto' takes for a case on this device. */
  const autoKernel = (c: RolloutCase) => (autoClusterPlan(backend, c.dtype ?? 'f32', c.E ?? 1, c.B, c.H, c.S) ? 'cluster' : 'cooperative');

  /** Runs a case with `choice` (which must run it), against the CPU and the step-by-step path. */
  function check(c: RolloutCase, choice: RolloutKernel, expected: string) {
    const seed = freshSeed();
    const before = taken.length;
    const baseline = pair.cuda.memoryStats().inUseBytes;
    kernel = choice;
    let fast;
    try {
      fast = rollout(pair.cuda, c, seed, 'auto');
    } finally {
      kernel = 'auto';
    }
    expect(taken.slice(before), 'the one-launch path ran').toEqual([expected]);
    const steps = rollout(pair.cuda, c, seed, 'steps');
    const cpu = rollout(pair.cpu, c, seed, 'auto');
    expect(fast.shapes).toEqual(cpu.shapes);
    const bound = GRU_BOUND[c.dtype ?? 'f32'];
    const label = `${c.name}, ${JSON.stringify(choice)}, seed ${seed}`;
    expect(relError(fast.states, cpu.states), `${label}: states against the CPU`).toBeLessThanOrEqual(bound);
    expect(relError(fast.hidden, cpu.hidden), `${label}: hidden against the CPU`).toBeLessThanOrEqual(bound);
    expect(relError(fast.states, steps.states), `${label}: states against the step-by-step path`).toBeLessThanOrEqual(bound);
    expect(pair.cuda.memoryStats().inUseBytes, 'pool balanced').toBe(baseline);
  }

  it.each(CASES.map((c) => [c.name, c] as const))('%s: matches the CPU and the step-by-step path', (_name, c) => {
    check(c, 'auto', autoKernel(c));
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: the cooperative kernel matches too', (_name, c) => {
    check(c, 'cooperative', 'cooperative');
  });

  const SMALL = [1, 2, 3, 5].map((i) => CASES[i]!);
  it.each(SMALL.map((c) => [c.name, c] as const))('%s: clusters of every size match too', (_name, c) => {
    if (!backend.clusterLaunch) return;
    const sizes = rolloutClusterPlans(c.B, c.H, c.S, backend.device.sharedMemoryPerBlockOptin).map((p) => p.cluster);
    expect(sizes, 'every size fits').toEqual([...ROLLOUT_CLUSTER_SIZES]);
    // (16 CTAs over h33 s9 or h1 s1: the last CTAs own no unit or no column.)
    for (const cluster of sizes) check(c, { cluster }, 'cluster');
  });

  it('declines what it does not fit (a batch past 256, two layers) and the step-by-step path runs', () => {
    const seed = freshSeed();
    const before = taken.length;
    const wide = { name: 'b300', B: 300, S: 8, H: 16, T: 2, biases: true };
    const got = rollout(pair.cuda, wide, seed, 'auto');
    const cpu = rollout(pair.cpu, wide, seed, 'auto');
    expect(relError(got.states, cpu.states)).toBeLessThanOrEqual(GRU_BOUND.f32);
    expect(taken.length, 'declined').toBe(before);
  });

  it('replays inside gpu.capture as its eager run computes', () => {
    const g = pair.cuda;
    const seed = freshSeed();
    const c = CASES[0]!;
    const i = inputs(g, c, seed);
    const f = (state: Tensor) => g.gruRollout(state, undefined, i.weights, { steps: c.T, outputProjection: i.projection }).states;
    const step = g.capture(f, [i.state]);
    expect(step.graphed).toBe(true);
    for (let k = 0; k < 3; k++) {
      using next = g.tensor(randomValues(c.B * c.S, seed + 50 + k), [c.B, c.S]);
      using replayed = step(next);
      using eager = g.scope(() => f(next));
      expect(relError(valuesOf(replayed), valuesOf(eager)), `replay ${k}`).toBeLessThanOrEqual(1e-6);
    }
    step.dispose();
    for (const t of i.all) t.dispose();
  });
});
