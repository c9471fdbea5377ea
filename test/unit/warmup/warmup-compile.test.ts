/**
 * The warmup compiling for real with NVRTC (sm_90 given, no GPU) into a temporary kernel cache on
 * compile processes: what it reports, what it leaves in the cache (the entries the backend's own
 * compile then hits), a second run that finds everything cached, and modules that fail without
 * stopping the others. Skips where no NVRTC loads.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Logger } from '../../../src/compute/core/logger.js';
import type { ProgressEvent } from '../../../src/compute/core/progress.js';
import { compileKernelModule } from '../../../src/compute/cuda/kernel-compile.js';
import { WarmupError } from '../../../src/compute/cuda/warmup-error.js';
import { compileModules } from '../../../src/compute/cuda/warmup-pool.js';
import { warmupModuleSpecs } from '../../../src/compute/cuda/warmup-specs.js';
import { resolveWarmupTarget } from '../../../src/compute/cuda/warmup-target.js';
import { KernelSources, moduleKey, type ModuleSpec } from '../../../src/compute/gpu/kernel-sources.js';
import { warmupKernels } from '../../../src/compute/warmup.js';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';
import { nvrtcAvailable } from '../nvrtc/nvrtc-available.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpucompute-warmup-'));
  dirs.push(dir);
  return dir;
}
const entries = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.kernel'));

describe.skipIf(!nvrtcAvailable)('kernel warmup with NVRTC (sm_90, no GPU)', () => {
  const target = nvrtcAvailable ? resolveWarmupTarget('sm_90') : undefined!;
  // Four small modules: neg in f32 and i32, fill, and i32 addition.
  const specs = nvrtcAvailable ? warmupModuleSpecs(target, { ops: ['neg', 'fill', 'add'], dtypes: ['f32', 'i32'] }).filter((s) => !moduleKey(s).includes('GC_F32&GC_OP=OpAdd')) : [];

  it('resolves the target from the arch alone', () => {
    expect(target).toMatchObject({ deviceArch: 'sm_90', compileArch: 'sm_90', sharedMemoryPerBlockOptin: 227 * 1024 });
    expect(target.nvrtcVersion).toMatch(/^\d+\.\d+$/);
  });

  it('compiles the modules on two workers into the cache, one progress event each, then finds them all cached', async () => {
    expect(specs.map(moduleKey).sort()).toEqual([
      'binary.cu?GC_DTYPE=GC_I32&GC_OP=OpAdd',
      'fill.cu',
      'unary.cu?GC_DTYPE=GC_F32&GC_OP=OpNeg',
      'unary.cu?GC_DTYPE=GC_I32&GC_OP=OpNeg',
    ]);
    const dir = tempDir();
    const events: ProgressEvent[] = [];
    const lines: string[] = [];
    const first = await compileModules(specs, target, {
      jobs: 2,
      cacheDir: dir,
      onProgress: (e) => events.push(e),
      logger: new Logger((level, message) => lines.push(`${level} ${message}`), 'info'),
    });
    expect(first).toMatchObject({ arch: 'sm_90', compileArch: 'sm_90', cacheDir: dir, jobs: 2, total: 4, compiled: 4, cached: 0, failed: [] });
    expect(events.map((e) => e.done)).toEqual([1, 2, 3, 4]);
    expect(events.every((e) => e.phase === 'compile' && e.total === 4 && e.outcome === 'done' && e.ms > 0)).toBe(true);
    expect(events.map((e) => e.what).sort()).toEqual(specs.map(moduleKey).sort());
    expect(lines).toHaveLength(4);
    expect(lines.every((l) => /^info compile [1-4]\/4 \S+ in \d/.test(l))).toBe(true);
    expect(entries(dir)).toHaveLength(4);

    // The keys are the ones a compile for an sm_90 device looks up.
    const cache = new KernelCache({ dir });
    const sources = new KernelSources();
    for (const spec of specs) expect(compileKernelModule(spec, sources, { arch: 'sm_90', cache }).cacheHit, moduleKey(spec)).toBe(true);

    const again: ProgressEvent[] = [];
    const second = await compileModules(specs, target, { jobs: 2, cacheDir: dir, onProgress: (e) => again.push(e) });
    expect(second).toMatchObject({ jobs: 0, total: 4, compiled: 0, cached: 4, failed: [] });
    expect(again.map((e) => [e.done, e.outcome])).toEqual([
      [1, 'cached'],
      [2, 'cached'],
      [3, 'cached'],
      [4, 'cached'],
    ]);
  });

  it('reports each module that fails, named, and compiles the others', async () => {
    const dir = tempDir();
    const broken: ModuleSpec = { file: 'unary.cu', defines: { GC_DTYPE: 'GC_F32', GC_OP: 'OpNoSuchFunctor' } };
    const missing: ModuleSpec = { file: 'no_such_kernel.cu' };
    const events: ProgressEvent[] = [];
    const warnings: string[] = [];
    const r = await compileModules([broken, specs[0]!, missing, broken], target, {
      jobs: 2,
      cacheDir: dir,
      onProgress: (e) => events.push(e),
      logger: new Logger((level, message) => level === 'warn' && warnings.push(message), 'warn'),
    });
    expect(r).toMatchObject({ total: 3, compiled: 1, cached: 0 });
    expect(r.failed.map((f) => f.module).sort()).toEqual([moduleKey(broken), moduleKey(missing)].sort());
    for (const f of r.failed) {
      expect(f).toBeInstanceOf(WarmupError);
      expect(f).toMatchObject({ code: 'WARMUP', arch: 'sm_90' });
      expect(f.message).toContain(f.module!);
    }
    const compileFailure = r.failed.find((f) => f.module === moduleKey(broken))!;
    expect(compileFailure.errorName).toBe('CompileError');
    expect(compileFailure.reason).toContain('OpNoSuchFunctor');
    expect(events.map((e) => e.outcome).sort()).toEqual(['done', 'failed', 'failed']);
    expect(warnings).toHaveLength(2);
    expect(entries(dir)).toHaveLength(1);
  });

  it('fails every module, with the reason the compile process gave, when no process can start', async () => {
    const saved = process.env.NODE_OPTIONS;
    // Each process is told to preload a module that is not there, so it exits before it is ready.
    process.env.NODE_OPTIONS = '--require /no/such/preload.cjs';
    try {
      const r = await compileModules(specs, target, { jobs: 2, cacheDir: tempDir() });
      expect(r).toMatchObject({ total: 4, compiled: 0, cached: 0, jobs: 2 });
      expect(r.failed).toHaveLength(4);
      for (const f of r.failed) {
        expect(f).toMatchObject({ errorName: 'Worker', arch: 'sm_90' });
        expect(f.reason).toMatch(/compile worker exited with code 1: [^]*no\/such\/preload/);
      }
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
  });

  it('warmupKernels compiles the ops asked for, and a listener that throws stops nothing', async () => {
    const dir = tempDir();
    const warnings: string[] = [];
    let calls = 0;
    const r = await warmupKernels({
      arch: 'sm_90',
      ops: ['fill'],
      jobs: 1,
      cacheDir: dir,
      onProgress: () => {
        calls++;
        throw new Error('listener broke');
      },
      logger: (level, message) => level === 'warn' && warnings.push(message),
    });
    expect(r).toMatchObject({ total: 1, compiled: 1, jobs: 1, failed: [] });
    expect(calls).toBe(1);
    expect(warnings).toEqual(['onProgress threw: listener broke']);
    expect(entries(dir)).toHaveLength(1);
  });

  it('refuses to run when the kernel cache is off or cannot be written', async () => {
    const saved = process.env.GPUCOMPUTE_CACHE;
    process.env.GPUCOMPUTE_CACHE = '0';
    try {
      const off = await compileModules(specs, target, { jobs: 1, cacheDir: tempDir() }).catch((err: unknown) => err);
      expect(off).toBeInstanceOf(WarmupError);
      expect(off).toMatchObject({ module: undefined, arch: 'sm_90' });
      expect((off as Error).message).toContain('GPUCOMPUTE_CACHE=0');
    } finally {
      if (saved === undefined) delete process.env.GPUCOMPUTE_CACHE;
      else process.env.GPUCOMPUTE_CACHE = saved;
    }
    const unwritable = await compileModules(specs, target, { jobs: 1, cacheDir: '/proc/gpucompute-warmup' }).catch((err: unknown) => err);
    expect(unwritable).toBeInstanceOf(WarmupError);
    expect((unwritable as Error).message).toContain('/proc/gpucompute-warmup');
  });
});
