/**
 * The hybrid-trainer pipeline (`examples/hybrid-trainer.ts`) against torch eager doing the same
 * work (`bench/anchors/hybrid_trainer.py`) on the same device in the same run: per stage and for
 * the whole pass, steady state (medians of 30 passes after 10 warm-ups, each stage between device
 * synchronisations), and the captured replay of encode + predict. The example checks its replay
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

const { command, args } = tsxCommand(join(here, '..', 'examples', 'hybrid-trainer.ts'), [...passArgs, '--json']);
const run = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
process.stdout.write(run.stdout);
process.stderr.write(run.stderr);
if (run.status !== 0) throw new Error(`examples/hybrid-trainer.ts failed (exit ${run.status ?? run.signal})`);
const lines = run.stdout.trim().split('\n');
const ours = JSON.parse(lines[lines.length - 1]!) as Record<string, number | string>;

const torch = ours.backend === 'cuda' ? (runPython(join(here, 'anchors', 'hybrid_trainer.py'), ['10', '30'], 300_000) as Record<string, number | string> | undefined) : undefined;
const rows: BenchRow[] = [];
console.log(`\n${'stage (ms)'.padEnd(28)} ${'ours'.padStart(9)} ${'torch eager'.padStart(12)}   torch / ours`);
for (const [name, value] of Object.entries(ours)) {
  if (typeof value !== 'number' || name === 'first pass') continue;
  const anchor = typeof torch?.[name] === 'number' ? (torch[name] as number) : undefined;
  rows.push({ op: name, dtype: 'f32', size: 'batch 32', unit: 'ms', ours: value, ...(anchor === undefined ? {} : { anchor, anchorName: `torch ${torch!.torch} eager` }) });
  console.log(`${name.padEnd(28)} ${value.toFixed(3).padStart(9)} ${anchor === undefined ? '—'.padStart(12) : anchor.toFixed(3).padStart(12)}   ${anchor === undefined ? '' : `${(anchor / value).toFixed(2)}x`}`);
}
writeReport('pipeline', rows, { meta: { device: String(ours.device), backend: String(ours.backend), firstPassMs: Number(ours['first pass']) } });
