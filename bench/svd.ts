/**
 * Truncated SVD benchmark: `gpu.svd` against torch.svd_lowrank (`bench/anchors/svd.py`) in the
 * same run, on the same matrices (written to a temporary file for the anchor), with the same
 * sketch width q = rank + oversample and niter = powerIterations: 4096×4096 and 8192×1024 at
 * rank 32 and 128, oversample 10, 2 power iterations. The whole call is timed, host steps
 * included: events around one call at a time (each call synchronizes inside), median after a
 * warm-up that also runs the matmul autotuner. Both sides' relative residual
 * ‖A − U·diag(S)·V‖_F / ‖A‖_F is printed to show they did the same work; ours is checked to be
 * within 1% of torch's. Also times the host route (CholeskyQR factors and the q×q core on the
 * host) against the default device route (cuSOLVER), and the host share of the former.
 *
 * Run: `tsx bench/svd.ts` on a machine with a CUDA GPU (python3 with torch and numpy for the
 * anchor). Writes bench/results/svd.{json,svg}.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { coreSvd } from '../src/compute/linalg/core-svd.js';
import { choleskyStep } from '../src/compute/linalg/guarded-cholesky.js';
import { svd, type SvdOptions } from '../src/compute/svd-op.js';
import { Tensor } from '../src/compute/tensor.js';
import { DeviceTimer } from './device-timer.js';
import { median, runPython, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: process.env.GPUCOMPUTE_BENCH_DEBUG ? 'debug' : 'warn' });
const be = gpu.backend as CudaBackend;
const info = be.info();
console.log(`device: ${info.deviceName} (${info.platform})`);
const timer = new DeviceTimer(be.context, be.stream);

const OVERSAMPLE = 10;
const NITER = 2;
const shapes = [
  [4096, 4096],
  [8192, 1024],
] as const;
const ranks = [32, 128];

/** ‖A − U·diag(S)·V‖_F / ‖A‖_F on the device. */
function relativeResidual(a: Tensor<'f32'>, u: Tensor<'f32'>, s: Tensor<'f32'>, v: Tensor<'f32'>): number {
  using us = gpu.mul(u, s);
  using approx = gpu.matmul(us, v, { precision: 'highest' });
  using diff = gpu.sub(a, approx);
  using diff2 = gpu.mul(diff, diff);
  using a2 = gpu.mul(a, a);
  using num = gpu.sum(diff2);
  using den = gpu.sum(a2);
  return Math.sqrt(num.toArraySync()[0]! / den.toArraySync()[0]!);
}

/**
 * One call with Tensor.toArraySync wrapped: the time spent waiting for the device there (and
 * copying q×q results back), so the rest of the wall time is host work and launches.
 */
function profile(call: () => void): { wallMs: number; syncMs: number; syncs: number } {
  const original = Tensor.prototype.toArraySync;
  let syncMs = 0;
  let syncs = 0;
  Tensor.prototype.toArraySync = function (this: Tensor) {
    const t0 = performance.now();
    try {
      return original.call(this);
    } finally {
      syncMs += performance.now() - t0;
      syncs++;
    }
  } as typeof original;
  try {
    gpu.synchronize();
    const t0 = performance.now();
    call();
    gpu.synchronize();
    return { wallMs: performance.now() - t0, syncMs, syncs };
  } finally {
    Tensor.prototype.toArraySync = original;
  }
}

