/** Program.cached (a cache lookup without compiling) and the deviceArch option (compiling for a device that is not present). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';
import { Program } from '../../../src/nvrtc/program.js';
import * as raw from '../../../src/nvrtc/raw.js';
import { gpuAvailable } from '../../gpu/gpu-available.js';
import { nvrtcAvailable } from './nvrtc-available.js';

const root = mkdtempSync(join(tmpdir(), 'gpucompute-program-lookup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshCache = () => new KernelCache({ dir: join(root, `cache-${++dirs}`) });
const source = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }';

describe('Program deviceArch option', () => {
  it.each(['sm_90a', 'compute_90', 'ampere'])('refuses %s before NVRTC is asked', (deviceArch) => {
    expect(() => new Program(source, { deviceArch })).toThrow(InvalidArgumentError);
  });
});

describe.skipIf(!nvrtcAvailable)('Program.cached and deviceArch (real NVRTC)', () => {
  it('finds nothing before the compile, then what compile stored, without compiling', () => {
    const cache = freshCache();
    const program = new Program(source, { arch: 'sm_90', cache });
    expect(program.cached()).toBeUndefined();
    const compiled = program.compile();
    expect(compiled.cacheHit).toBe(false);
    const hit = new Program(source, { arch: 'sm_90', cache }).cached();
    expect(hit).toMatchObject({ cacheHit: true, arch: 'sm_90', output: 'cubin' });
    expect(Buffer.from(hit!.image).equals(Buffer.from(compiled.image))).toBe(true);
    expect(cache.stats()).toMatchObject({ writes: 1, hits: 1, misses: 2 });
    expect(new Program(source, { arch: 'sm_90', cache: false }).cached()).toBeUndefined();
  });

  it('derives the default arch from deviceArch, with the keys an explicit arch has', () => {
    const cache = freshCache();
    const byDevice = new Program(source, { deviceArch: 'sm_86', cache }).compile();
    expect(byDevice).toMatchObject({ arch: 'sm_86', output: 'cubin', cacheHit: false });
    expect(new Program(source, { arch: 'sm_86', cache }).cached()).toBeDefined();
  });

  it.skipIf(gpuAvailable)('still needs a device for the default arch when deviceArch is not given', () => {
    expect(() => new Program(source, { cache: false }).compile()).toThrow(/no arch was given and the current CUDA device could not be queried/);
  });

  it('checks an arch-specific target against deviceArch instead of the driver', () => {
    const program = (deviceArch: string) => new Program(source, { arch: 'sm_90a', deviceArch, cache: false });
    if (raw.version().major < 12) {
      expect(() => program('sm_90').compile()).toThrow(/needs NVRTC 12 or later/);
      return;
    }
    expect(program('sm_90').compile()).toMatchObject({ arch: 'sm_90a', output: 'cubin' });
    expect(() => program('sm_80').compile()).toThrow(/runs only on compute capability 9.0, but the device is sm_80/);
  });
});
