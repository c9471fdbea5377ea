/**
 * The worker pool's contract: a kernel that traps, on a worker or on the calling thread, becomes a
 * SimdKernelError naming the kernel and the thread, and the pool works afterwards; the thread count
 * comes from the option or GPUCOMPUTE_CPU_THREADS; a process that used workers exits by itself
 * (spinning or asleep), and a fresh process on this Node loads the relaxed build and runs it on
 * its workers (Node 20 needs V8's flag, set at load time).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { fill } from '../../../src/compute/cpu/simd/elementwise.js';
import { SimdKernelError } from '../../../src/compute/cpu/simd/errors.js';
import { SimdRuntime, THREADS_ENV } from '../../../src/compute/cpu/simd/runtime.js';
import { SIMD_VARIANT_ENV, defaultSimdVariant, relaxedSimdSupported } from '../../../src/compute/cpu/simd/wasm-module.js';
import { alloc, get, runtime } from './helpers.js';

const rt = runtime(3);
afterAll(() => rt.dispose());

/** Beyond the memory's current end: any access traps. */
const OUT_OF_BOUNDS = 0xfff00000;

describe('errors', () => {
  it('a trap on a worker becomes SimdKernelError and the pool keeps working', () => {
    // The caller's own share is long, so the worker claims the trapping part before the caller
    // could take it back (a few tries, for a machine busy enough to deschedule the worker).
    const long = alloc(rt, 16 << 20);
    const ok = alloc(rt, 64);
    const errors: SimdKernelError[] = [];
    for (let attempt = 0; attempt < 20 && !errors.some((e) => e.thread === 1); attempt++) {
      try {
        rt.run('fill', [[long, 4 << 20, 7, 4], [OUT_OF_BOUNDS, 1 << 16, 0, 4], [ok, 4, 7, 4]]);
      } catch (error) {
        errors.push(error as SimdKernelError);
      }
    }
    expect(errors.every((e) => e instanceof SimdKernelError && e.kernel === 'fill' && e.code === 'SIMD_KERNEL_FAILED')).toBe(true);
    const fromWorker = errors.find((e) => e.thread === 1)!;
    expect(fromWorker).toBeDefined();
    expect(fromWorker.message).toMatch(/worker 1: .*out of bounds/);
    for (let i = 0; i < 3; i++) {
      const out = alloc(rt, 3 << 20);
      fill(rt, 'f32', out, 3 << 18, 2.5);
      expect(new Float32Array(get(rt, out, 3 << 20).buffer).every((v) => v === 2.5)).toBe(true);
    }
  });

  it('a part no worker has claimed runs on the calling thread', () => {
    // With workers asleep, the caller finishes first and takes the other parts back.
    const out = alloc(rt, 64);
    const started = performance.now();
    while (performance.now() - started < 5);
    rt.run('fill', [[out, 4, 1, 4], [out + 16, 4, 2, 4], [out + 32, 4, 3, 4]]);
    expect(Array.from(new Int32Array(get(rt, out, 48).buffer))).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
  });

  it('a trap on the calling thread is reported as thread 0, after the workers finished', () => {
    const ok = alloc(rt, 64);
    expect(() => rt.run('fill', [[OUT_OF_BOUNDS, 1 << 16, 0, 4], [ok, 4, 9, 4]])).toThrow(expect.objectContaining({ thread: 0, kernel: 'fill' }));
    expect(() => rt.run('fill', [[OUT_OF_BOUNDS, 1 << 16, 0, 4]])).toThrow(SimdKernelError);
    rt.run('fill', [[ok, 4, 9, 4], [ok + 16, 4, 9, 4]]);
    expect(new Int32Array(get(rt, ok, 32).buffer).every((v) => v === 9)).toBe(true);
  });
});

describe('thresholds', () => {
  it('are raised by the cold factor while the workers sleep or have not started', async () => {
    const fresh = new SimdRuntime({ threads: 2, spinMicroseconds: 2000 });
    try {
      const base = fresh.thresholds.elementwiseBytes;
      expect(fresh.threshold('elementwiseBytes')).toBe(base * fresh.coldFactor);
      const out = alloc(fresh, 8 << 20);
      fill(fresh, 'f32', out, 2 << 20, 1); // big enough to start the workers
      expect(fresh.workersStarted).toBe(true);
      expect(fresh.threshold('elementwiseBytes')).toBe(base); // spinning for 2 ms after the op
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(fresh.threshold('elementwiseBytes')).toBe(base * fresh.coldFactor);
    } finally {
      await fresh.dispose();
    }
  });
});

describe('configuration', () => {
  it('takes the thread count from the option, else GPUCOMPUTE_CPU_THREADS', async () => {
    const saved = process.env[THREADS_ENV];
    try {
      process.env[THREADS_ENV] = '5';
      const fromEnv = new SimdRuntime();
      expect(fromEnv.threads).toBe(5);
      expect(new SimdRuntime({ threads: 1 }).threads).toBe(1);
      process.env[THREADS_ENV] = 'many';
      expect(() => new SimdRuntime()).toThrow(InvalidArgumentError);
      await fromEnv.dispose();
    } finally {
      if (saved === undefined) delete process.env[THREADS_ENV];
      else process.env[THREADS_ENV] = saved;
    }
  });

  it('GPUCOMPUTE_CPU_SIMD=simd128 forces the plain build', () => {
    const saved = process.env[SIMD_VARIANT_ENV];
    try {
      process.env[SIMD_VARIANT_ENV] = 'simd128';
      expect(defaultSimdVariant()).toBe('simd128');
      process.env[SIMD_VARIANT_ENV] = 'avx';
      expect(() => defaultSimdVariant()).toThrow(InvalidArgumentError);
      delete process.env[SIMD_VARIANT_ENV];
      expect(defaultSimdVariant()).toBe(relaxedSimdSupported() ? 'relaxed-simd' : 'simd128');
    } finally {
      if (saved === undefined) delete process.env[SIMD_VARIANT_ENV];
      else process.env[SIMD_VARIANT_ENV] = saved;
    }
  });
});

describe('a child process', () => {
  const fixture = fileURLToPath(new URL('./fixtures/work-then-end.ts', import.meta.url));
  const run = (args: string[], env: Record<string, string> = {}) => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', fixture, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, [SIMD_VARIANT_ENV]: '', ...env },
    });
    expect(child.error, child.stderr).toBeUndefined();
    expect(child.status, child.stderr).toBe(0);
    return JSON.parse(child.stdout.trim().split('\n').pop()!) as { variant: string; relaxed: boolean; workers: boolean; ok: boolean; node: string };
  };

  it.each([['spinning', []], ['asleep', ['asleep']]] as const)('exits by itself with its workers %s', (_label, args) => {
    const report = run([...args]);
    expect(report.workers).toBe(true);
    expect(report.ok).toBe(true);
  });

  it('loads the relaxed build in a fresh process and runs it on the workers (Node 20: V8 flag set at load)', () => {
    const report = run([]);
    // Node 20.19+ and newer validate relaxed SIMD (20 after the flag); the plain build otherwise.
    expect(report.relaxed).toBe(Number(report.node.split('.')[0]) >= 20);
    expect(report.variant).toBe(report.relaxed ? 'relaxed-simd' : 'simd128');
    expect(run([], { [SIMD_VARIANT_ENV]: 'simd128' }).variant).toBe('simd128');
  });
});
