/**
 * gpu.gruRollout on the CPU backend's one-go path (Backend.gruRollout: simd/gru-rollout.ts):
 * taken for f32 one-layer rollouts, with the BLAS and without, on one thread and on several
 * (tasks by member, and by units and state columns where members are fewer than threads); the
 * float64 reference and the step-by-step path (path 'steps') agree with it; 16-bit states decline
 * it; a failing task surfaces as an error without leaving the other threads waiting.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CpuBackend } from '../../../src/compute/cpu/cpu-backend.js';
import { gruRollout } from '../../../src/compute/cpu/simd/gru-rollout.js';
import { SimdKernelError } from '../../../src/compute/cpu/simd/errors.js';
import { SimdRuntime } from '../../../src/compute/cpu/simd/runtime.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { blasAvailable } from '../blas/blas-available.js';
import { freshSeed, relError } from '../compute/helpers.js';
import { checkRollout, GRU_BOUND, read } from '../gru/checks.js';
import { randomLayer, randomTensor } from '../gru/fixtures.js';

// Members are split into chunks of units and state columns where they are fewer than the threads.
const ENGINES = [
  ...(blasAvailable ? [{ blas: true, threads: 2 }, { blas: true, threads: 1 }, { blas: true, threads: 3 }] : []),
  { blas: false, threads: 2 },
  { blas: false, threads: 1 },
  { blas: false, threads: 3 },
];

/** A CPU GpuCompute with or without its BLAS (GPUCOMPUTE_BLAS is read when the backend opens). */
async function open(blas: boolean, threads: number): Promise<GpuCompute> {
  const saved = process.env.GPUCOMPUTE_BLAS;
  process.env.GPUCOMPUTE_BLAS = blas ? '1' : '0';
  try {
    return await GpuCompute.create({ backend: 'cpu', threads, logLevel: 'silent' });
  } finally {
    if (saved === undefined) delete process.env.GPUCOMPUTE_BLAS;
    else process.env.GPUCOMPUTE_BLAS = saved;
  }
}

/** Watches CpuBackend.gruRollout: what each call returned (true: the one-go path ran). */
function watchOneGo() {
  const spy = vi.spyOn(CpuBackend.prototype, 'gruRollout');
  return () => spy.mock.results.map((r) => r.value as boolean);
}

afterEach(() => vi.restoreAllMocks());

interface Variant {
  ensemble?: number;
  /** Per-member start states [E, B, S] instead of one [B, S]. */
  perMemberState?: boolean;
  /** One projection [S, H] for every member. */
  sharedProjection?: boolean;
  biases?: boolean;
  /** No h0: both paths start from zeros. */
  noH0?: boolean;
  batch: number;
  state: number;
  hidden: number;
  steps: number;
  dtype?: DType;
}

/** The same rollout by the default path and step by step: both results, as numbers. */
function bothPaths(gpu: GpuCompute, v: Variant, seed: number): { oneGo: number[][]; steps: number[][] } {
  const dtype = v.dtype ?? 'f32';
  const E = v.ensemble;
  const lead = E === undefined ? [] : [E];
  const layer = randomLayer(gpu, v.state, v.hidden, seed, dtype, { ...(E === undefined ? {} : { ensemble: E }), biases: v.biases ?? true });
  const owned: Tensor[] = [...layer.tensors];
  try {
    const state = randomTensor(gpu, [...(v.perMemberState ? lead : []), v.batch, v.state], seed + 10, dtype);
    const h0 = randomTensor(gpu, [...lead, v.batch, v.hidden], seed + 11, dtype, 0.5);
    const weight = randomTensor(gpu, [...(v.sharedProjection ? [] : lead), v.state, v.hidden], seed + 12, dtype, 1 / Math.sqrt(v.hidden));
    const bias = randomTensor(gpu, [...(v.sharedProjection ? [] : lead), v.state], seed + 13, dtype, 0.1);
    owned.push(state.tensor, h0.tensor, weight.tensor, bias.tensor);
    const run = (path: 'auto' | 'steps') => {
      const r = gpu.gruRollout(state.tensor, v.noH0 ? undefined : h0.tensor, layer.weights, { steps: v.steps, outputProjection: { weight: weight.tensor, bias: bias.tensor }, path });
      owned.push(r.states, r.hidden);
      return [read(r.states), read(r.hidden)];
    };
    return { oneGo: run('auto'), steps: run('steps') };
  } finally {
    for (const t of owned) t.dispose();
  }
}

