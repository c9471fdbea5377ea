import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Blas } from '../../../src/blas/blas.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { blasAvailable, needsBlas } from './blas-available.js';

describe.skipIf(!blasAvailable)(`BLAS thread count round trip${needsBlas}`, () => {
  afterEach(() => vi.unstubAllEnvs());

  it('sets the count from the option, GPUCOMPUTE_CPU_THREADS, or the cores, and reads it back', () => {
    // Counts up to the cores: MKL (with MKL_DYNAMIC, its default) reads back no more than that.
    const cores = availableParallelism();
    const blas = Blas.open({ threads: 1 });
    // A generic CBLAS cannot say how many threads it uses, nor Accelerate when multi-threaded.
    if (blas.vendor === 'generic' || blas.vendor === 'accelerate') return;
    expect(blas.threads).toBe(1);
    blas.setThreads(cores);
    expect(blas.threads).toBe(cores);
    vi.stubEnv('GPUCOMPUTE_CPU_THREADS', '1');
    expect(Blas.open().threads).toBe(1);
    vi.stubEnv('GPUCOMPUTE_CPU_THREADS', '');
    expect(Blas.open().threads).toBe(cores);
    Blas.open({ threads: 1 });
    // Process-wide: every Blas sees the last setting.
    expect(blas.threads).toBe(1);
  });

  it('refuses a bad count before changing anything', () => {
    const blas = Blas.open({ threads: 1 });
    expect(() => blas.setThreads(0)).toThrow(InvalidArgumentError);
    expect(() => Blas.open({ threads: 1.5 })).toThrow(/BLAS threads option 1.5/);
    vi.stubEnv('GPUCOMPUTE_CPU_THREADS', 'many');
    expect(() => Blas.open()).toThrow(/GPUCOMPUTE_CPU_THREADS=many/);
    if (blas.vendor !== 'generic' && blas.vendor !== 'accelerate') expect(blas.threads).toBe(1);
  });
});
