import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultKernelsDir, KernelSources } from '../../../src/compute/gpu/kernel-sources.js';
import { compileHipKernelModule } from '../../../src/compute/hip/kernel-compile.js';
import { cudaOnlyReason, isPortableKernel, portableKernels } from '../../../src/compute/gpu/kernel-portability.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { HipProgram } from '../../../src/hip/hip-program.js';
import { hipRuntimeAvailable } from './hip-available.js';

const COMPILED_BY_THE_HIP_TESTS = [
  'unary.cu', 'activation_grad.cu', 'fill.cu', 'cast.cu', 'random.cu', 'transpose.cu', 'binary.cu', 'reduce.cu', 'softmax.cu', 'layernorm.cu',
  'one_hot.cu', 'optimizer.cu',
];

describe('kernel portability registry', () => {
  it('lists existing sources only, every one of them compiled by the HIP tests', () => {
    const files = readdirSync(defaultKernelsDir());
    for (const file of portableKernels()) {
      expect(files).toContain(file);
      expect(COMPILED_BY_THE_HIP_TESTS).toContain(file);
    }
  });

  it('gives every other source a reason, unlisted ones included', () => {
    expect(isPortableKernel('softmax.cu')).toBe(true);
    expect(cudaOnlyReason('softmax.cu')).toBeUndefined();
    expect(cudaOnlyReason('matmul_wgmma.cu')).toMatch(/wgmma/);
    expect(cudaOnlyReason('future_kernel.cu')).toMatch(/not marked portable/);
  });
});

describe.skipIf(!hipRuntimeAvailable)('portable kernel builds', () => {
  it('refuses to build a CUDA-only source for HIP', () => {
    expect(() => compileHipKernelModule({ file: 'matmul_tc.cu' }, new KernelSources(), { target: 'gfx90a', cache: false })).toThrow(
      InvalidArgumentError,
    );
  });

  it("fails the build when GC_WARP_SIZE differs from the target's wavefront", () => {
    const sources = new KernelSources();
    const build = (target: string, warp: number) =>
      new HipProgram(sources.source('transpose.cu'), {
        headers: sources.headers(),
        defines: { GC_DTYPE: 'GC_F32', GC_WARP_SIZE: warp },
        target,
        cache: false,
      }).compile();
    expect(() => build('gfx90a', 32)).toThrow(/GC_WARP_SIZE differs from the target's wavefront size/);
    expect(() => build('gfx1030', 64)).toThrow(/GC_WARP_SIZE differs/);
    expect(build('gfx1030', 32).image.length).toBeGreaterThan(0);
  });
});
