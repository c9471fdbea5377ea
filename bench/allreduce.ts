/**
 * All-reduce bus bandwidth on 2 GPUs: `Communicator.allReduce` (NCCL through koffi, one process
 * driving both GPUs with ncclCommInitAll, each call one ncclGroupStart/End of two in-place
 * ncclAllReduce) against torch.distributed's NCCL backend (`bench/anchors/allreduce.py`: two
 * processes, one GPU each) in the same run, f32 sum, 1 MiB to 1 GiB per rank. Each figure is
 * the median of 5 timed batches (wall time from the first call to both devices' synchronisation,
 * as nccl-tests does) after warm-up; bus bandwidth = bytes / time · 2(n−1)/n, NCCL's figure of
 * the busiest link. Results are checked against the host sum before timing.
 *
 * NVLink multicast stays off on both sides (NCCL_NVLS_ENABLE=0: this library sets it before NCCL
 * loads, the anchor sets it in its processes).
 *
 * Run: `tsx bench/allreduce.ts` on a machine with 2 CUDA GPUs and NCCL (python3 with torch for
 * the anchor). Writes bench/results/allreduce.{json,svg}.
 */
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Communicator } from '../src/compute/communicator.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { ncclVersion } from '../src/nccl/version.js';
import { median, runPython, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const RANKS = 2;
const SIZES_MIB = [1, 4, 16, 64, 256, 1024];
const busFactor = (2 * (RANKS - 1)) / RANKS;

const gpus = await Promise.all(Array.from({ length: RANKS }, (_, device) => GpuCompute.create({ backend: 'cuda', device, logLevel: 'warn' })));
const comm = await Communicator.create(gpus);
const v = ncclVersion();
console.log(`devices: ${gpus.map((g) => g.info.deviceName).join(', ')}; NCCL ${v.major}.${v.minor}.${v.patch} (${comm.transport}); NCCL_NVLS_ENABLE=${process.env.NCCL_NVLS_ENABLE}`);

const syncAll = () => gpus.forEach((g) => g.synchronize());

/** Median seconds per in-place all-reduce of `xs`. */
function timeAllReduce(xs: ReturnType<GpuCompute['empty']>[]): number {
  const call = () => comm.allReduce(xs, { out: xs });
  for (let i = 0; i < 5; i++) call();
  syncAll();
  let t0 = performance.now();
  call();
  syncAll();
  const once = Math.max((performance.now() - t0) / 1000, 1e-6);
  const iters = Math.max(5, Math.min(500, Math.ceil(0.05 / once)));
  const samples: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    t0 = performance.now();
    for (let i = 0; i < iters; i++) call();
    syncAll();
    samples.push((performance.now() - t0) / 1000 / iters);
  }
  return median(samples);
}

/** The sum is right before anything is timed: rank r holds r + 1 + i mod 7 at element i. */
function check(elements: number): void {
  const xs = gpus.map((g, r) => g.tensor(Float32Array.from({ length: Math.min(elements, 1 << 16) }, (_, i) => r + 1 + (i % 7))));
  const ys = comm.allReduce(xs);
  for (const y of ys) {
    const got = y.toArraySync();
    for (let i = 0; i < got.length; i++) {
      const want = RANKS * (i % 7) + (RANKS * (RANKS + 1)) / 2;
      if (got[i] !== want) throw new Error(`allReduce: element ${i} is ${got[i]}, expected ${want}`);
    }
  }
  [...xs, ...ys].forEach((t) => t.dispose());
}

check(1 << 16);
const ours = new Map<number, number>();
for (const mib of SIZES_MIB) {
  const elements = (mib * 2 ** 20) / 4;
  const xs = gpus.map((g, r) => g.full([elements], r + 1));
  const seconds = timeAllReduce(xs);
  const busbw = ((mib * 2 ** 20) / seconds / 1e9) * busFactor;
  ours.set(mib, busbw);
  console.log(`ours  ${String(mib).padStart(5)} MiB: ${(seconds * 1e6).toFixed(1)} µs, bus ${busbw.toFixed(1)} GB/s`);
  xs.forEach((t) => t.dispose());
  gpus.forEach((g) => g.trim());
}
comm.dispose();
gpus.forEach((g) => g.dispose());

const anchor = runPython(join(here, 'anchors', 'allreduce.py'), [SIZES_MIB.join(',')], 600_000) as { busbw: Record<string, number>; torch: string; nccl: string } | undefined;
if (anchor) console.log(`anchor: torch ${anchor.torch}, NCCL ${anchor.nccl}`);
const rows: BenchRow[] = SIZES_MIB.map((mib) => ({
  op: 'allReduce bus bandwidth, 2 GPUs',
  dtype: 'f32 sum',
  size: mib * 2 ** 20,
  unit: 'GB/s',
  ours: ours.get(mib)!,
  ...(anchor?.busbw[String(mib)] === undefined ? {} : { anchor: anchor.busbw[String(mib)]!, anchorName: 'torch.distributed (NCCL)' }),
}));
writeReport('allreduce', rows, { meta: { nccl: `${v.major}.${v.minor}.${v.patch}`, ranks: RANKS, anchorTorch: anchor?.torch ?? null } });
