/**
 * Which engines the CPU backend computes with, and how many threads: the `threads` option of
 * GpuCompute.create (validated, a typed error naming it), GPUCOMPUTE_CPU_THREADS, and what info,
 * the probe and `gpucompute info` say about them.
 */
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../../src/compute/cpu/cpu-backend.js';
import { cpuRegistration, probeCpu } from '../../../src/compute/cpu/registration.js';
import { THREADS_ENV } from '../../../src/compute/cpu/simd/runtime.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { InvalidArgumentError } from '../../../src/errors.js';

/** Runs `fn` with `GPUCOMPUTE_CPU_THREADS` set to `value` (unset for undefined). */
async function withThreadsEnv<T>(value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const saved = process.env[THREADS_ENV];
  if (value === undefined) delete process.env[THREADS_ENV];
  else process.env[THREADS_ENV] = value;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env[THREADS_ENV];
    else process.env[THREADS_ENV] = saved;
  }
}

describe('threads', () => {
  it('takes the option, and says so in info', async () => {
    for (const threads of [1, 3]) {
      const g = await GpuCompute.create({ backend: 'cpu', threads, logLevel: 'silent' });
      try {
        expect((g.backend as unknown as CpuBackend).engine.threads).toBe(threads);
        expect(g.info.platform).toContain(`${threads} thread${threads === 1 ? '' : 's'})`);
        using x = g.rand([3, 1 << 16], { seed: 2 });
        using s = g.softmax(x);
        const rows = await g.sum(s, 1).toArray();
        for (const r of rows) expect(r).toBeCloseTo(1, 5);
      } finally {
        g.dispose();
      }
    }
  });

  it('gives the same results with one thread and with workers', async () => {
    const one = await GpuCompute.create({ backend: 'cpu', threads: 1, logLevel: 'silent' });
    const many = await GpuCompute.create({ backend: 'cpu', threads: 3, logLevel: 'silent' });
    try {
      const results = await Promise.all(
        [one, many].map(async (g) => {
          using a = g.randn([300, 200], { seed: 5 });
          using b = g.randn([200, 150], { seed: 6 });
          using p = g.matmul(a, b, { activation: 'gelu' });
          using r = g.sum(g.exp(g.tanh(p)), 0);
          return r.toArray();
        }),
      );
      for (let i = 0; i < results[0]!.length; i++) expect(results[1]![i]).toBeCloseTo(results[0]![i]!, 3);
    } finally {
      one.dispose();
      many.dispose();
    }
  });

  it.each([0, -1, 1.5, 257, '2', Number.NaN])('refuses threads: %s with InvalidArgumentError naming the option', async (threads) => {
    await expect(GpuCompute.create({ backend: 'cpu', threads: threads as number })).rejects.toThrow(InvalidArgumentError);
    await expect(GpuCompute.create({ backend: 'cpu', threads: threads as number })).rejects.toThrow(/GpuCompute\.create: threads must be an integer in \[1, 256\]/);
  });

  it('takes GPUCOMPUTE_CPU_THREADS when the option is absent, and refuses a bad one naming it', async () => {
    await withThreadsEnv('1', async () => {
      const g = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
      expect((g.backend as unknown as CpuBackend).engine.threads).toBe(1);
      g.dispose();
      const h = await GpuCompute.create({ backend: 'cpu', threads: 2, logLevel: 'silent' });
      expect((h.backend as unknown as CpuBackend).engine.threads, 'the option wins').toBe(2);
      h.dispose();
    });
    await withThreadsEnv('lots', async () => {
      await expect(GpuCompute.create({ backend: 'cpu' })).rejects.toThrow(/GPUCOMPUTE_CPU_THREADS="lots"/);
      const probe = probeCpu();
      expect(probe.engine).toBeNull();
      expect(probe.engineError).toMatch(/GPUCOMPUTE_CPU_THREADS/);
      expect(cpuRegistration.describe(probe).details[0]).toMatch(/^cannot open: /);
    });
  });
});

describe('engines', () => {
  it('the probe names the products engine, the WebAssembly build and the threads, as the backend does', async () => {
    const probe = probeCpu();
    const g = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
    try {
      expect(probe.engine).toEqual((g.backend as unknown as CpuBackend).engine);
      expect(probe.engineError).toBeNull();
      const line = cpuRegistration.describe(probe).details[0]!;
      expect(line).toMatch(/^computes with .*WebAssembly (relaxed SIMD|SIMD128), \d+ threads?$/);
      if (probe.blas.found && probe.blas.enabled) expect(line).toContain(`${probe.blas.vendor} products`);
    } finally {
      g.dispose();
    }
  });

  it('with GPUCOMPUTE_BLAS=0 the products run on the WebAssembly sgemm', () => {
    const saved = process.env.GPUCOMPUTE_BLAS;
    process.env.GPUCOMPUTE_BLAS = '0';
    try {
      const backend = new CpuBackend();
      expect(backend.engine.products).toBe('wasm');
      expect(backend.info().platform).not.toMatch(/products/);
      backend.dispose();
    } finally {
      if (saved === undefined) delete process.env.GPUCOMPUTE_BLAS;
      else process.env.GPUCOMPUTE_BLAS = saved;
    }
  });
});
