/**
 * The CPU backend against numpy (and torch on the CPU, where installed), in the same run: matmul
 * GFLOP/s, elementwise add and softmax GB/s at 2^24 elements, the hybrid-trainer pipeline in
 * steady state (median of many passes after warm-ups), and the GRU, attention (plain, causal, and
 * forward + backward) against torch. Each engine configuration runs in a
 * child process, since the BLAS's and the worker pool's thread counts are process-wide:
 * the default (BLAS where found, WebAssembly kernels, every core), WebAssembly only
 * (`GPUCOMPUTE_BLAS=0`), and one thread (`GPUCOMPUTE_CPU_THREADS=1`). Results are checked against
 * a float64 reference before they are timed.
 *
 * Run: `npm run bench -- cpu` (or `tsx bench/cpu.ts`). Writes bench/results/cpu.{json,svg}.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { attentionGradients } from '../src/compute/cpu/attention-backward.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { median, runPython, tsxCommand, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));

/** One engine configuration's figures, as the child prints them. */
interface Figures {
  engine: string;
  /** Seconds per call, by case. */
  seconds: Record<string, number>;
}

const MATMULS: [number, number, number][] = [
  [32, 64, 128],
  [1024, 1024, 1024],
  [2048, 2048, 2048],
];

/**
 * Median seconds per call of `fn` over `reps` batches of about `minTotal / reps` seconds, after
 * at least 0.1 s of warm-up calls (which also size the batches: one cold call would make the
 * batches of a microsecond op so short that the final wait dominates them). Ops return once
 * queued (the backend runs them like a stream), so every timing ends with `sync`.
 */
function medianSeconds(fn: () => void, sync: () => void, minTotal = 0.3, reps = 7): number {
  const warm = performance.now();
  let calls = 0;
  do {
    fn();
    sync();
    calls++;
  } while (performance.now() - warm < 100);
  const once = (performance.now() - warm) / 1000 / calls;
  const iters = Math.max(1, Math.floor(minTotal / reps / once));
  const samples: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    for (let i = 0; i < iters; i++) fn();
    sync();
    samples.push((performance.now() - t) / 1000 / iters);
  }
  return median(samples);
}

/** Throws unless `got` is within `tolerance` (relative to the largest reference magnitude) of `want`. */
function check(label: string, got: ArrayLike<number>, want: ArrayLike<number>, tolerance: number): void {
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
    scale = Math.max(scale, Math.abs(want[i]!));
  }
  if (!(worst <= tolerance * Math.max(scale, 1e-30))) throw new Error(`${label}: off the float64 reference by ${worst} (scale ${scale})`);
}

/** The child: this configuration's figures. */
async function measure(): Promise<Figures> {
  const gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'warn' });
  const seconds: Record<string, number> = {};
  const sync = () => gpu.synchronize();
  for (const [m, n, k] of MATMULS) {
    using a = gpu.randn([m, k], { seed: 1 });
    using b = gpu.randn([k, n], { seed: 2 });
    const [av, bv] = [a.toArraySync(), b.toArraySync()];
    {
      using c = gpu.matmul(a, b);
      const cv = c.toArraySync();
      // A sample of rows against float64.
      for (const i of [0, m >> 1, m - 1]) {
        const want = new Float64Array(n);
        for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) want[j]! += av[i * k + p]! * bv[p * n + j]!;
        check(`matmul ${m}x${n}x${k} row ${i}`, cv.subarray(i * n, (i + 1) * n), want, 1e-4);
      }
    }
    seconds[`matmul ${m}x${n}x${k}`] = medianSeconds(() => gpu.matmul(a, b).dispose(), sync);
  }
  const size = 1 << 24;
  using x = gpu.randn([size], { seed: 3 });
  using y = gpu.randn([size], { seed: 4 });
  {
    using s = gpu.add(x, y);
    const [xv, yv, sv] = [x.toArraySync(), y.toArraySync(), s.toArraySync()];
    check('add', sv.subarray(0, 4096), Array.from(xv.subarray(0, 4096), (v, i) => v + yv[i]!), 1e-7);
  }
  seconds['add 2^24'] = medianSeconds(() => gpu.add(x, y).dispose(), sync);
  using rows = x.reshape([4096, 4096]);
  {
    using p = gpu.softmax(rows);
    const row = rows.toArraySync().subarray(0, 4096);
    const max = Math.max(...row);
    const exps = Array.from(row, (v) => Math.exp(v - max));
    const total = exps.reduce((s, v) => s + v, 0);
    check('softmax row 0', p.toArraySync().subarray(0, 4096), exps.map((v) => v / total), 1e-5);
  }
  seconds['softmax 4096x4096'] = medianSeconds(() => gpu.softmax(rows).dispose(), sync);
  seconds['layerNorm 4096x4096'] = medianSeconds(() => gpu.layerNorm(rows).dispose(), sync);
  seconds['sum 2^24'] = medianSeconds(() => gpu.sum(x).dispose(), sync);
  seconds['hybrid pipeline'] = hybridPipeline(gpu);
  const gruInput = gpu.randn([32, 10, 128], { seed: 5 });
  const gruWeights = { wIh: gpu.randn([768, 128], { seed: 6, std: 1 / 16 }), wHh: gpu.randn([768, 256], { seed: 7, std: 1 / 16 }) };
  seconds['gru b32 in128 h256 T10'] = medianSeconds(() => {
    const r = gpu.gru(gruInput, undefined, gruWeights);
    r.output.dispose();
    r.hidden.dispose();
  }, sync);
  using q = gpu.randn([2, 8, 256, 64], { seed: 8 });
  using kv = gpu.randn([2, 8, 256, 64], { seed: 9 });
  using dOut = gpu.randn([2, 8, 256, 64], { seed: 10 });
  checkAttention(gpu, q, kv, dOut);
  seconds['attention B2 H8 S256 D64'] = medianSeconds(() => gpu.attention(q, kv, kv).dispose(), sync);
  seconds['attention B2 H8 S256 D64 causal'] = medianSeconds(() => gpu.attention(q, kv, kv, { causal: true }).dispose(), sync);
  const attentionStep = () => gpu.grad((a: Tensor, b: Tensor, c: Tensor) => gpu.sum(gpu.mul(gpu.attention(a, b, c), dOut)), [q, kv, kv]);
  seconds['attention forward + backward B2 H8 S256 D64'] = medianSeconds(() => {
    const { value, grads } = attentionStep();
    value.dispose();
    for (const t of grads) t.dispose();
  }, sync);
  for (const t of [gruInput, gruWeights.wIh, gruWeights.wHh]) t.dispose();
  gpu.dispose();
  return { engine: process.env.GPUCOMPUTE_BENCH_ENGINE ?? 'default', seconds };
}

