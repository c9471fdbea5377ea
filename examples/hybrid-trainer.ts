/**
 * The hybrid-trainer pipeline at batch 32, on whichever device GpuCompute picks (CUDA, else the CPU):
 *
 *   encode_state       observations [32, 64] → linear 64 → 128 + ReLU → latent states [32, 128]
 *   predict            an ensemble of 5 GRUs (hidden 256) rolled out 10 steps from those states,
 *                      each step's hidden state projected back to a 128-d state and fed in again
 *   compress_residuals residuals of the ensemble-mean prediction against the observed trajectory,
 *                      [32·10, 128], compressed by a rank-8 truncated SVD
 *   apply_corrections  prediction + the rank-8 residual reconstruction (elementwise add)
 *
 * Each stage's time is printed, measured on the device it ran on: the first pass apart (on a GPU
 * it compiles, or loads from the kernel cache, and tunes every kernel it uses), then the median
 * of 30 passes after 10 warm-up passes (`--warmup N` for N). Then encode and predict are recorded
 * once with `gpu.capture` and replayed (one CUDA graph launch; an eager run elsewhere), and the
 * median replay is printed next to the same stages run op by op.
 *
 * Ten warm-ups leave most of the library's JavaScript unoptimised (V8 optimises a function after
 * some hundreds of calls), so on a GPU the host's share of a pass keeps falling for about a
 * thousand passes; `--warmup 1000` measures that state.
 *
 * Run: `npx tsx examples/hybrid-trainer.ts [--backend cpu|cuda|webgpu] [--warmup N] [--json]`
 * (`--json` adds a last line with every figure, which `bench/pipeline.ts` reads).
 */
import { performance } from 'node:perf_hooks';
import { GpuCompute, type Tensor } from '../src/compute/index.js';

const BATCH = 32;
const OBS = 64;
const STATE = 128;
const HIDDEN = 256;
const MEMBERS = 5;
const STEPS = 10;
const RANK = 8;

const TIMED_PASSES = 30;

const argument = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const backend = (argument('--backend') ?? 'auto') as 'auto' | 'cpu' | 'cuda' | 'webgpu';
const WARMUP_PASSES = Number(argument('--warmup') ?? 10);
if (!Number.isSafeInteger(WARMUP_PASSES) || WARMUP_PASSES < 0) throw new Error(`--warmup takes a whole number of passes, got ${argument('--warmup')}`);
const json = process.argv.includes('--json');
const gpu = await GpuCompute.create({ backend });
const info = gpu.info;
console.log(`device: ${info.deviceName} (${info.backend}, ${info.platform})`);

// Model parameters (PyTorch's default init scale) and one batch of data.
const scale = (fanIn: number) => ({ std: 1 / Math.sqrt(fanIn) });
const encoder = { weight: gpu.randn([STATE, OBS], { seed: 1, ...scale(OBS) }), bias: gpu.randn([STATE], { seed: 2, ...scale(OBS) }) };
const ensemble = {
  wIh: gpu.randn([MEMBERS, 3 * HIDDEN, STATE], { seed: 3, ...scale(HIDDEN) }),
  wHh: gpu.randn([MEMBERS, 3 * HIDDEN, HIDDEN], { seed: 4, ...scale(HIDDEN) }),
  bIh: gpu.randn([MEMBERS, 3 * HIDDEN], { seed: 5, ...scale(HIDDEN) }),
  bHh: gpu.randn([MEMBERS, 3 * HIDDEN], { seed: 6, ...scale(HIDDEN) }),
};
const head = { weight: gpu.randn([MEMBERS, STATE, HIDDEN], { seed: 7, ...scale(HIDDEN) }), bias: gpu.randn([MEMBERS, STATE], { seed: 8, std: 0.01 }) };
const observations = gpu.randn([BATCH, OBS], { seed: 9 });
const observedTrajectory = gpu.randn([BATCH, STEPS, STATE], { seed: 10, std: 0.5 });

/** Runs `fn` and returns its result with the milliseconds it took on the device. */
function timed<T>(fn: () => T): [T, number] {
  gpu.synchronize();
  const start = performance.now();
  const result = fn();
  gpu.synchronize();
  return [result, performance.now() - start];
}

interface PipelineResult {
  times: Record<string, number>;
  corrected: Tensor;
  energy: number;
}

