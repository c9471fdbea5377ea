/**
 * The GRU cases the CUDA tests and the compute-sanitizer driver run: every kernel path
 * (the one-launch sequence kernel on its own shapes, hidden ≤ 128; persistent with 2 and 8 rows per thread; fused with every column count and row tile, odd
 * hidden sizes and batches that leave a tile part-filled; per-step GEMM + gates; eagerly,
 * captured and replayed as a graph; layer norm), dtypes, ensembles, stacks, cells and rollouts,
 * each checked against the float64 reference. Each case names its path ('auto' for the default choice).
 */
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { FUSED_COLUMNS, fusedKernelNames, planFused } from '../../../src/compute/cuda/gru/gru-plan.js';
import type { GruPath } from '../../../src/compute/core/gru-params.js';
import { checkCell, checkGru, checkRollout, GRU_BOUND as BOUND, read, type GruCase } from '../../unit/gru/checks.js';
import { randomLayer, randomTensor } from '../../unit/gru/fixtures.js';
import { refGru } from '../../unit/gru/reference.js';
import { nest3, flat } from '../../unit/gru/fixtures.js';
import { relError } from '../../unit/compute/helpers.js';

export interface NamedResult {
  name: string;
  error: number;
  bound: number;
}

export function gruCases(seed: number, paths: readonly GruPath[]): { name: string; path: GruPath; c: GruCase }[] {
  const list: { name: string; path: GruPath; c: GruCase }[] = [];
  if (paths.includes('sequence')) list.push(...sequenceCases(seed));
  for (const path of paths.filter((p) => p !== 'sequence')) {
    list.push(
      { name: `${path} b5 in7 h33 T1`, path, c: { batch: 5, input: 7, hidden: 33, steps: 1, seed } },
      { name: `${path} b5 in7 h33 T6`, path, c: { batch: 5, input: 7, hidden: 33, steps: 6, seed } },
      { name: `${path} b130 in16 h40 T3 (8 rows/thread)`, path, c: { batch: 130, input: 16, hidden: 40, steps: 3, seed } },
      { name: `${path} b32 in128 h256 T10 last only`, path, c: { batch: 32, input: 128, hidden: 256, steps: 10, returnSequences: false, seed } },
      { name: `${path} ensemble 5 h256 b32 T4 per-member x, 2 layers`, path, c: { batch: 32, input: 64, hidden: 256, steps: 4, ensemble: 5, layers: 2, perMemberInput: true, seed } },
      { name: `${path} f16 b9 h48 T5`, path, c: { batch: 9, input: 12, hidden: 48, steps: 5, dtype: 'f16', seed } },
      { name: `${path} bf16 b9 h48 T5`, path, c: { batch: 9, input: 12, hidden: 48, steps: 5, dtype: 'bf16', seed } },
      { name: `${path} b37 in20 h100 T4`, path, c: { batch: 37, input: 20, hidden: 100, steps: 4, seed } },
      { name: `${path} b45 in24 h200 T3 last only`, path, c: { batch: 45, input: 24, hidden: 200, steps: 3, returnSequences: false, seed } },
      { name: `${path} ensemble 2 b40 in32 h512 T3`, path, c: { batch: 40, input: 32, hidden: 512, steps: 3, ensemble: 2, seed } },
      { name: `${path} f16 ensemble 3 b3 h130 T2, 2 layers`, path, c: { batch: 3, input: 16, hidden: 130, steps: 2, ensemble: 3, layers: 2, dtype: 'f16', seed } },
    );
  }
  if (paths.includes('auto')) {
    list.push(
      { name: 'auto tf32 b256 in64 h512 T3', path: 'auto', c: { batch: 256, input: 64, hidden: 512, steps: 3, precision: 'tf32', seed } },
      { name: 'auto layer norm ensemble 3 b4 h300 T5', path: 'auto', c: { batch: 4, input: 8, hidden: 300, steps: 5, ensemble: 3, layerNorm: true, seed } },
      { name: 'auto b128 in64 h1024 T2 (W_hh across 128 SMs)', path: 'auto', c: { batch: 128, input: 64, hidden: 1024, steps: 2, seed } },
    );
  }
  if (paths.includes('fused')) {
    list.push({ name: 'fused tf32 b32 in128 h256 T10 (input GEMM in TF32)', path: 'fused', c: { batch: 32, input: 128, hidden: 256, steps: 10, precision: 'tf32', seed } });
  }
  return list;
}

