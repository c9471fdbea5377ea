/**
 * `npm run bench [-- name...]`: runs the benchmarks, each in its own process so one's device
 * state cannot colour another's figures. Without names: all of them where a CUDA GPU answers,
 * and none (saying why) where none does. Named CUDA benches are skipped without a GPU; `cpu`
 * runs everywhere. Exits 1 when a bench fails, 2 for an unknown bench name.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { probeCuda } from '../src/compute/cuda/probe.js';
import { tsxCommand } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Bench name → script and whether it needs a CUDA GPU, in the order `npm run bench` runs them. */
const benches: Record<string, { script: string; cuda: boolean }> = {
  launch: { script: 'launch.ts', cuda: true },
  ops: { script: 'ops.ts', cuda: true },
  matmul: { script: 'matmul.ts', cuda: true },
  attention: { script: 'attention.ts', cuda: true },
  gru: { script: 'gru.ts', cuda: true },
  svd: { script: 'svd.ts', cuda: true },
  cpu: { script: 'cpu.ts', cuda: false },
};

const usage = `Usage: npm run bench [-- <name>...]   names: ${Object.keys(benches).join(', ')} (default: all)`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(usage);
  process.exit(0);
}
const unknown = args.filter((a) => !(a in benches));
if (unknown.length > 0) {
  console.error(`unknown bench ${unknown.map((u) => `'${u}'`).join(', ')}\n${usage}`);
  process.exit(2);
}

const { backend: cuda, devices } = probeCuda({ freeMemory: false });
if (!cuda.available && args.length === 0) {
  console.log(`No CUDA GPU here (${cuda.reason}); the benchmarks need one, so none ran.`);
  console.log('`npm run bench -- cpu` runs the CPU backend\'s benchmark, which needs none.');
  process.exit(0);
}
if (cuda.available) console.log(`CUDA ${cuda.driverVersion} with ${devices.map((d) => d.info?.deviceName ?? 'unknown').join(', ')}`);

const selected = args.length > 0 ? [...new Set(args)] : Object.keys(benches);
const outcomes: { name: string; outcome: string; seconds: number }[] = [];
for (const name of selected) {
  const bench = benches[name]!;
  const script = join(here, bench.script);
  if (!existsSync(script)) {
    outcomes.push({ name, outcome: `not present (${bench.script})`, seconds: 0 });
    continue;
  }
  if (bench.cuda && !cuda.available) {
    outcomes.push({ name, outcome: 'skipped: no CUDA GPU', seconds: 0 });
    continue;
  }
  console.log(`\n=== bench ${name} ===`);
  const started = performance.now();
  const { command, args: childArgs } = tsxCommand(script);
  const result = spawnSync(command, childArgs, { stdio: 'inherit' });
  const seconds = (performance.now() - started) / 1000;
  const outcome = result.error ? `failed to start: ${result.error.message}` : result.status === 0 ? 'ok' : `failed (exit ${result.status ?? result.signal})`;
  outcomes.push({ name, outcome, seconds });
}

console.log('\n=== summary ===');
for (const o of outcomes) console.log(`${o.name.padEnd(8)} ${o.outcome}${o.seconds ? ` in ${o.seconds.toFixed(1)} s` : ''}`);
if (outcomes.some((o) => o.outcome.startsWith('failed'))) process.exitCode = 1;
