/**
 * Trains the hybrid trainer's RSSM ensemble (an encoder, 5 GRUs and their heads; `rssm-model.ts`)
 * on synthetic trajectories of a known dynamical system, with AdamW, on whichever device
 * GpuCompute picks, and prints the loss curve and the time of a training step (forward, backward
 * through time, optimizer step). Each step draws a fresh batch. Exits 1 unless the loss falls by
 * at least 10x.
 *
 * Run: `npx tsx examples/train-rssm.ts [--backend cpu|cuda|webgpu] [--steps N] [--batch B] [--json]`
 */
import { performance } from 'node:perf_hooks';
import { AdamW, GpuCompute } from '../src/compute/index.js';
import { batch, initParameters, loss, OBS, parameterList } from './rssm-model.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const backend = arg('backend', 'auto') as 'auto' | 'cpu' | 'cuda' | 'webgpu';
const STEPS = Number(arg('steps', '200'));
const BATCH = Number(arg('batch', '32'));
const SEQ = 16;
const json = process.argv.includes('--json');

const gpu = await GpuCompute.create({ backend });
console.log(`device: ${gpu.info.deviceName} (${gpu.info.backend})`);
const params = initParameters(gpu, 1);
const optimizer = new AdamW(parameterList(params), { lr: 3e-3, weightDecay: 0 });

const losses: number[] = [];
const stepMs: number[] = [];
for (let step = 0; step < STEPS; step++) {
  const data = batch(BATCH, SEQ, 1000 + step);
  gpu.synchronize();
  const start = performance.now();
  const value = gpu.scope(() => {
    const inputs = gpu.tensor(data.inputs, [BATCH, SEQ, OBS]);
    const targets = gpu.tensor(data.targets, [BATCH, SEQ, OBS]);
    const l = loss(gpu, params, inputs, targets);
    l.backward();
    optimizer.step();
    optimizer.zeroGrad();
    return l.toArraySync()[0]!;
  });
  stepMs.push(performance.now() - start);
  losses.push(value);
  if (!Number.isFinite(value)) throw new Error(`step ${step}: the loss is ${value}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const first = losses[0]!;
const last = losses.slice(-10).reduce((a, b) => a + b, 0) / Math.min(10, losses.length);
console.log(`\nloss curve (${STEPS} steps of batch ${BATCH} × ${SEQ} steps, AdamW lr 3e-3):`);
const marks = [...new Set([0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, STEPS - 1].filter((s) => s < STEPS))];
const top = Math.log10(Math.max(...losses));
const bottom = Math.log10(Math.min(...losses));
for (const s of marks) {
  const bar = '#'.repeat(Math.max(1, Math.round((40 * (Math.log10(losses[s]!) - bottom)) / Math.max(top - bottom, 1e-9))));
  console.log(`  step ${String(s).padStart(5)}  loss ${losses[s]!.toExponential(3)}  ${bar}`);
}
const steady = stepMs.slice(Math.min(10, stepMs.length - 1));
console.log(`\nloss ${first.toExponential(3)} → ${last.toExponential(3)} (mean of the last 10): ${(first / last).toFixed(1)}x lower`);
console.log(`training step: ${median(steady).toFixed(2)} ms (median after 10 warm-up steps; data upload and the loss read-back included)`);
for (const t of parameterList(params)) t.dispose();
optimizer.dispose();
const summary = { device: gpu.info.deviceName, backend: gpu.info.backend, firstLoss: first, lastLoss: last, stepMs: median(steady) };
gpu.dispose();
if (json) console.log(JSON.stringify(summary));
if (!(first / last >= 10)) {
  console.error(`the loss fell only ${(first / last).toFixed(1)}x (at least 10x expected)`);
  process.exit(1);
}
