/**
 * Fills the kernel cache before a GPU session: the library's default warmup (`gpucompute warmup`)
 * and the modules the GPU tests, sanitizer drivers and benchmarks sweep over
 * (test/gpu/sweep-modules.ts), compiled side by side on worker threads, one per core unless
 * `--jobs` says otherwise. Needs NVRTC, not a GPU, when the arch is given; default the present
 * device's:
 *
 *   tsx bench/precompile.ts [sm_90] [--jobs N]
 *
 * The GPU test projects' global setup (test/gpu/warmup-setup.ts) compiles the same set.
 */
import { availableParallelism } from 'node:os';
import { compileModules } from '../src/compute/cuda/warmup-pool.js';
import { warmupModuleSpecs } from '../src/compute/cuda/warmup-specs.js';
import { resolveWarmupTarget } from '../src/compute/cuda/warmup-target.js';
import { ProgressLine } from '../src/compute/progress-line.js';
import { sweepModuleSpecs } from '../test/gpu/sweep-modules.js';

const args = process.argv.slice(2);
const jobsAt = args.findIndex((a) => a === '--jobs' || a === '-j');
const jobs = jobsAt >= 0 ? Number(args.splice(jobsAt, 2)[1]) : availableParallelism();
const [arch, ...extra] = args;
if (extra.length > 0 || !(Number.isInteger(jobs) && jobs >= 1) || (arch !== undefined && !/^sm_\d{2,3}$/.test(arch))) {
  console.error('usage: tsx bench/precompile.ts [arch, e.g. sm_90] [--jobs N]');
  process.exit(2);
}

const target = resolveWarmupTarget(arch);
const line = new ProgressLine(process.stderr, 'precompile');
const r = await compileModules([...warmupModuleSpecs(target), ...sweepModuleSpecs(target)], target, { jobs, onProgress: line.update });
line.end();
console.log(
  `precompile ${r.arch} (NVRTC ${r.nvrtcVersion}): ${r.total} modules, ${r.compiled} built, ${r.cached} cached, ${r.failed.length} failed ` +
    `in ${(r.wallMs / 1000).toFixed(1)} s on ${r.jobs} threads`,
);
for (const f of r.failed) console.log(`  ${f.message.split('\n')[0]}`);
process.exitCode = r.failed.length === 0 ? 0 : 1;
