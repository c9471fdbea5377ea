/**
 * What autograd costs on the host. (1) The no-grad path: each op through its public method (the
 * differentiable front-end of `autograd/ops/`, which checks whether to record) against the same
 * op through its raw front-end (`ops/`), on tensors that do not require grad; the anchor is the
 * raw front-end, so a ratio near 1 says the check costs nothing measurable. (2) Recording: the
 * same method with an input that requires grad (the node made and dropped with the result).
 * Every case runs once as a warm-up before any is timed; each figure is the median over 15 loops
 * of 2000 back-to-back calls of the wall time per call on [32, 128] f32 tensors, results disposed
 * at once, the device synchronised outside the timed part; the two loops of a pair alternate, so
 * drift hits both. A small MLP's training step (forward, backward, AdamW) is timed the same way,
 * against its forward alone.
 *
 * Run: `tsx bench/autograd.ts [--backend cuda|webgpu|cpu]` (default: the best device). Writes
 * bench/results/autograd.{json,svg}.
 */
import { performance } from 'node:perf_hooks';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { binary, unary } from '../src/compute/ops/elementwise.js';
import { linear } from '../src/compute/ops/matmul.js';
import { reduce } from '../src/compute/ops/reduce.js';
import { layerNorm } from '../src/compute/ops/rows.js';
import { AdamW } from '../src/compute/optim/adamw.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { median, writeReport, type BenchRow } from './report.js';

const ITERS = 2000;
const REPS = 15;
const backendArg = process.argv.indexOf('--backend');
const backend = backendArg >= 0 ? (process.argv[backendArg + 1] as 'cuda') : 'auto';
const gpu = await GpuCompute.create({ backend, logLevel: 'warn' });
const s = gpu.session;
console.log(`device: ${gpu.info.deviceName} (${gpu.info.backend}, ${gpu.info.platform})`);

const x = gpu.randn([32, 128], { seed: 1 });
const y = gpu.randn([32, 128], { seed: 2 });
const w = gpu.randn([64, 128], { seed: 3 });
const b = gpu.randn([64], { seed: 4 });
const leaf = x.detach().requiresGrad_();

/** µs per call of `run`, its result disposed at once: one loop. */
function loop(run: () => Tensor): number {
  gpu.synchronize();
  const start = performance.now();
  for (let i = 0; i < ITERS; i++) run().dispose();
  const elapsed = performance.now() - start;
  gpu.synchronize();
  return (elapsed * 1000) / ITERS;
}

/** Medians of alternating loops of `a` and `b`. */
function paired(a: () => Tensor, b: () => Tensor): [number, number] {
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < REPS; r++) {
    as.push(loop(a));
    bs.push(loop(b));
  }
  return [median(as), median(bs)];
}

const CASES: { name: string; raw: () => Tensor; method: () => Tensor; recorded: () => Tensor }[] = [
  { name: 'add', raw: () => binary(s, 'add', x, y, 'add'), method: () => gpu.add(x, y), recorded: () => gpu.add(leaf, y) },
  { name: 'mul by a number', raw: () => binary(s, 'mul', x, 2.5, 'mul'), method: () => gpu.mul(x, 2.5), recorded: () => gpu.mul(leaf, 2.5) },
  { name: 'tanh', raw: () => unary(s, 'tanh', x), method: () => gpu.tanh(x), recorded: () => gpu.tanh(leaf) },
  { name: 'sum over an axis', raw: () => reduce(s, 'sum', x, 1), method: () => gpu.sum(x, 1), recorded: () => gpu.sum(leaf, 1) },
  { name: 'layerNorm', raw: () => layerNorm(s, x, null, null), method: () => gpu.layerNorm(x), recorded: () => gpu.layerNorm(leaf) },
  { name: 'linear + bias', raw: () => linear(s, x, w, b), method: () => gpu.linear(x, w, b), recorded: () => gpu.linear(leaf, w, b) },
];

for (const c of CASES) for (const run of [c.raw, c.method, c.recorded]) loop(run);
const rows: BenchRow[] = [];
for (const c of CASES) {
  const [method, raw] = paired(c.method, c.raw);
  rows.push({ op: c.name, dtype: 'f32', size: 'no grad', unit: 'us', ours: method, anchor: raw, anchorName: 'raw front-end' });
  const [recorded, plain] = paired(c.recorded, c.method);
  rows.push({ op: c.name, dtype: 'f32', size: 'recording', unit: 'us', ours: recorded, anchor: plain, anchorName: 'no grad' });
}

// One training step of a 128 → 64 → 1 MLP on 32 rows: forward, backward, AdamW step.
const w1 = w.detach().requiresGrad_();
const w2 = gpu.randn([1, 64], { seed: 5 }).requiresGrad_();
const target = gpu.randn([32, 1], { seed: 6 });
const opt = new AdamW([w1, w2], { lr: 1e-3 });
const step = () =>
  gpu.scope(() => {
    const loss = gpu.mseLoss(gpu.linear(gpu.gelu(gpu.linear(x, w1)), w2), target);
    loss.backward();
    opt.step();
    opt.zeroGrad();
    return loss;
  });
const forward = () => gpu.noGrad(() => gpu.scope(() => gpu.mseLoss(gpu.linear(gpu.gelu(gpu.linear(x, w1)), w2), target)));
const [trained, evaluated] = paired(step, forward);
rows.push({ op: 'MLP step (forward, backward, AdamW)', dtype: 'f32', size: '32x128', unit: 'us', ours: trained, anchor: evaluated, anchorName: 'its forward alone' });
opt.dispose();

writeReport('autograd', rows, { meta: { device: gpu.info.deviceName, backend: gpu.kind } });
gpu.dispose();