/**
 * Attention's output and gradients (k and v the same values) of batch 0, head 0 against the float64
 * host computation of that head alone.
 */
function checkAttention(gpu: GpuCompute, q: Tensor, kv: Tensor, dOut: Tensor): void {
  const [S, D] = [q.shape[2]!, q.shape[3]!];
  const head = (t: Tensor) => Array.from(t.toArraySync().subarray(0, S * D));
  const [qh, kh, dh] = [head(q), head(kv), head(dOut)];
  const scale = 1 / Math.sqrt(D);
  const out = new Float64Array(S * D);
  const lse = new Float64Array(S);
  for (let i = 0; i < S; i++) {
    const scores = Array.from({ length: S }, (_, j) => scale * qh.slice(i * D, (i + 1) * D).reduce((acc, x, d) => acc + x * kh[j * D + d]!, 0));
    const max = Math.max(...scores);
    const total = scores.reduce((acc, x) => acc + Math.exp(x - max), 0);
    lse[i] = max + Math.log(total);
    scores.forEach((x, j) => {
      for (let d = 0; d < D; d++) out[i * D + d]! += (Math.exp(x - max) / total) * kh[j * D + d]!;
    });
  }
  {
    using o = gpu.attention(q, kv, kv);
    check('attention head 0', head(o), out, 1e-5);
  }
  const want = attentionGradients({ q: qh, k: kh, v: kh, out, lse, dOut: dh, batch: 1, heads: 1, kvHeads: 1, seqQ: S, seqK: S, headDim: D, scale, causal: false });
  const { value, grads } = gpu.grad((a: Tensor, b: Tensor, c: Tensor) => gpu.sum(gpu.mul(gpu.attention(a, b, c), dOut)), [q, kv, kv]);
  value.dispose();
  // Each input is a leaf of its own: k and v share storage but get their own gradients.
  check('attention dq head 0', head(grads[0]!), want.dq, 1e-4);
  check('attention dk head 0', head(grads[1]!), want.dk, 1e-4);
  check('attention dv head 0', head(grads[2]!), want.dv, 1e-4);
  for (const t of grads) t.dispose();
}

