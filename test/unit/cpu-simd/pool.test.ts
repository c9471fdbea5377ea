/**
 * The worker pool's contract: jobs are queued in order and settle waits for them; a kernel that
 * traps, queued or run at once, becomes a SimdKernelError naming the kernel, the thread and the
 * op, and the pool works afterwards; a worker that exits fails the wait; the thread count
 * comes from the option or GPUCOMPUTE_CPU_THREADS; a process that used workers exits by itself
 * (spinning or asleep), and a fresh process on this Node loads the relaxed build and runs it on
 * its workers (Node 20 needs V8's flag, set at load time).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { fill, fillBits } from '../../../src/compute/cpu/simd/elementwise.js';
import { SimdKernelError } from '../../../src/compute/cpu/simd/errors.js';
import { SimdRuntime, THREADS_ENV } from '../../../src/compute/cpu/simd/runtime.js';
import { SIMD_VARIANT_ENV, defaultSimdVariant, relaxedSimdSupported } from '../../../src/compute/cpu/simd/wasm-module.js';
import { alloc, get, runtime } from './helpers.js';

const rt = runtime(3);
afterAll(() => rt.dispose());

/** Beyond the memory's current end: any access traps. */
const OUT_OF_BOUNDS = 0xfff00000;

describe('the queue', () => {
  it('returns before a queued job has run; settle waits for it', () => {
    const out = alloc(rt, 64 << 20);
    // No cost given: the op runs in the background (fill() of this size would run with the caller taking part).
    rt.run('fill', [0, 1, 2].map((p) => [out + p * (16 << 20), 4 << 20, fillBits('f32', 3), 4]));
    expect(rt.idle).toBe(false);
    rt.settle();
    expect(rt.idle).toBe(true);
    expect(new Float32Array(get(rt, out, 48 << 20).buffer).every((v) => v === 3)).toBe(true);
  });

  it('runs an op of moderate cost split with the caller taking part, and returns when it is done', () => {
    const out = alloc(rt, 4 << 20);
    fill(rt, 'f32', out, 1 << 20, 6);
    expect(rt.idle).toBe(true);
    expect(new Float32Array(get(rt, out, 4 << 20).buffer).every((v) => v === 6)).toBe(true);
  });

  it('runs jobs in order: each sees what the one before wrote', () => {
    const n = 3 << 18;
    const x = alloc(rt, n * 4);
    rt.f32.fill(1.5, x / 4, x / 4 + n);
    // 21 in-place negations (UNARY_CODE.neg = 0), each split in three parts: -1.5 only if none overlapped.
    for (let i = 0; i < 21; i++) rt.run('unary', [0, 1, 2].map((p) => [0, 0, x + p * (n / 3) * 4, x + p * (n / 3) * 4, n / 3, 0]));
    expect(rt.idle).toBe(false);
    expect(new Float32Array(get(rt, x, n * 4).buffer).every((v) => v === -1.5)).toBe(true);
  });

  it('a queued trap surfaces at the next settle as SimdKernelError naming the kernel and the op; later jobs are skipped; the queue works afterwards', () => {
    const ok = alloc(rt, 64);
    const after = alloc(rt, 64);
    rt.op = 'binary';
    rt.run('fill', [[OUT_OF_BOUNDS, 1 << 16, 0, 4], [ok, 4, 7, 4]]);
    rt.op = 'fill';
    rt.run('fill', [[after, 4, 5, 4], [after + 16, 4, 5, 4]]);
    let error: unknown;
    try {
      rt.settle();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SimdKernelError);
    expect(error).toMatchObject({ kernel: 'fill', op: 'binary', code: 'SIMD_KERNEL_FAILED' });
    expect((error as Error).message).toMatch(/fill \(queued by binary\) failed on (the calling thread|worker \d): .*out of bounds/);
    expect(new Int32Array(get(rt, after, 32).buffer).every((v) => v === 5)).toBe(false);
    rt.run('fill', [[after, 4, 9, 4], [after + 16, 4, 9, 4]]);
    expect(new Int32Array(get(rt, after, 32).buffer).every((v) => v === 9)).toBe(true);
  });

  it('settleAsync rejects the same way', async () => {
    rt.op = 'softmax';
    rt.run('fill', [[OUT_OF_BOUNDS, 1 << 16, 0, 4], [OUT_OF_BOUNDS, 1 << 16, 0, 4]]);
    await expect(rt.settleAsync()).rejects.toMatchObject({ kernel: 'fill', op: 'softmax' });
    await rt.settleAsync();
  });

  it('a trap of a call run at once (nothing queued, one part) throws there, as thread 0', () => {
    rt.settle();
    expect(() => rt.run('fill', [[OUT_OF_BOUNDS, 1 << 16, 0, 4]])).toThrow(expect.objectContaining({ thread: 0, kernel: 'fill' }));
    const ok = alloc(rt, 64);
    rt.run('fill', [[ok, 4, 9, 4]]);
    expect(new Int32Array(get(rt, ok, 16).buffer).every((v) => v === 9)).toBe(true);
  });

  it('a worker that exits fails the wait with SimdKernelError instead of hanging it, and fresh workers take the next job', async () => {
    const fresh = runtime(2);
    try {
      const out = alloc(fresh, 256 << 20);
      for (let i = 0; i < 8; i++) fill(fresh, 'f32', out, 64 << 20, i);
      const worker = fresh.workerThreads[1]!;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      void worker.terminate();
      await expect(fresh.settleAsync()).rejects.toThrow(/worker 2 exited/);
      await exited;
      fill(fresh, 'f32', out, 1 << 20, 4);
      expect(new Float32Array(get(fresh, out, 4 << 20).buffer).every((v) => v === 4)).toBe(true);
      // Seen by a blocking wait too, once the exit has been observed.
      const again = fresh.workerThreads[0]!;
      fill(fresh, 'f32', out, 64 << 20, 1);
      await again.terminate();
      await new Promise((resolve) => setImmediate(resolve));
      expect(() => fresh.settle()).toThrow(SimdKernelError);
    } finally {
      await fresh.dispose();
    }
  });
});

describe('thresholds', () => {
  it('are raised by the cold factor while the workers sleep or have not started', async () => {
    const fresh = new SimdRuntime({ threads: 2, spinMicroseconds: 300_000 });
    /** Polls `check` until it holds (a woken worker may wait for a core on a busy machine). */
    const eventually = async (check: () => boolean) => {
      for (const deadline = performance.now() + 5000; !check() && performance.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 5));
      return check();
    };
    try {
      const base = fresh.thresholds.elementwiseBytes;
      expect(fresh.threshold('elementwiseBytes')).toBe(base * fresh.coldFactor);
      const out = alloc(fresh, 8 << 20);
      fill(fresh, 'f32', out, 2 << 20, 1); // big enough to start the workers, which then spin for 300 ms
      fresh.settle();
      expect(fresh.workersStarted).toBe(true);
      expect(await eventually(() => fresh.threshold('elementwiseBytes') === base)).toBe(true);
      expect(await eventually(() => fresh.threshold('elementwiseBytes') === base * fresh.coldFactor)).toBe(true);
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
