/**
 * A training step of the RSSM ensemble (`examples/train-rssm.ts`: forward, backpropagation
 * through time, AdamW) against the same model and step in torch eager on the same device in the
 * same run (`bench/anchors/train_rssm.py`: five torch.nn.GRU on cuDNN). The example checks that
 * its loss falls by 10x.
 *
 * Run: `tsx bench/train-rssm.ts [--backend cuda|webgpu|cpu]`. Writes bench/results/train-rssm.{json,svg}.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPython, tsxCommand, writeReport } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const backendArg = process.argv.indexOf('--backend');
const passArgs = backendArg >= 0 ? ['--backend', process.argv[backendArg + 1]!] : [];
const { command, args } = tsxCommand(join(here, '..', 'examples', 'train-rssm.ts'), [...passArgs, '--steps', '120', '--json']);
const run = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
process.stdout.write(run.stdout);
process.stderr.write(run.stderr);
if (run.status !== 0) throw new Error(`examples/train-rssm.ts failed (exit ${run.status ?? run.signal})`);
const lines = run.stdout.trim().split('\n');
const ours = JSON.parse(lines[lines.length - 1]!) as { device: string; backend: string; stepMs: number };
const torch = ours.backend === 'cuda' ? (runPython(join(here, 'anchors', 'train_rssm.py'), ['50'], 300_000) as { torch: string; stepMs: number } | undefined) : undefined;
if (torch) console.log(`\ntraining step: ours ${ours.stepMs.toFixed(2)} ms, torch ${torch.torch} eager ${torch.stepMs.toFixed(2)} ms: ours ${(torch.stepMs / ours.stepMs).toFixed(2)}x faster`);
writeReport('train-rssm', [{ op: 'RSSM training step', dtype: 'f32', size: 'batch 32 × 16', unit: 'ms', ours: ours.stepMs, ...(torch ? { anchor: torch.stepMs, anchorName: `torch ${torch.torch} eager` } : {}) }], {
  meta: { device: ours.device, backend: ours.backend },
});
