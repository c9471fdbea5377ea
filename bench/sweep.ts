/**
 * Shape sweep: for each op family, shapes drawn from a seed (odd sizes and primes, tiny and huge
 * batches, every broadcast pattern, every reduction axis, skinny / K-heavy / batched-small
 * products, decode / GQA / padded / causal attention, GRU sizes), each checked against float64
 * on a sample of its output and then timed as a user calls it (public API, output allocated and
 * released per call), next to torch on the same shapes in the same run (`bench/anchors/sweep.py`).
 * Prints per family the minimum and median of ours/torch (speed: torch time / our time) and the
 * five worst shapes, and writes bench/results/sweep.json.
 *
 * Run: `tsx bench/sweep.ts [--seed N] [--cases N] [--quick] [--backend cuda|cpu|webgpu] [family...]`
 * on a machine with python3 and torch (CUDA anchors on a GPU backend, torch's CPU on `cpu`).
 * `--quick` caps each case at 2^20 elements and draws 6 shapes per family.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { DeviceTimer } from './device-timer.js';
import { median, runPython } from './report.js';
import { describe, FAMILIES, sweepCases, type SweepCase } from './sweep/cases.js';
import { prepareCase } from './sweep/prepare.js';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const option = (name: string) => {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv.splice(i, 2)[1];
};
const seed = Number(option('--seed') ?? 1);
const backend = (option('--backend') ?? 'cuda') as 'cuda' | 'cpu' | 'webgpu';
const quick = argv.includes('--quick');
const perFamily = Number(option('--cases') ?? (quick ? 6 : 24));
const families = argv.filter((a) => !a.startsWith('--'));

const gpu = await GpuCompute.create({ backend, logLevel: 'warn' });
const info = gpu.backend.info();
console.log(`device: ${info.deviceName} (${info.platform}); seed ${seed}, ${perFamily} shapes per family`);

const TIMING = { warmup: 2, targetMs: 10, reps: 5 };
/**
 * Wall milliseconds each case runs before it is timed, here and in the torch anchor: a first call
 * may compile or autotune for seconds, and an idle H200 drops to 345 MHz and takes 0.5–2 s to
 * come back (timed right after its tuning, a batched f16 product read 30 µs here and 11–14 µs
 * warm).
 */
const SETTLE_MS = 300;

/** Runs `fn` in synchronised batches of about a millisecond for {@link SETTLE_MS}. */
function settle(fn: () => void): void {
  const start = performance.now();
  let perCall = 1;
  while (performance.now() - start < SETTLE_MS) {
    const t = performance.now();
    const calls = Math.max(1, Math.min(1000, Math.floor(1 / perCall)));
    for (let i = 0; i < calls; i++) fn();
    gpu.synchronize();
    perCall = Math.max((performance.now() - t) / calls, 1e-3);
  }
}
const deviceTimer = backend === 'cuda' ? new DeviceTimer((gpu.backend as unknown as CudaBackend).context, (gpu.backend as unknown as CudaBackend).stream) : undefined;
/** Median µs per call: CUDA events on CUDA; elsewhere wall time of synchronized batches. */
function time(fn: () => void): number {
  if (deviceTimer) return deviceTimer.time(fn, TIMING);
  const batch = (iters: number) => {
    const t = performance.now();
    for (let i = 0; i < iters; i++) fn();
    gpu.synchronize();
    return ((performance.now() - t) * 1000) / iters;
  };
  for (let i = 0; i < TIMING.warmup; i++) batch(1);
  const iters = Math.max(1, Math.min(2000, Math.floor((TIMING.targetMs * 1000) / Math.max(batch(1), 1))));
  return median(Array.from({ length: TIMING.reps }, () => batch(iters)));
}

// The host path's JIT warmed before any case is timed, so the first family's tiny shapes do not pay for it.
gpu.scope(() => {
  const small = gpu.randn([64]);
  for (let i = 0; i < 2000; i++) gpu.exp(small).add(small).sum().dispose();
});
gpu.synchronize();

const cases = sweepCases(seed, { perFamily, maxElements: quick ? 2 ** 20 : 2 ** 26 }).filter((c) => families.length === 0 || families.includes(c.family));

