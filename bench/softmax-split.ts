/**
 * Softmax over long rows: a block per row (the cached, staged or looped kernel) against the
 * thread-block-cluster split of the row (`kernels/softmax_cluster.cu`) at each CTA size, with
 * torch and the copy roof (cuMemcpyDtoD moving the same bytes) timed in the same run. Each
 * launch is checked on its first row against float64 before it is timed. Its table chose
 * `planClusterSoftmax`: split only rows a block cannot hold, over CTAs of 256 threads.
 *
 * Run: `tsx bench/softmax-split.ts` on a machine with a CUDA GPU of compute capability 9.0+.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { clusterSoftmaxLaunch, planClusterSoftmax, type ClusterRowLaunch } from '../src/compute/gpu/launch-plans.js';
import { clusterSoftmax, softmax } from '../src/compute/gpu/rows.js';
import { dtypeSize, fromBf16Array, type DType } from '../src/compute/core/dtype.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { DeviceTimer } from './device-timer.js';
import { runPython } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const be = gpu.backend as CudaBackend;
if (!be.clusterLaunch) {
  console.error('softmax-split: this device launches no thread-block clusters');
  process.exit(2);
}
const timer = new DeviceTimer(be.context, be.stream);
const timeDevice = (fn: () => void) => timer.time(fn, { warmup: 3, targetMs: 20, reps: 7 });
const gbps = (bytes: number, us: number) => bytes / us / 1e3;

function firstRow(t: Tensor, cols: number): number[] {
  if (t.dtype === 'f32') {
    const out = new Float32Array(cols);
    be.read(t.view.buffer, out, 0);
    return Array.from(out);
  }
  const raw = new Uint16Array(cols);
  be.read(t.view.buffer, raw, 0);
  return Array.from(fromBf16Array(raw));
}

/** b<threads>c<CTAs per cluster>. */
function launchName(launch: ClusterRowLaunch): string {
  return `b${launch.block}c${launch.cluster}`;
}

function rowError(x: Tensor, y: Tensor, cols: number): number {
  const row = firstRow(x, cols);
  const got = firstRow(y, cols);
  const m = Math.max(...row);
  const s = row.reduce((acc, v) => acc + Math.exp(v - m), 0);
  let d = 0;
  let r = 0;
  row.forEach((v, i) => {
    const ref = Math.exp(v - m) / s;
    d += (got[i]! - ref) ** 2;
    r += ref ** 2;
  });
  return Math.sqrt(d / r);
}

interface Result {
  key: string;
  dtype: DType;
  rows: number;
  cols: number;
  bytes: number;
  perLaunch: Record<string, number>;
  roof: number;
}

const results: Result[] = [];
for (const dtype of ['f32', 'bf16'] as const) {
  for (const cols of [16_384, 32_768, 40_000, 65_536]) {
    const rows = Math.round(2 ** 24 / cols);
    const bytes = 2 * rows * cols * dtypeSize[dtype];
    const x = gpu.randn([rows, cols], { seed: cols, dtype });
    const y = gpu.empty([rows, cols], dtype);
    const launches: [string, () => void][] = [['block', () => softmax(be, x.view, y.view, rows, cols, false, false)]];
    for (const block of [128, 256, 512]) {
      const launch = clusterSoftmaxLaunch(cols, dtype, block);
      if (launch) launches.push([launchName(launch), () => clusterSoftmax(be, x.view, y.view, rows, cols, false, launch)]);
    }
    const perLaunch: Record<string, number> = {};
    for (const [name, run] of launches) {
      be.fill(y.view, Number.NaN);
      run();
      const error = rowError(x, y, cols);
      if (!(error <= (dtype === 'f32' ? 1e-5 : 8e-3))) throw new Error(`${dtype} ${rows}x${cols} ${name}: error ${error}`);
      perLaunch[name] = timeDevice(run);
    }
    const n = Math.round(bytes / 8);
    const src = gpu.zeros([n]);
    const dst = gpu.empty([n]);
    const roofUs = timeDevice(() => be.copy(dst.view, src.view));
    src.dispose();
    dst.dispose();
    x.dispose();
    y.dispose();
    results.push({ key: `softmax|${dtype}|${rows}x${cols}`, dtype, rows, cols, bytes, perLaunch, roof: gbps(bytes, roofUs) });
    const best = Object.entries(perLaunch).sort((a, b) => a[1] - b[1])[0]!;
    console.log(`${dtype} ${rows}x${cols}: block ${gbps(bytes, perLaunch.block!).toFixed(0)} GB/s, best ${best[0]} ${gbps(bytes, best[1]).toFixed(0)}, roof ${gbps(bytes, roofUs).toFixed(0)}`);
  }
}

const anchorCases = results.map(({ key, dtype, rows, cols }) => ({ key, op: 'softmax', dtype, shape: [rows, cols] }));
const anchors = runPython(join(here, 'anchors', 'ops.py'), [JSON.stringify(anchorCases)], 300_000) as { us: Record<string, number> } | undefined;

console.log('\n| case | torch GB/s | block | planned | best split | roof | planned / torch | planned / roof |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const torch = anchors?.us[r.key] === undefined ? Number.NaN : gbps(r.bytes, anchors.us[r.key]!);
  const planned = planClusterSoftmax(r.cols, r.dtype, true);
  const plannedName = planned ? launchName(planned) : 'block';
  const plannedGbps = gbps(r.bytes, r.perLaunch[plannedName] ?? Number.NaN);
  const best = Object.entries(r.perLaunch).sort((a, b) => a[1] - b[1])[0]!;
  const others = Object.entries(r.perLaunch)
    .filter(([name]) => name !== 'block')
    .map(([name, us]) => `${name} ${gbps(r.bytes, us).toFixed(0)}`)
    .join(', ');
  console.log(
    `| ${r.dtype} ${r.rows}x${r.cols} | ${torch.toFixed(0)} | ${gbps(r.bytes, r.perLaunch.block!).toFixed(0)} | ${plannedName} ${plannedGbps.toFixed(0)} | ${best[0]} ${gbps(r.bytes, best[1]).toFixed(0)} | ${r.roof.toFixed(0)} | ${(plannedGbps / torch).toFixed(2)}x | ${((100 * plannedGbps) / r.roof).toFixed(0)}% |`,
  );
  console.log(`|  | all splits: ${others} |`);
}
gpu.dispose();
