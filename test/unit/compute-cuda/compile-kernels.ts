/**
 * Compiles every specialisation of some kernel sources with whatever NVRTC is
 * present (CI installs Debian's NVRTC 11.8, which has no cuda_fp16.h: the
 * kernels are header-free on purpose), for sm_80, and checks each CUBIN
 * defines the kernels the backend launches. Split over several test files so
 * vitest compiles them in parallel. Skips when no NVRTC loads. The sm_90-only
 * modules (clusters) are compiled for sm_90, which NVRTC 11.8 knows, as are the files a test
 * asks to see built for the Hopper devices the benchmarks run on.
 */
import { describe, expect, it } from 'vitest';
import { compileKernelModule } from '../../../src/compute/cuda/kernel-compile.js';
import { KernelSources, moduleKey } from '../../../src/compute/gpu/kernel-sources.js';
import { allModuleSpecs, kernelNames } from '../../../src/compute/cuda/kernel-specs.js';
import { SMALL_RSVD_CLUSTER_SPEC } from '../../../src/compute/cuda/small-dense.js';
import { clusterModuleSpecs } from '../../../src/compute/gpu/kernel-specs.js';
import { nvrtcAvailable } from '../nvrtc/nvrtc-available.js';

const sources = new KernelSources();
const latin1 = new TextDecoder('latin1');

export function describeKernelCompiles(files: readonly string[], arch: 'sm_80' | 'sm_90' = 'sm_80'): void {
  const specs = (arch === 'sm_80' ? allModuleSpecs() : [...allModuleSpecs(), ...clusterModuleSpecs(), SMALL_RSVD_CLUSTER_SPEC]).filter((spec) => files.includes(spec.file));
  describe.skipIf(!nvrtcAvailable)(`${files.join(', ')} compile under NVRTC (${arch})`, () => {
    it('covers at least one specialisation per file', () => {
      expect(new Set(specs.map((s) => s.file))).toEqual(new Set(files));
    });
    it.each(specs.map((spec) => [moduleKey(spec), spec] as const))('%s', (_key, spec) => {
      const compiled = compileKernelModule(spec, sources, { arch, cache: false });
      expect(compiled.output).toBe('cubin');
      expect(compiled.log.trim()).toBe(''); // no warnings either
      const image = latin1.decode(compiled.image);
      for (const name of kernelNames(spec)) expect(image).toContain(`${name}\0`);
    });
  });
}
