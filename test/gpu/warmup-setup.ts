/**
 * Global setup of the gpu and conformance projects: where a CUDA device answers, compiles every
 * kernel module the tests ask for (the library's default warmup and the test sweeps'
 * modules, sweep-modules.ts) into the kernel cache on every core before the first test, instead
 * of one after another inside the tests. Without a GPU it returns at once and prints nothing.
 * Runs once per vitest process (both projects name it); `GPUCOMPUTE_TEST_WARMUP=0` turns it off.
 * A warmup that cannot run or a module that fails is reported, and the tests go on: they compile
 * what they need on first use, as without the setup.
 */
import { gpuAvailable } from './gpu-available.js';

/** Set in the vitest process once the warmup ran (the second project's setup then skips it). */
const RAN = 'GPUCOMPUTE_TEST_WARMUP_RAN';

export default async function setup(): Promise<void> {
  if (!gpuAvailable || process.env.GPUCOMPUTE_TEST_WARMUP === '0' || process.env[RAN] === '1') return;
  process.env[RAN] = '1';
  const [{ resolveWarmupTarget }, { warmupModuleSpecs }, { compileModules }, { ProgressLine }, { sweepModuleSpecs }] = await Promise.all([
    import('../../src/compute/cuda/warmup-target.js'),
    import('../../src/compute/cuda/warmup-specs.js'),
    import('../../src/compute/cuda/warmup-pool.js'),
    import('../../src/compute/progress-line.js'),
    import('./sweep-modules.js'),
  ]);
  const line = new ProgressLine(process.stderr, 'warming the kernel cache');
  try {
    const target = resolveWarmupTarget();
    const specs = [...warmupModuleSpecs(target), ...sweepModuleSpecs(target)];
    const { availableParallelism } = await import('node:os');
    const r = await compileModules(specs, target, { jobs: availableParallelism(), onProgress: line.update });
    const failed = r.failed.map((f) => `\n  ${f.message.split('\n')[0]}`).join('');
    line.end(
      `kernel warmup for ${r.arch}: ${r.compiled} compiled in ${r.jobs} processes, ${r.cached} already cached, ` +
        `${r.failed.length} failed in ${(r.wallMs / 1000).toFixed(1)} s${failed}`,
    );
  } catch (err) {
    line.end(`kernel warmup skipped: ${err instanceof Error ? err.message : String(err)}`);
  }
}
