/**
 * Truncated SVD benchmark: `gpu.svd` against torch.svd_lowrank (`bench/anchors/svd.py`) in the
 * same run, on the same matrices (written to a temporary file for the anchor), with the same
 * sketch width q = rank + oversample and niter = powerIterations: 4096×4096 and 8192×1024 at
 * rank 32 and 128, oversample 10, 2 power iterations. The whole call is timed, host steps
 * included: events around one call at a time (each call synchronizes inside), median after a
 * warm-up that also runs the matmul autotuner. Both sides' relative residual
 * ‖A − U·diag(S)·V‖_F / ‖A‖_F is printed to show they did the same work; ours is checked to be
 * within 1% of torch's. Also times every route (`svd-op.ts`'s SvdRoute: 'device' = CholeskyQR2
 * on cuBLAS/cuSOLVER, 'householder' = cuSOLVER geqrf/orgqr, 'host' = CholeskyQR factors and the
 * q×q core on the host) whatever the default, and the host share of the default.
 *
 * `GPUCOMPUTE_SVD_STAGES=1` adds a stage breakdown of the two device routes: an event recorded
 * at every stage boundary the call reports (SvdStageProbe), device ms per stage summed over the
 * call (a stage whose queueing the device outran shows the host's time as well), host ms per
 * stage from performance.now(), medians over 5 calls; the pre-polish max|XᵀX − I| of U, V; the
 * core's candidates (gesvdj against syevd of the Gram matrix); and the host/device crossover
 * in q (both routes at q = 48–80 on both shapes).
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
import { svd, type SvdOptions, type SvdRoute, type SvdStageProbe } from '../src/compute/ops/svd.js';
import { Event } from '../src/driver/index.js';
import { CusolverHandle } from '../src/cusolver/handle.js';
import { Tensor } from '../src/compute/tensor/tensor.js';
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

const STAGES = process.env.GPUCOMPUTE_SVD_STAGES === '1';
const stageEvents = STAGES ? Array.from({ length: 96 }, () => Event.create(be.context)) : [];

/** Per-stage device and host ms of one device-route call (see the file comment). */
function stageTimes(a: Tensor<'f32'>, options: SvdOptions, route: SvdRoute): { device: Map<string, number>; host: Map<string, number>; notes: string[] } {
  const labels = ['finite check (max, min, read-back)'];
  const hostStamps: number[] = [];
  const notes: string[] = [];
  let used = 0;
  const stamp = () => {
    stageEvents[used++]!.record(be.stream);
    hostStamps.push(performance.now());
  };
  const probe: SvdStageProbe = {
    mark: (stage) => {
      stamp();
      labels.push(stage);
    },
    orthonormality: (d) => notes.push(`max|XᵀX − I| ${d.toExponential(2)}`),
    fallback: (reason) => notes.push(`FALLBACK: ${reason}`),
  };
  gpu.synchronize();
  stamp();
  const r = svd(gpu.session, a, options, route, probe);
  gpu.synchronize();
  r.u.dispose();
  r.s.dispose();
  r.v.dispose();
  const device = new Map<string, number>();
  const host = new Map<string, number>();
  for (let i = 1; i < used; i++) {
    const label = labels[i]!;
    device.set(label, (device.get(label) ?? 0) + stageEvents[i]!.elapsedMs(stageEvents[i - 1]!));
    host.set(label, (host.get(label) ?? 0) + hostStamps[i]! - hostStamps[i - 1]!);
  }
  return { device, host, notes };
}

/** Prints the median stage breakdown of `calls` calls. */
function printStages(key: string, a: Tensor<'f32'>, options: SvdOptions, route: SvdRoute, calls = 5): void {
  stageTimes(a, options, route);
  const runs = Array.from({ length: calls }, () => stageTimes(a, options, route));
  const labels = [...runs[0]!.device.keys()];
  const total = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
  console.log(`${key} stages, route ${route}: device ${median(runs.map((r) => total(r.device))).toFixed(3)} ms, host ${median(runs.map((r) => total(r.host))).toFixed(3)} ms; ${runs[0]!.notes.join('; ')}`);
  for (const label of labels) {
    const dev = median(runs.map((r) => r.device.get(label) ?? 0));
    const hst = median(runs.map((r) => r.host.get(label) ?? 0));
    console.log(`  ${label.padEnd(36)} device ${dev.toFixed(3).padStart(7)} ms   host ${hst.toFixed(3).padStart(7)} ms`);
  }
}