/** Median ms of `fn` alone on the host. */
function hostMs(fn: () => void, reps = 7): number {
  fn();
  const samples: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

const dir = mkdtempSync(join(tmpdir(), 'gpucompute-svd-'));
const cases: { key: string; path: string; m: number; n: number; rank: number; oversample: number; niter: number }[] = [];
const ours = new Map<string, { ms: number; residual: number }>();
const inputs: Tensor<'f32'>[] = [];
try {
  for (const [m, n] of shapes) {
    const a = gpu.randn([m, n], { seed: m + n });
    inputs.push(a);
    const path = join(dir, `a-${m}x${n}.f32`);
    const host = a.toArraySync();
    writeFileSync(path, new Uint8Array(host.buffer, host.byteOffset, host.byteLength));
    for (const rank of ranks) {
      const key = `${m}x${n}-r${rank}`;
      const options: SvdOptions = { rank, oversample: OVERSAMPLE, powerIterations: NITER, seed: 1 };
      const call = () => {
        const r = gpu.svd(a, options);
        r.u.dispose();
        r.s.dispose();
        r.v.dispose();
      };
      const us = timer.time(call, { warmup: 2, targetMs: 0, reps: 9 });
      const hostRoute = () => {
        const r = svd(gpu, a, options, 'host');
        r.u.dispose();
        r.s.dispose();
        r.v.dispose();
      };
      const hostRouteUs = timer.time(hostRoute, { warmup: 1, targetMs: 0, reps: 5 });
      console.log(`${key}: dense steps on ${be.denseLinalg()?.name ?? 'the host (no cuSOLVER)'}: ${(us / 1000).toFixed(2)} ms; host route (CholeskyQR + f64 core on the host) ${(hostRouteUs / 1000).toFixed(2)} ms`);
      const r = gpu.svd(a, options);
      const residual = relativeResidual(a, r.u, r.s, r.v);
      r.u.dispose();
      r.s.dispose();
      r.v.dispose();
      ours.set(key, { ms: us / 1000, residual });
      cases.push({ key, path, m, n, rank, oversample: OVERSAMPLE, niter: NITER });
      const q = rank + OVERSAMPLE;
      const gram = new Float64Array(q * q);
      for (let i = 0; i < q; i++) for (let j = 0; j < q; j++) gram[i * q + j] = (i === j ? 1 : 0) + 0.01 * Math.sin(i * 7 + j * 13 + i * j);
      const r0 = new Float64Array(q * q);
      for (let i = 0; i < q; i++) for (let j = i; j < q; j++) r0[i * q + j] = (i === j ? q - i : 0) + Math.cos(i + 3 * j);
      const p = profile(call);
      console.log(`${key}: profile: wall ${p.wallMs.toFixed(2)} ms, waiting in ${p.syncs} reads ${p.syncMs.toFixed(2)} ms, the rest (host work, launches) ${(p.wallMs - p.syncMs).toFixed(2)} ms`);
      const cholMs = hostMs(() => choleskyStep(gram, q));
      const coreMs = hostMs(() => coreSvd(r0, q, rank));
      console.log(`${key}: ours ${(us / 1000).toFixed(2)} ms, residual ${residual.toExponential(4)}; host: one CholeskyQR factor ${cholMs.toFixed(2)} ms, core SVD ${coreMs.toFixed(2)} ms (q = ${q})`);
    }
  }
  const torch = runPython(join(here, 'anchors', 'svd.py'), [JSON.stringify(cases)], 600_000) as
    | { torch: string; ms: Record<string, number>; residual: Record<string, number> }
    | undefined;
  const rows: BenchRow[] = [];
  let wrong = 0;
  for (const c of cases) {
    const o = ours.get(c.key)!;
    const anchorMs = torch?.ms[c.key];
    const anchorResidual = torch?.residual[c.key];
    if (anchorResidual !== undefined && !(o.residual <= anchorResidual * 1.01)) {
      console.log(`WRONG RESULT: ${c.key}: residual ${o.residual} is more than 1% above torch's ${anchorResidual}`);
      wrong++;
    }
    rows.push({
      op: `svd rank ${c.rank}`,
      dtype: 'f32',
      size: `${c.m}x${c.n}`,
      unit: 'ms',
      ours: o.ms,
      ...(anchorMs === undefined ? {} : { anchor: anchorMs, anchorName: 'torch.svd_lowrank' }),
      note: `q=${c.rank + c.oversample}, niter=${c.niter}; residual ours ${o.residual.toExponential(3)}${anchorResidual === undefined ? '' : `, torch ${anchorResidual.toExponential(3)}`}${anchorMs === undefined ? '' : `; speedup ${(anchorMs / o.ms).toFixed(2)}x`}`,
    });
  }
  writeReport('svd', rows, { meta: { device: info.deviceName, platform: info.platform, torch: torch?.torch } });
  console.log('\nsummary (speedup = torch ms / ours ms):');
  for (const c of cases) {
    const o = ours.get(c.key)!;
    const t = torch?.ms[c.key];
    console.log(`${c.key}: ours ${o.ms.toFixed(2)} ms, torch ${t?.toFixed(2) ?? '-'} ms, speedup ${t ? (t / o.ms).toFixed(2) : '-'}x`);
  }
  if (wrong > 0) process.exitCode = 1;
} finally {
  for (const a of inputs) a.dispose();
  rmSync(dir, { recursive: true, force: true });
  gpu.dispose();
}