for (const { blas, threads } of ENGINES) {
  describe(`gruRollout in one go, ${blas ? 'BLAS' : 'WebAssembly'} products, ${threads} thread${threads === 1 ? '' : 's'}`, () => {
    it('runs an ensemble in one go, within the bound of the float64 reference', async () => {
      const gpu = await open(blas, threads);
      try {
        const oneGo = watchOneGo();
        // H 70 and S 40: one member gets two unit chunks with two or three threads, one state chunk.
        for (const c of [{ ensemble: 3 }, {}]) {
          const seed = freshSeed();
          const got = checkRollout(gpu, { batch: 3, state: 40, hidden: 70, steps: 4, ...c, seed });
          expect(got.states, `states, seed ${seed}`).toBeLessThanOrEqual(GRU_BOUND.f32);
          expect(got.hidden, `hidden, seed ${seed}`).toBeLessThanOrEqual(GRU_BOUND.f32);
        }
        expect(oneGo()).toEqual([true, true]);
      } finally {
        gpu.dispose();
      }
    });

    it('agrees with the step-by-step path: per-member states, a shared projection, no biases, odd sizes, one step', async () => {
      const gpu = await open(blas, threads);
      try {
        const variants: Variant[] = [
          { ensemble: 2, perMemberState: true, batch: 5, state: 67, hidden: 131, steps: 3 },
          { ensemble: 2, sharedProjection: true, biases: false, batch: 2, state: 5, hidden: 13, steps: 5 },
          { ensemble: 3, batch: 1, state: 9, hidden: 7, steps: 1 },
          { batch: 4, state: 96, hidden: 300, steps: 2 },
          { ensemble: 2, batch: 3, state: 6, hidden: 11, steps: 3, noH0: true },
        ];
        for (const v of variants) {
          const seed = freshSeed();
          const oneGo = watchOneGo();
          const { oneGo: a, steps: b } = bothPaths(gpu, v, seed);
          expect(oneGo()[0], `one go taken, ${JSON.stringify(v)}`).toBe(true);
          expect(relError(a[0]!, b[0]!), `states, ${JSON.stringify(v)}, seed ${seed}`).toBeLessThanOrEqual(1e-6);
          expect(relError(a[1]!, b[1]!), `hidden, ${JSON.stringify(v)}, seed ${seed}`).toBeLessThanOrEqual(1e-6);
          vi.restoreAllMocks();
        }
      } finally {
        gpu.dispose();
      }
    });

    it('starts from zeros without h0 where the one-go path declines (f16) and leaves nothing allocated', async () => {
      const gpu = await open(blas, threads);
      try {
        const before = gpu.memoryStats().allocations;
        const oneGo = watchOneGo();
        const { oneGo: a, steps: b } = bothPaths(gpu, { ensemble: 2, batch: 3, state: 6, hidden: 11, steps: 3, noH0: true, dtype: 'f16' }, freshSeed());
        expect(oneGo()[0]).toBe(false);
        expect(a).toEqual(b);
        expect(gpu.memoryStats().allocations).toBe(before);
      } finally {
        gpu.dispose();
      }
    });
  });
}

describe('gruRollout in one go declines and fails cleanly', () => {
  it('leaves 16-bit states to the step-by-step path', async () => {
    const gpu = await open(false, 2);
    try {
      const oneGo = watchOneGo();
      const seed = freshSeed();
      const { oneGo: a, steps: b } = bothPaths(gpu, { ensemble: 2, batch: 3, state: 6, hidden: 8, steps: 3, dtype: 'bf16' }, seed);
      expect(oneGo()[0]).toBe(false);
      expect(relError(a[0]!, b[0]!, 'bf16'), `seed ${seed}`).toBe(0);
    } finally {
      gpu.dispose();
    }
  });

  it('reports a task that traps, on any thread, and the runtime runs the next rollout', async () => {
    const rt = new SimdRuntime({ threads: 2 });
    try {
      const [E, B, S, H, T] = [3, 2, 8, 40, 3];
      const block = rt.temp(4 * (E * B * S + E * B * H + 2 * E * 3 * H * (S + H) + E * S * H + E * B * T * S + E * B * H));
      const base = Number(block.address);
      let next = base;
      const take = (floats: number) => ((next += floats * 4), next - floats * 4);
      const p = {
        state: take(E * B * S),
        stateShared: false,
        h0: take(E * B * H),
        wIh: take(E * 3 * H * S),
        wHh: take(E * 3 * H * H),
        bIh: 0,
        bHh: 0,
        outWeight: take(E * S * H),
        outBias: 0,
        projectionShared: false,
        states: take(E * B * T * S),
        hN: take(E * B * H),
        ensemble: E,
        batch: B,
        steps: T,
        hidden: H,
        input: S,
      };
      rt.f32.fill(0.25, base / 4, next / 4);
      // The later members' recurrent weights run past the end of the memory: their products trap.
      expect(() => gruRollout(rt, { ...p, wHh: rt.memory.buffer.byteLength - E * 3 * H * H * 2 }, false)).toThrow(SimdKernelError);
      gruRollout(rt, p, false);
      const states = rt.f32.subarray(p.states / 4, p.states / 4 + E * B * T * S);
      expect(states.every((v) => Number.isFinite(v))).toBe(true);
      rt.freeTemp(block);
    } finally {
      await rt.dispose();
    }
  });
});