/** The hybrid trainer's pipeline (examples/hybrid-trainer.ts shapes): median seconds of a pass in steady state. */
function hybridPipeline(gpu: GpuCompute): number {
  const [B, OBS, S, H, E, T, R] = [32, 64, 128, 256, 5, 10, 8];
  const scale = (fanIn: number) => ({ std: 1 / Math.sqrt(fanIn) });
  const encoder = { weight: gpu.randn([S, OBS], { seed: 1, ...scale(OBS) }), bias: gpu.randn([S], { seed: 2, ...scale(OBS) }) };
  const ensemble = {
    wIh: gpu.randn([E, 3 * H, S], { seed: 3, ...scale(H) }),
    wHh: gpu.randn([E, 3 * H, H], { seed: 4, ...scale(H) }),
    bIh: gpu.randn([E, 3 * H], { seed: 5, ...scale(H) }),
    bHh: gpu.randn([E, 3 * H], { seed: 6, ...scale(H) }),
  };
  const head = { weight: gpu.randn([E, S, H], { seed: 7, ...scale(H) }), bias: gpu.randn([E, S], { seed: 8, std: 0.01 }) };
  const observations = gpu.randn([B, OBS], { seed: 9 });
  const observed = gpu.randn([B, T, S], { seed: 10, std: 0.5 });
  const pass = () => {
    const owned: Tensor[] = [];
    const keep = <X extends Tensor>(t: X) => (owned.push(t), t);
    const latent = keep(gpu.linear(observations, encoder.weight, encoder.bias, 'relu'));
    const rollout = gpu.gruRollout(latent, undefined, ensemble, { steps: T, outputProjection: head });
    keep(rollout.states);
    keep(rollout.hidden);
    const prediction = keep(gpu.mean(rollout.states, 0));
    const residuals = keep(gpu.sub(observed, prediction));
    const matrix = keep(residuals.reshape([B * T, S]));
    const { u, s, v } = gpu.svd(matrix, { rank: R });
    for (const t of [u, s, v]) keep(t);
    const us = keep(gpu.mul(u, s));
    const lowRank = keep(gpu.matmul(us, v));
    keep(gpu.add(prediction, lowRank.reshape([B, T, S]))).toArraySync();
    for (const t of owned) t.dispose();
  };
  for (let i = 0; i < 3; i++) pass();
  const samples: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    pass();
    samples.push((performance.now() - t) / 1000);
  }
  for (const t of [encoder.weight, encoder.bias, ensemble.wIh, ensemble.wHh, ensemble.bIh, ensemble.bHh, head.weight, head.bias, observations, observed]) t.dispose();
  return median(samples);
}

/** The parent: every configuration in its own process, the anchors, the table. */
function main(): void {
  const threads = availableParallelism();
  const configs: { engine: string; env: Record<string, string> }[] = [
    { engine: `BLAS + WebAssembly, ${threads} threads`, env: {} },
    { engine: `WebAssembly only, ${threads} threads`, env: { GPUCOMPUTE_BLAS: '0' } },
    { engine: 'BLAS + WebAssembly, 1 thread', env: { GPUCOMPUTE_CPU_THREADS: '1' } },
  ];
  const anchors = runPython(join(here, 'anchors', 'cpu.py'), [String(threads)], 600_000) as Record<string, number | string> | undefined;
  const rows: BenchRow[] = [];
  for (const config of configs) {
    const { command, args } = tsxCommand(fileURLToPath(import.meta.url), ['--measure']);
    const child = spawnSync(command, args, {
      encoding: 'utf8',
      env: { ...process.env, ...config.env, GPUCOMPUTE_BENCH_ENGINE: config.engine },
      maxBuffer: 16 * 2 ** 20,
    });
    const line = child.stdout.trim().split('\n').pop() ?? '';
    if (child.status !== 0) throw new Error(`${config.engine}: exit ${child.status}\n${child.stderr}`);
    const { seconds } = JSON.parse(line) as Figures;
    for (const [key, s] of Object.entries(seconds)) rows.push(row(key, s, config.engine, anchors));
  }
  const report = writeReport('cpu', rows, { meta: { anchors: anchors ?? null, threads } });
  console.log(report.markdown);
  const allocating = anchors?.['add 2^24, x + y'];
  if (typeof allocating === 'number') console.log(`numpy's x + y (allocating its result), 2^24 f32: ${((12 * 2 ** 24) / allocating / 1e9).toFixed(1)} GB/s`);
}

/** A case's row: its rate against the anchor's where numpy/torch has the same case (or numpy's add, for the bandwidth cases). */
function row(key: string, seconds: number, engine: string, anchors: Record<string, number | string> | undefined): BenchRow {
  const anchorSeconds = (name: string) => (typeof anchors?.[name] === 'number' ? (anchors[name] as number) : undefined);
  const matmul = /^matmul (\d+)x(\d+)x(\d+)$/.exec(key);
  if (matmul) {
    const flop = 2 * Number(matmul[1]) * Number(matmul[2]) * Number(matmul[3]);
    const anchor = anchorSeconds(key);
    return { op: key, dtype: engine, size: key, unit: 'TFLOP/s', ours: flop / seconds / 1e12, ...(anchor ? { anchor: flop / anchor / 1e12, anchorName: 'numpy' } : {}) };
  }
  const bandwidth: Record<string, number> = { 'add 2^24': 12 * 2 ** 24, 'softmax 4096x4096': 8 * 2 ** 24, 'layerNorm 4096x4096': 8 * 2 ** 24, 'sum 2^24': 4 * 2 ** 24 };
  if (key in bandwidth) {
    const add = anchorSeconds('add 2^24');
    // Every bandwidth case is held to numpy's add: the bar is "≥ 0.9x numpy's add".
    return { op: key, dtype: engine, size: key, unit: 'GB/s', ours: bandwidth[key]! / seconds / 1e9, ...(add ? { anchor: (12 * 2 ** 24) / add / 1e9, anchorName: "numpy's add" } : {}) };
  }
  const anchor = anchorSeconds(key);
  return { op: key, dtype: engine, size: key, unit: 'ms', ours: seconds * 1e3, ...(anchor ? { anchor: anchor * 1e3, anchorName: 'torch (CPU)' } : {}) };
}

if (process.argv.includes('--measure')) console.log(JSON.stringify(await measure()));
else main();