interface Measured {
  c: SweepCase;
  us?: number;
  error?: number;
  tolerance?: number;
  failure?: string;
}
const measured: Measured[] = [];
for (const c of cases) {
  let prepared;
  try {
    prepared = prepareCase(gpu, c);
    const { error, tolerance } = prepared.check();
    const row: Measured = { c, error, tolerance };
    if (!(error <= tolerance)) row.failure = `error ${error.toExponential(2)} above ${tolerance.toExponential(2)}`;
    else {
      settle(prepared.run);
      row.us = time(prepared.run);
    }
    measured.push(row);
  } catch (e) {
    measured.push({ c, failure: `threw ${(e as Error).name}: ${(e as Error).message.split('\n')[0]}` });
  } finally {
    prepared?.dispose();
  }
  const last = measured.at(-1)!;
  console.log(`${c.key.padEnd(14)} ${c.dtype.padEnd(4)} ${describe(c).padEnd(48)} ${last.failure ?? `${last.us!.toFixed(1)} µs`}`);
}

const dir = mkdtempSync(join(tmpdir(), 'sweep-'));
const casesPath = join(dir, 'cases.json');
writeFileSync(casesPath, JSON.stringify(cases));
const anchor = runPython(join(here, 'anchors', 'sweep.py'), [casesPath, backend === 'cuda' || backend === 'webgpu' ? 'cuda' : 'cpu'], 1_800_000) as
  | { device: string; torch: string; us: Record<string, number>; failed: Record<string, string> }
  | undefined;
rmSync(dir, { recursive: true });

/** ours/torch as speed: torch's time over ours (above 1: we are faster). */
const ratioOf = (m: Measured) => (m.us !== undefined && anchor?.us[m.c.key] !== undefined ? anchor.us[m.c.key]! / m.us : undefined);

interface FamilySummary {
  family: string;
  cases: number;
  min: number;
  median: number;
  worst: { shape: string; dtype: string; ratio: number; oursUs: number; torchUs: number }[];
}
const summary: FamilySummary[] = [];
for (const family of FAMILIES) {
  const rows = measured.filter((m) => m.c.family === family);
  const rated = rows.map((m) => ({ m, ratio: ratioOf(m) })).filter((r): r is { m: Measured; ratio: number } => r.ratio !== undefined);
  if (rated.length === 0) continue;
  rated.sort((x, y) => x.ratio - y.ratio);
  summary.push({
    family,
    cases: rated.length,
    min: rated[0]!.ratio,
    median: median(rated.map((r) => r.ratio)),
    worst: rated.slice(0, 5).map(({ m, ratio }) => ({ shape: describe(m.c), dtype: m.c.dtype, ratio, oursUs: m.us!, torchUs: anchor!.us[m.c.key]! })),
  });
}

console.log(`\nours/torch (speed, ${anchor ? `torch ${anchor.torch} on ${anchor.device}` : 'no anchor'}), seed ${seed}:\n`);
console.log('| family | shapes | min | median |\n|---|---|---|---|');
for (const f of summary) console.log(`| ${f.family} | ${f.cases} | ${f.min.toFixed(2)}x | ${f.median.toFixed(2)}x |`);
for (const f of summary) {
  console.log(`\n${f.family}, five worst:`);
  for (const w of f.worst) console.log(`  ${w.ratio.toFixed(2)}x  ${w.dtype.padEnd(4)} ${w.shape.padEnd(48)} ours ${w.oursUs.toFixed(1)} µs, torch ${w.torchUs.toFixed(1)} µs`);
}
const failures = measured.filter((m) => m.failure);
for (const m of failures) console.log(`FAILED ${m.c.key} ${m.c.dtype} ${describe(m.c)}: ${m.failure}`);
for (const [key, why] of Object.entries(anchor?.failed ?? {})) console.log(`anchor failed ${key}: ${why}`);

const resultsDir = join(here, 'results');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(
  join(resultsDir, `sweep${backend === 'cuda' ? '' : `-${backend}`}.json`),
  JSON.stringify(
    {
      meta: { device: info.deviceName, platform: info.platform, seed, perFamily, torch: anchor?.torch, anchorDevice: anchor?.device, date: new Date().toISOString() },
      summary,
      cases: measured.map((m) => ({ key: m.c.key, family: m.c.family, dtype: m.c.dtype, shape: describe(m.c), spec: m.c.spec, oursUs: m.us, torchUs: anchor?.us[m.c.key], ratio: ratioOf(m), error: m.error, failure: m.failure })),
    },
    null,
    1,
  ),
);
gpu.dispose();
if (failures.length > 0) process.exitCode = 1;
