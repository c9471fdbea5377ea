/**
 * Runs every GRU case (gru-cases.ts) for compute-sanitizer:
 *
 *   compute-sanitizer --tool memcheck --target-processes all tsx test/gpu/gru/sanitize.ts [auto] [sequence] [fused] [steps] [persistent]
 *
 * (paths default to 'auto').
 * Every result is checked against float64 too; exits non-zero on a wrong result.
 */
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { GruPath } from '../../../src/compute/core/gru-params.js';
import { GRU_PATHS } from '../../../src/compute/ops/gru.js';
import { freshSeed } from '../../unit/compute/helpers.js';
import { runGruCases } from './gru-cases.js';

const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const seed = freshSeed();
let failures = 0;
const requested = process.argv.slice(2).filter((a): a is GruPath => (GRU_PATHS as readonly string[]).includes(a));
const results = runGruCases(gpu, seed, requested.length > 0 ? requested : ['auto']);
for (const r of results) {
  const ok = r.error <= r.bound;
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${r.name}: error ${r.error.toExponential(2)} (bound ${r.bound})`);
}
gpu.dispose();
console.log(`gru sanitize: ${results.length} checks (seed ${seed}), ${failures} wrong`);
process.exit(failures === 0 ? 0 : 1);