/**
 * The sequence path (hidden ≤ 128) on every column count and row tile: odd batches and hidden
 * sizes, one step, the ring of two slots (last state only), no biases, ensembles (one x and per
 * member), f16/bf16, stacks, and tiles of several rows per block taken in more than one pass.
 */
function sequenceCases(seed: number): { name: string; path: GruPath; c: GruCase }[] {
  const cases: [string, Omit<GruCase, 'seed'>][] = [
    ['b5 in7 h33 T1', { batch: 5, input: 7, hidden: 33, steps: 1 }],
    ['b1 in3 h1 T4', { batch: 1, input: 3, hidden: 1, steps: 4 }],
    ['b5 in7 h33 T6', { batch: 5, input: 7, hidden: 33, steps: 6 }],
    ['b3 in16 h32 T50', { batch: 3, input: 16, hidden: 32, steps: 50 }],
    ['b130 in16 h40 T3', { batch: 130, input: 16, hidden: 40, steps: 3 }],
    ['b32 in128 h128 T10 last only', { batch: 32, input: 128, hidden: 128, steps: 10, returnSequences: false }],
    ['b7 in9 h65 T5 no biases', { batch: 7, input: 9, hidden: 65, steps: 5, biases: false }],
    ['ensemble 5 b32 in64 h64 T4 per-member x, 2 layers', { batch: 32, input: 64, hidden: 64, steps: 4, ensemble: 5, layers: 2, perMemberInput: true }],
    ['f16 b9 in12 h48 T5', { batch: 9, input: 12, hidden: 48, steps: 5, dtype: 'f16' }],
    ['bf16 b9 in12 h48 T5', { batch: 9, input: 12, hidden: 48, steps: 5, dtype: 'bf16' }],
    ['bf16 b300 in8 h127 T3 last only', { batch: 300, input: 8, hidden: 127, steps: 3, dtype: 'bf16', returnSequences: false }],
    ['b37 in20 h100 T4', { batch: 37, input: 20, hidden: 100, steps: 4 }],
    ['ensemble 2 b40 in32 h128 T3', { batch: 40, input: 32, hidden: 128, steps: 3, ensemble: 2 }],
    ['f16 ensemble 3 b3 in16 h65 T2, 2 layers', { batch: 3, input: 16, hidden: 65, steps: 2, ensemble: 3, layers: 2, dtype: 'f16' }],
    // 16 rows per block in two passes of 8; 6 rows per block in three passes of 2.
    ['ensemble 16 b300 in8 h31 T3', { batch: 300, input: 8, hidden: 31, steps: 3, ensemble: 16 }],
    ['b700 in8 h128 T3', { batch: 700, input: 8, hidden: 128, steps: 3 }],
    ['ensemble 9 b250 in8 h64 T2 no biases, last only', { batch: 250, input: 8, hidden: 64, steps: 2, ensemble: 9, biases: false, returnSequences: false }],
  ];
  return cases.map(([name, c]) => ({ name: `sequence ${name}`, path: 'sequence' as const, c: { ...c, seed } }));
}

/**
 * For every fused kernel, the cheapest shape of a small grid that planFused sends to it on this
 * device (`multiprocessors` SMs), so each is checked whatever the tile rule; a kernel no shape
 * reaches is reported in `unreached`.
 */
export function fusedKernelCases(seed: number, multiprocessors: number): { cases: { name: string; c: GruCase }[]; unreached: string[] } {
  const shapes: [number, number, number][] = [];
  for (const E of [1, 2, 5, 16]) for (const B of [3, 7, 13, 30, 45, 70, 130, 260]) for (const H of [33, 64, 100, 128, 200, 256, 300, 512]) shapes.push([E, B, H]);
  shapes.sort((a, b) => a[0] * a[1] * a[2] * a[2] - b[0] * b[1] * b[2] * b[2]);
  const byKernel = new Map<string, [number, number, number]>();
  for (const [E, B, H] of shapes) {
    const kernel = planFused(E, B, H, multiprocessors)!.kernel;
    if (!byKernel.has(kernel)) byKernel.set(kernel, [E, B, H]);
  }
  const cases = [...byKernel].map(([kernel, [E, B, H]]) => ({
    name: `fused ${kernel}: ensemble ${E} b${B} h${H} T2`,
    c: { batch: B, input: 8, hidden: H, steps: 2, ensemble: E, seed },
  }));
  const unreached = FUSED_COLUMNS.flatMap((c) => fusedKernelNames(c)).filter((k) => !byKernel.has(k));
  return { cases, unreached };
}