/**
 * The core's candidates on a q×q matrix: gesvdj (what the device route runs) against syevd of
 * the q×q Gram matrix (half the size of problem, but squaring the condition number), median µs.
 */
function coreCandidates(q: number): void {
  const linalg = be.denseLinalg();
  if (!linalg) return;
  using solver = new CusolverHandle(be.context);
  using x = gpu.randn([4096, q], { seed: q });
  using source = gpu.matmul(x, x, { precision: 'highest', transA: true });
  using work = gpu.empty([q, q]);
  using left = gpu.empty([q, q]);
  using right = gpu.empty([q, q]);
  using values = gpu.empty([q]);
  using info = gpu.zeros([1], 'i32');
  const gesvdjUs = timer.time(() => {
    be.copy(work.view, source.view);
    linalg.svd(work.view, left.view, values.view, right.view, q, info.view);
  });
  const syevdUs = timer.time(() => {
    be.copy(work.view, source.view);
    const scratch: { release(): void }[] = [];
    solver.symmetricEigen(be.stream.handle, q, be.address(work.view), be.address(values.view), be.address(info.view), (bytes) => {
      const w = be.scratch(bytes);
      scratch.push(w);
      return w.address;
    });
    for (const w of scratch) w.release();
  });
  console.log(`core candidates at q = ${q}: gesvdj ${(gesvdjUs / 1000).toFixed(3)} ms, syevd of the Gram ${(syevdUs / 1000).toFixed(3)} ms (status ${info.toArraySync()[0]})`);
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
        const r = svd(gpu.session, a, options, 'host');
        r.u.dispose();
        r.s.dispose();
        r.v.dispose();
      };
      const hostRouteUs = timer.time(hostRoute, { warmup: 1, targetMs: 0, reps: 5 });
      const routeMs = (route: SvdRoute) =>
        timer.time(
          () => {
            const r = svd(gpu.session, a, options, route);
            r.u.dispose();
            r.s.dispose();
            r.v.dispose();
          },
          { warmup: 2, targetMs: 0, reps: 7 },
        ) / 1000;
      const choleskyMs = routeMs('device');
      const householderMs = routeMs('householder');
      console.log(
        `${key}: default ${(us / 1000).toFixed(2)} ms; routes: device CholeskyQR2 ${choleskyMs.toFixed(2)} ms, device Householder ${householderMs.toFixed(2)} ms, host (CholeskyQR + f64 core on the host) ${(hostRouteUs / 1000).toFixed(2)} ms (${be.denseLinalg()?.name ?? 'no cuSOLVER'})`,
      );
      if (STAGES) {
        printStages(key, a, options, 'device');
        printStages(key, a, options, 'householder');
      }
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
  if (STAGES) {
    for (const q of [42, 138]) coreCandidates(q);
    for (const [i, [m, n]] of shapes.entries()) {
      for (const q of [48, 56, 64, 80]) {
        const options: SvdOptions = { rank: q - OVERSAMPLE, oversample: OVERSAMPLE, powerIterations: NITER, seed: 1 };
        const at = (route: SvdRoute) =>
          timer.time(
            () => {
              const r = svd(gpu.session, inputs[i]!, options, route);
              r.u.dispose();
              r.s.dispose();
              r.v.dispose();
            },
            { warmup: 2, targetMs: 0, reps: 7 },
          ) / 1000;
        console.log(`crossover ${m}x${n} q = ${q}: host route ${at('host').toFixed(2)} ms, device route ${at('device').toFixed(2)} ms`);
      }
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
  for (const e of stageEvents) e.dispose();
  rmSync(dir, { recursive: true, force: true });
  gpu.dispose();
}
