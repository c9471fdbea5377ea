/**
 * Runs the configuration sweep (see config-sweep.ts: every kernel family and tile, transposes,
 * odd and aligned extents, full epilogue) for compute-sanitizer:
 *
 *   compute-sanitizer --tool memcheck  --target-processes all tsx test/gpu/matmul/sanitize.ts [family...]
 *   compute-sanitizer --tool racecheck --target-processes all tsx test/gpu/matmul/sanitize.ts [family...]
 *
 * Every result is also checked against float64, so a clean run means in-bounds, race-free and
 * correct. Families default to all the device runs (wgmma only on sm_90). Exits non-zero on a
 * wrong result.
 */
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import type { MatmulFamily } from '../../../src/compute/cuda/matmul-kernels.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { describeCase, runSweepCase, sweepCases, SWEEP_TOLERANCE } from './config-sweep.js';

const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const { major, minor } = (gpu.backend as CudaBackend).device.computeCapability;
const available: MatmulFamily[] = ['simt', ...(major >= 8 ? (['mma'] as const) : []), ...(major === 9 && minor === 0 ? (['wgmma'] as const) : [])];
const requested = process.argv.slice(2) as MatmulFamily[];
const families = requested.length > 0 ? available.filter((f) => requested.includes(f)) : available;
let failures = 0;
const cases = sweepCases(families);
for (const c of cases) {
  const err = runSweepCase(gpu, c);
  const ok = err < SWEEP_TOLERANCE[c.kind];
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${describeCase(c)}: error ${err.toExponential(2)}`);
}
gpu.dispose();
console.log(`sanitize: ${cases.length} products (${families.join(', ')}), ${failures} wrong`);
process.exit(failures === 0 ? 0 : 1);
