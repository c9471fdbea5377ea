/**
 * Progress of first-run work on the GPU, against an empty kernel cache of its own: the kernel
 * registry reports each module it compiles (a cache hit only as a debug line) and each that
 * fails, and the matmul autotuner each candidate it times.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Logger } from '../../../src/compute/core/logger.js';
import type { ProgressEvent } from '../../../src/compute/core/progress.js';
import { KernelRegistry } from '../../../src/compute/cuda/kernel-registry.js';
import { moduleKey } from '../../../src/compute/gpu/kernel-sources.js';
import { layerNormSpec, oneKernelSpec, softmaxSpec, unarySpec } from '../../../src/compute/gpu/kernel-specs.js';
import { compileKernelModule } from '../../../src/compute/cuda/kernel-compile.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { Device } from '../../../src/driver/device.js';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';
import { CompileError } from '../../../src/nvrtc/nvrtc-error.js';
import { gpuAvailable } from '../gpu-available.js';

// This file's shared kernel cache (and the autotune file beside it) start empty: set before first use.
const root = mkdtempSync(join(tmpdir(), 'gpucompute-progress-'));
const savedDir = process.env.GPUCOMPUTE_CACHE_DIR;
process.env.GPUCOMPUTE_CACHE_DIR = join(root, 'shared', 'kernels');
afterAll(() => {
  if (savedDir === undefined) delete process.env.GPUCOMPUTE_CACHE_DIR;
  else process.env.GPUCOMPUTE_CACHE_DIR = savedDir;
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!gpuAvailable)('progress of first-run work (CUDA)', () => {
  it('the registry reports a compile, not a cache hit, and a failed compile before its error', () => {
    using context = Device.get(0).primaryContext();
    const cache = new KernelCache({ dir: join(root, 'registry') });
    const events: ProgressEvent[] = [];
    const lines: string[] = [];
    const logger = new Logger((level, message) => lines.push(`${level} ${message}`), 'debug', (e) => events.push(e));
    const spec = unarySpec('exp', 'f32');
    const cold = new KernelRegistry(context, { logger, cache });
    cold.module(spec);
    cold.module(spec);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ phase: 'compile', done: 1, what: moduleKey(spec), outcome: 'done' });
    expect(events[0]!.total).toBeUndefined();
    expect(events[0]!.ms).toBeGreaterThan(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^info compile #1 unary\.cu\?GC_DTYPE=GC_F32&GC_OP=OpExp in \d/);

    const warm = new KernelRegistry(context, { logger, cache });
    warm.module(spec);
    expect(events).toHaveLength(1);
    expect(lines[1]).toMatch(/^debug kernel unary\.cu\S+: cache hit for sm_\d+a? in /);

    const broken = { file: 'unary.cu', defines: { GC_DTYPE: 'GC_F32', GC_OP: 'OpNoSuchFunctor' } };
    expect(() => cold.module(broken)).toThrow(CompileError);
    expect(events[1]).toMatchObject({ phase: 'compile', done: 2, what: moduleKey(broken), outcome: 'failed' });
    cold.dispose();
    warm.dispose();
  });

  it('a one-kernel spec compiles that kernel alone, or takes the whole source where the cache holds it', () => {
    using context = Device.get(0).primaryContext();
    const cache = new KernelCache({ dir: join(root, 'one-kernel') });
    const events: ProgressEvent[] = [];
    const logger = new Logger(() => undefined, 'debug', (e) => events.push(e));
    const registry = new KernelRegistry(context, { logger, cache });
    const signature = ['ptr', 'ptr', 'u64', 'i32', 'i32'] as const;
    // Nothing cached: the one kernel compiles as its own module, without the file's others.
    const single = oneKernelSpec(softmaxSpec('f32'), 'softmax_warp_vec_4');
    registry.get(single, 'softmax_warp_vec_4', signature);
    expect(events.map((e) => e.what)).toEqual([moduleKey(single)]);
    expect(() => registry.module(single).getFunction('softmax_warp_vec_8')).toThrow();
    // A warmed whole source: its kernels come from that module, with no compile.
    compileKernelModule(layerNormSpec('f32'), registry.sources, { cache });
    const layerNormSignature = ['ptr', 'ptr', 'ptr', 'ptr', 'u64', 'i32', 'f32'] as const;
    const first = registry.get(oneKernelSpec(layerNormSpec('f32'), 'layernorm_warp_vec_4'), 'layernorm_warp_vec_4', layerNormSignature);
    const second = registry.get(oneKernelSpec(layerNormSpec('f32'), 'layernorm_block_vec_8'), 'layernorm_block_vec_8', layerNormSignature);
    expect(events).toHaveLength(1);
    expect(registry.module(oneKernelSpec(layerNormSpec('f32'), 'layernorm_looped'))).toBe(registry.module(layerNormSpec('f32')));
    expect(first.kernel).not.toBe(second.kernel);
    registry.dispose();
  });

  it('GpuCompute reports the autotuner timing each candidate, after compiling it', async () => {
    expect(KernelCache.shared().dir).toBe(join(root, 'shared', 'kernels'));
    const events: ProgressEvent[] = [];
    const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent', onProgress: (e) => events.push(e) });
    try {
      using a = gpu.randn([96, 80], { seed: 1 });
      using b = gpu.randn([80, 72], { seed: 2 });
      using c = gpu.matmul(a, b);
      gpu.synchronize();
      const tune = events.filter((e) => e.phase === 'tune');
      expect(tune.length).toBeGreaterThanOrEqual(2);
      expect(tune.map((e) => e.done)).toEqual(tune.map((_, i) => i + 1));
      for (const e of tune) {
        expect(e.total).toBe(tune.length);
        expect(e.what).toMatch(/^matmul f32 96x72x80 NN: \w+$/);
        expect(['done', 'failed']).toContain(e.outcome);
      }
      // The candidates' modules were compiled (the cache was empty), each reported before its timing.
      const compiles = events.filter((e) => e.phase === 'compile' && e.what.startsWith('matmul_f32.cu'));
      expect(compiles.length).toBeGreaterThanOrEqual(tune.filter((e) => e.what.includes('simt')).length);
      expect(events.indexOf(compiles[0]!)).toBeLessThan(events.indexOf(tune[0]!));
      expect(c.shape).toEqual([96, 72]);
    } finally {
      gpu.dispose();
    }
  });
});