function boundOf(c: GruCase): number {
  if (c.precision === 'tf32') return BOUND.tf32;
  return BOUND[(c.dtype ?? 'f32') as 'f32' | 'f16' | 'bf16'];
}

/** Runs every case; returns the errors of output and hidden state. */
export function runGruCases(gpu: GpuCompute, seed: number, paths: readonly GruPath[] = ['auto']): NamedResult[] {
  const results: NamedResult[] = [];
  const cases = gruCases(seed, paths);
  if (paths.includes('fused')) {
    const fused = fusedKernelCases(seed, gpu.backend.info().multiprocessorCount);
    for (const kernel of fused.unreached) results.push({ name: `${kernel}: no shape of the grid reaches it`, error: Number.POSITIVE_INFINITY, bound: 0 });
    cases.push(...fused.cases.map(({ name, c }) => ({ name, path: 'fused' as const, c })));
  }
  for (const { name, path, c } of cases) {
    const err = checkGru(gpu, { ...c, path });
    const bound = boundOf(c);
    results.push({ name: `${name}: output`, error: err.output, bound }, { name: `${name}: h_n`, error: err.hidden, bound });
  }
  for (const path of paths) {
    results.push({ name: `${path} gruCell ensemble 4 shared x`, error: checkCell(gpu, { batch: 6, input: 10, hidden: 70, ensemble: 4, seed, path }).error, bound: BOUND.f32 });
    results.push({ name: `${path} gruCell b3 h33 bf16`, error: checkCell(gpu, { batch: 3, input: 5, hidden: 33, seed, dtype: 'bf16', path }).error, bound: BOUND.bf16 });
    const roll = checkRollout(gpu, { batch: 32, state: 16, hidden: 64, steps: 5, ensemble: 5, seed, path });
    results.push(
      { name: `${path} gruRollout ensemble 5, 5 steps: states`, error: roll.states, bound: BOUND.f32 },
      { name: `${path} gruRollout: hidden`, error: roll.hidden, bound: BOUND.f32 },
    );
    const stacked = checkRollout(gpu, { batch: 7, state: 9, hidden: 40, steps: 3, layers: 2, seed, path });
    results.push({ name: `${path} gruRollout 2 layers: states`, error: stacked.states, bound: BOUND.f32 });
    // The persistent and sequence paths are one launch: no graph.
    if (path !== 'persistent' && path !== 'sequence') results.push(...graphReplay(gpu, seed, path));
  }
  return results;
}

/**
 * A graph-recorded path with the same buffers three times: eager, then captured and launched,
 * then replayed from the cache; every result must match the reference (outputs poisoned in between).
 */
function graphReplay(gpu: GpuCompute, seed: number, path: GruPath): NamedResult[] {
  {
    const B = 7, T = 5, I = 9, H = 65;
    const layer = randomLayer(gpu, I, H, seed, 'f32');
    const x = randomTensor(gpu, [B, T, I], seed + 1, 'f32');
    const h0 = randomTensor(gpu, [B, H], seed + 2, 'f32');
    const ref = refGru(layer.members, nest3(x.values, B, T, I), [nest3(h0.values, 1, B, H)[0]!]);
    const want = flat(ref.output);
    const results: NamedResult[] = [];
    for (const run of ['eager', 'captured', 'replayed']) {
      const r = gpu.gru(x.tensor, h0.tensor, layer.weights, { path });
      results.push({ name: `${path} graph ${run}`, error: relError(read(r.output), want), bound: BOUND.f32 });
      // Poison the freed output so a replay that skipped writing it would show.
      gpu.backend.fill(r.output.view, Number.NaN);
      r.output.dispose();
      r.hidden.dispose();
    }
    for (const t of [...layer.tensors, x.tensor, h0.tensor]) t.dispose();
    return results;
  }
}
