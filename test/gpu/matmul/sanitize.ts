/**
 * Runs the configuration sweep (see config-sweep.ts: every kernel family and tile, transposes,
 * odd and aligned extents, full epilogue) for compute-sanitizer:
 *
 *   compute-sanitizer --tool memcheck  --target-processes all tsx test/gpu/matmul/sanitize.ts [family...] [--shard i/n]
 *   compute-sanitizer --tool racecheck --target-processes all tsx test/gpu/matmul/sanitize.ts [family...] [--shard i/n]
 *       [--configs name,name...]   (only those configurations, e.g. wgmma128x128s6p)
 *
 * Every result is also checked against float64, so a clean run means in-bounds, race-free and
 * correct. Families default to all the device runs (wgmma only on sm_90). Racecheck costs
 * seconds per kernel module (instrumentation) and per launch, so the whole sweep outlasts one
 * sequential process: `--shard i/n` keeps the i-th of n contiguous runs of cases (a module's
 * cases stay together, so each shard instruments few modules), and n shards side by side
 * cover every case in a bounded time:
 *
 *   for i in 0 1 2 3 4 5 6 7; do compute-sanitizer --tool racecheck --target-processes all \
 *     tsx test/gpu/matmul/sanitize.ts --shard $i/8 & done; wait
 *
 * Exits non-zero on a wrong result.
 */
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import type { MatmulFamily } from '../../../src/compute/cuda/matmul/matmul-kernels.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { describeCase, runSweepCase, sweepCases, SWEEP_TOLERANCE } from './config-sweep.js';

const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const { major, minor } = (gpu.backend as CudaBackend).device.computeCapability;
const available: MatmulFamily[] = ['simt', ...(major >= 8 ? (['mma'] as const) : []), ...(major === 9 && minor === 0 ? (['wgmma'] as const) : [])];
const args = process.argv.slice(2);
const shardAt = args.indexOf('--shard');
const [shard, shards] = shardAt >= 0 ? args.splice(shardAt, 2)[1]!.split('/').map(Number) as [number, number] : [0, 1];
if (!(Number.isInteger(shard) && Number.isInteger(shards) && shard >= 0 && shard < shards)) throw new Error('--shard takes i/n with 0 <= i < n');
const configsAt = args.indexOf('--configs');
const configs = configsAt >= 0 ? args.splice(configsAt, 2)[1]!.split(',') : undefined;
const requested = args as MatmulFamily[];
const families = requested.length > 0 ? available.filter((f) => requested.includes(f)) : available;
let failures = 0;
const all = sweepCases(families).filter((c) => !configs || configs.includes(c.config));
const cases = all.slice(Math.floor((shard * all.length) / shards), Math.floor(((shard + 1) * all.length) / shards));
for (const c of cases) {
  const err = runSweepCase(gpu, c);
  const ok = err < SWEEP_TOLERANCE[c.kind];
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${describeCase(c)}: error ${err.toExponential(2)}`);
}
gpu.dispose();
console.log(`sanitize: ${cases.length} products (${families.join(', ')}; shard ${shard}/${shards}), ${failures} wrong`);
process.exit(failures === 0 ? 0 : 1);
