/**
 * `npm run bench [-- name...]`: runs the benchmarks, each in its own process so one's device
 * state cannot colour another's figures. Without names: every bench whose device is present
 * (`cpu` runs everywhere); a named bench whose device is absent is skipped, saying why.
 * Exits 1 when a bench fails, 2 for an unknown bench name.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { probeCuda } from '../src/compute/cuda/probe.js';
import { probeWebGpu } from '../src/compute/webgpu/registration.js';
import { tsxCommand } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));

type Needs = 'cuda' | 'cuda2' | 'webgpu' | 'nothing';

/** Bench name → script and the device it needs, in the order `npm run bench` runs them. */
const benches: Record<string, { script: string; needs: Needs }> = {
  launch: { script: 'launch.ts', needs: 'cuda' },
  ops: { script: 'ops.ts', needs: 'cuda' },
  matmul: { script: 'matmul.ts', needs: 'cuda' },
  attention: { script: 'attention.ts', needs: 'cuda' },
  sweep: { script: 'sweep.ts', needs: 'cuda' },
  gru: { script: 'gru.ts', needs: 'cuda' },
  training: { script: 'training.ts', needs: 'cuda' },
  svd: { script: 'svd.ts', needs: 'cuda' },
  overhead: { script: 'overhead.ts', needs: 'cuda' },
  pipeline: { script: 'pipeline.ts', needs: 'cuda' },
  'train-rssm': { script: 'train-rssm.ts', needs: 'cuda' },
  allreduce: { script: 'allreduce.ts', needs: 'cuda2' },
  autograd: { script: 'autograd.ts', needs: 'nothing' },
  webgpu: { script: 'webgpu.ts', needs: 'webgpu' },
  cpu: { script: 'cpu.ts', needs: 'nothing' },
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
console.log(cuda.available ? `CUDA ${cuda.driverVersion} with ${devices.map((d) => d.info?.deviceName ?? 'unknown').join(', ')}` : `no CUDA GPU (${cuda.reason})`);
const webgpu = (await probeWebGpu()).backend;
// A software adapter (lavapipe) would take minutes over sizes meant for a GPU.
const webgpuAbsent = !webgpu.available ? webgpu.reason : webgpu.adapter?.fallback ? 'the only adapter is a software one' : undefined;
console.log(webgpuAbsent === undefined ? `WebGPU on ${webgpu.adapter?.description || webgpu.adapter?.device}` : `no WebGPU GPU (${webgpuAbsent})`);

/** Why a bench cannot run here, or undefined when it can. */
function absent(needs: Needs): string | undefined {
  if (needs === 'cuda') return cuda.available ? undefined : 'no CUDA GPU';
  if (needs === 'cuda2') {
    if ((cuda.deviceCount ?? 0) < 2) return `needs 2 CUDA GPUs, ${cuda.deviceCount ?? 0} here`;
    return cuda.nccl.available ? undefined : `no NCCL (${cuda.nccl.reason})`;
  }
  if (needs === 'webgpu') return webgpuAbsent === undefined ? undefined : 'no WebGPU GPU';
  return undefined;
}

const selected = args.length > 0 ? [...new Set(args)] : Object.keys(benches).filter((name) => absent(benches[name]!.needs) === undefined);
const outcomes: { name: string; outcome: string; seconds: number }[] = [];
for (const name of selected) {
  const bench = benches[name]!;
  const script = join(here, bench.script);
  if (!existsSync(script)) {
    outcomes.push({ name, outcome: `not present (${bench.script})`, seconds: 0 });
    continue;
  }
  const missing = absent(bench.needs);
  if (missing !== undefined) {
    outcomes.push({ name, outcome: `skipped: ${missing}`, seconds: 0 });
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
