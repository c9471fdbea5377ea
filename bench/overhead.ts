/**
 * Host time per small op: what an app calling many small ops pays per call, against torch on
 * the same device in the same run (`bench/anchors/overhead.py`). Each case is an op on [32, 128]
 * f32 tensors (matmul [32,128]×[128,64], linear to 64 features with a bias), its result disposed
 * at once; the figure is the median over 7 loops of 2000 back-to-back calls of the loop's wall
 * time per call, the device synchronised before and after each loop, outside the timed part.
 * The kernels take 2–4 µs each, so the loop measures the host, not the device. Every case is
 * first checked against a float64 reference on fresh random inputs.
 *
 * Run: `tsx bench/overhead.ts [--backend cuda|webgpu|cpu]` (default: the best device). Writes
 * bench/results/overhead.{json,svg}.
 */
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { median, runPython, writeReport, type BenchRow } from './report.js';

const ITERS = 2000;
const REPS = 7;
const here = dirname(fileURLToPath(import.meta.url));
const backendArg = process.argv.indexOf('--backend');
const backend = backendArg >= 0 ? (process.argv[backendArg + 1] as 'cuda') : 'auto';
const gpu = await GpuCompute.create({ backend, logLevel: 'warn' });
const info = gpu.info;
console.log(`device: ${info.deviceName} (${info.backend}, ${info.platform})`);

const host = (t: Tensor) => Float64Array.from(t.toArraySync());
const x = gpu.randn([32, 128], { seed: Date.now() % 2 ** 31 });
const y = gpu.randn([32, 128], { seed: (Date.now() + 1) % 2 ** 31 });
const w = gpu.randn([128, 64], { seed: (Date.now() + 2) % 2 ** 31 });
const wl = gpu.randn([64, 128], { seed: (Date.now() + 3) % 2 ** 31 });
const bias = gpu.randn([64], { seed: (Date.now() + 4) % 2 ** 31 });
const [hx, hy, hw, hwl, hb] = [x, y, w, wl, bias].map(host) as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];

const rowsOf = (v: Float64Array, cols: number) => Array.from({ length: v.length / cols }, (_, r) => v.subarray(r * cols, (r + 1) * cols));
const product = (a: Float64Array, b: Float64Array, m: number, k: number, n: number, bT: boolean) =>
  Float64Array.from({ length: m * n }, (_, i) => {
    const r = Math.floor(i / n);
    const c = i % n;
    let s = 0;
    for (let j = 0; j < k; j++) s += a[r * k + j]! * (bT ? b[c * k + j]! : b[j * n + c]!);
    return s;
  });

interface Case {
  name: string;
  run: () => Tensor;
  reference: () => Float64Array;
}
const CASES: Case[] = [
  { name: 'add', run: () => gpu.add(x, y), reference: () => hx.map((v, i) => v + hy[i]!) },
  { name: 'mul by a number', run: () => gpu.mul(x, 2.5), reference: () => hx.map((v) => v * 2.5) },
  {
    name: 'softmax',
    run: () => gpu.softmax(x),
    reference: () =>
      Float64Array.from(
        rowsOf(hx, 128).flatMap((row) => {
          const m = Math.max(...row);
          const e = Array.from(row, (v) => Math.exp(v - m));
          const s = e.reduce((a, v) => a + v, 0);
          return e.map((v) => v / s);
        }),
      ),
  },
  { name: 'matmul', run: () => gpu.matmul(x, w), reference: () => product(hx, hw, 32, 128, 64, false) },
  { name: 'linear', run: () => gpu.linear(x, wl, bias), reference: () => product(hx, hwl, 32, 128, 64, true).map((v, i) => v + hb[i % 64]!) },
  { name: 'sum', run: () => gpu.sum(x, 1), reference: () => Float64Array.from(rowsOf(hx, 128), (row) => row.reduce((a, v) => a + v, 0)) },
];

function check(c: Case): void {
  const out = c.run();
  const got = out.toArraySync();
  out.dispose();
  const ref = c.reference();
  let num = 0;
  let den = 0;
  for (let i = 0; i < ref.length; i++) {
    num += (got[i]! - ref[i]!) ** 2;
    den += ref[i]! ** 2;
  }
  const err = Math.sqrt(num / den);
  if (got.length !== ref.length || !(err < 1e-5)) throw new Error(`${c.name}: relative error ${err} against float64`);
}

function hostMicros(run: () => Tensor): number {
  for (let i = 0; i < 1000; i++) run().dispose();
  const samples: number[] = [];
  for (let r = 0; r < REPS; r++) {
    gpu.synchronize();
    const start = performance.now();
    for (let i = 0; i < ITERS; i++) run().dispose();
    samples.push(((performance.now() - start) * 1000) / ITERS);
    gpu.synchronize();
  }
  return median(samples);
}

const torch = info.backend === 'cuda' ? (runPython(join(here, 'anchors', 'overhead.py'), [String(ITERS), String(REPS)]) as Record<string, number> | undefined) : undefined;
const rows: BenchRow[] = [];
for (const c of CASES) {
  check(c);
  const ours = hostMicros(c.run);
  const anchor = torch?.[c.name];
  rows.push({ op: c.name, dtype: 'f32', size: '[32, 128]', unit: 'us', ours, ...(anchor === undefined ? {} : { anchor, anchorName: `torch ${torch!.torch}` }) });
  console.log(`${c.name.padEnd(16)} ${ours.toFixed(2).padStart(7)} µs${anchor === undefined ? '' : `   torch ${anchor.toFixed(2).padStart(7)} µs   ratio ${(ours / anchor).toFixed(2)}`}`);
}
writeReport('overhead', rows, { meta: { device: info.deviceName, backend: info.backend, iters: ITERS, reps: REPS } });
gpu.dispose();
