/**
 * The hybrid-trainer pipeline (`examples/hybrid-trainer.ts`) against torch eager doing the same
 * work (`bench/anchors/hybrid_trainer.py`) on the same device in the same run: per stage and for
 * the whole pass, steady state (medians of 30 passes after 10 warm-ups, each stage between device
 * synchronisations), and the captured replay of encode + predict; then both again after 1000
 * warm-up passes, when V8 has optimised the library's JavaScript. The example checks its replay
 * against its eager run, and its SVD keeps the energy the printout shows.
 *
 * Run: `tsx bench/pipeline.ts [--backend cuda|webgpu|cpu]`. Writes bench/results/pipeline.{json,svg}.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPython, tsxCommand, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const backendArg = process.argv.indexOf('--backend');
const passArgs = backendArg >= 0 ? ['--backend', process.argv[backendArg + 1]!] : [];

/** JIT-warm: after this many warm-up passes V8 has optimised the library's per-op code (ten leave most of it unoptimised). */
const WARM_PASSES = 1000;

/** Runs the example with `warmup` warm-up passes and returns its figures. */
function example(warmup: number): Record<string, number | string> {
  const { command, args } = tsxCommand(join(here, '..', 'examples', 'hybrid-trainer.ts'), [...passArgs, '--warmup', String(warmup), '--json']);
  const run = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  if (run.status !== 0) throw new Error(`examples/hybrid-trainer.ts failed (exit ${run.status ?? run.signal})`);
  const lines = run.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as Record<string, number | string>;
}

const rows: BenchRow[] = [];
let meta: Record<string, string | number> = {};
for (const warmup of [10, WARM_PASSES]) {
  const ours = example(warmup);
  const torch =
    ours.backend === 'cuda' ? (runPython(join(here, 'anchors', 'hybrid_trainer.py'), [String(warmup), '30'], 300_000) as Record<string, number | string> | undefined) : undefined;
  const suffix = warmup === 10 ? '' : ` (${warmup} warm-ups)`;
  console.log(`\n${`stage (ms), ${warmup} warm-up passes`.padEnd(34)} ${'ours'.padStart(9)} ${'torch eager'.padStart(12)}   torch / ours`);
  for (const [name, value] of Object.entries(ours)) {
    if (typeof value !== 'number' || name === 'first pass') continue;
    const anchor = typeof torch?.[name] === 'number' ? (torch[name] as number) : undefined;
    rows.push({ op: name + suffix, dtype: 'f32', size: 'batch 32', unit: 'ms', ours: value, ...(anchor === undefined ? {} : { anchor, anchorName: `torch ${torch!.torch} eager` }) });
    console.log(`${name.padEnd(34)} ${value.toFixed(3).padStart(9)} ${anchor === undefined ? '—'.padStart(12) : anchor.toFixed(3).padStart(12)}   ${anchor === undefined ? '' : `${(anchor / value).toFixed(2)}x`}`);
  }
  if (warmup === 10) meta = { device: String(ours.device), backend: String(ours.backend), firstPassMs: Number(ours['first pass']) };
}
writeReport('pipeline', rows, { meta });