function pipeline(): PipelineResult {
  const times: Record<string, number> = {};
  const [latent, tEncode] = timed(() => gpu.linear(observations, encoder.weight, encoder.bias, 'relu'));
  times.encode_state = tEncode;

  const [rollout, tPredict] = timed(() => gpu.gruRollout(latent, undefined, ensemble, { steps: STEPS, outputProjection: head }));
  times.predict = tPredict;

  const prediction = gpu.mean(rollout.states, 0); // ensemble mean [32, 10, 128]
  const [compressed, tCompress] = timed(() => {
    const residuals = gpu.sub(observedTrajectory, prediction);
    const matrix = residuals.reshape([BATCH * STEPS, STATE]);
    residuals.dispose();
    const { u, s, v } = gpu.svd(matrix, { rank: RANK });
    const us = gpu.mul(u, s); // u·diag(s)
    const lowRank = gpu.matmul(us, v).reshape([BATCH, STEPS, STATE]);
    const energy = keptEnergy(s, matrix);
    for (const t of [matrix, u, s, v, us]) t.dispose();
    return { lowRank, energy };
  });
  times.compress_residuals = tCompress;

  const [corrected, tApply] = timed(() => gpu.add(prediction, compressed.lowRank));
  times.apply_corrections = tApply;

  for (const t of [latent, rollout.states, rollout.hidden, prediction, compressed.lowRank]) t.dispose();
  return { times, corrected, energy: compressed.energy };
}

/** Σ s² / Σ m², computed on the device: one number read back. */
function keptEnergy(s: Tensor, m: Tensor): number {
  return gpu.scope(() => gpu.div(gpu.sum(gpu.mul(s, s)), gpu.sum(gpu.mul(m, m))).toArraySync()[0]!);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const [first, firstMs] = timed(() => pipeline());
first.corrected.dispose();
console.log(`first pass: ${firstMs.toFixed(1)} ms${info.backend === 'cpu' ? '' : ' (kernel compiles or cache loads, and tuning, dominate it)'}`);

for (let i = 0; i < WARMUP_PASSES; i++) pipeline().corrected.dispose();
const passes: PipelineResult[] = [];
const totals: number[] = [];
for (let i = 0; i < TIMED_PASSES; i++) {
  const [result, ms] = timed(() => pipeline());
  passes.push(result);
  totals.push(ms);
  if (i < TIMED_PASSES - 1) result.corrected.dispose();
}
const { corrected, energy } = passes.at(-1)!;
const summary: Record<string, number> = { 'first pass': firstMs };
for (const stage of Object.keys(passes[0]!.times)) summary[stage] = median(passes.map((p) => p.times[stage]!));
summary['sum of the stages'] = median(passes.map((p) => Object.values(p.times).reduce((a, b) => a + b, 0)));
summary['whole pass'] = median(totals);
console.log(`\nstage timings at batch ${BATCH} on ${info.deviceName}, median of ${TIMED_PASSES} passes after ${WARMUP_PASSES} warm-up passes:`);
for (const [name, ms] of Object.entries(summary)) if (name !== 'first pass') console.log(`  ${name.padEnd(20)} ${ms.toFixed(3).padStart(10)} ms`);
const values = corrected.toArraySync() as Float32Array;
console.log(`\ncorrected trajectory ${corrected.toString()}: first values ${Array.from(values.slice(0, 4), (v) => v.toFixed(4)).join(', ')}`);
console.log(`rank-${RANK} SVD keeps ${(100 * energy).toFixed(1)}% of the residual energy`);
corrected.dispose();

// encode + predict + the ensemble mean, recorded once and replayed.
const forward = (obs: Tensor) => {
  const latent = gpu.linear(obs, encoder.weight, encoder.bias, 'relu');
  const rollout = gpu.gruRollout(latent, undefined, ensemble, { steps: STEPS, outputProjection: head });
  return gpu.mean(rollout.states, 0);
};
const captured = gpu.capture(forward, [observations]);
const replays: number[] = [];
const eagerRuns: number[] = [];
for (let i = 0; i < WARMUP_PASSES + TIMED_PASSES; i++) {
  const [replayed, replayMs] = timed(() => captured(observations));
  const [eager, eagerMs] = timed(() => gpu.scope(() => forward(observations)));
  if (i === 0) {
    const a = replayed.toArraySync() as Float32Array;
    const b = eager.toArraySync() as Float32Array;
    const worst = a.reduce((m, v, j) => Math.max(m, Math.abs(v - b[j]!)), 0);
    if (!(worst <= 1e-5)) throw new Error(`the replayed prediction differs from the eager one by ${worst}`);
  }
  if (i >= WARMUP_PASSES) {
    replays.push(replayMs);
    eagerRuns.push(eagerMs);
  }
  replayed.dispose();
  eager.dispose();
}
console.log(
  `\nencode + predict ${captured.graphed ? 'as one captured CUDA graph' : 'through gpu.capture (no graphs on this backend: run eagerly)'}: ` +
    `${median(replays).toFixed(3)} ms a call, against ${median(eagerRuns).toFixed(3)} ms op by op (medians of ${TIMED_PASSES})`,
);
summary['encode + predict, replayed'] = median(replays);
summary['encode + predict, op by op'] = median(eagerRuns);
captured.dispose();
gpu.dispose();
if (json) console.log(JSON.stringify({ device: info.deviceName, backend: info.backend, ...summary }));
