import { expect, it } from 'vitest';
import { KernelSources, moduleKey } from '../../../src/compute/gpu/kernel-sources.js';
import { portableKernelNames as kernelNames, portableModuleSpecs } from '../../../src/compute/gpu/kernel-specs.js';
import { compileHipKernelModule } from '../../../src/compute/hip/kernel-compile.js';
import { isPortableKernel } from '../../../src/compute/gpu/kernel-portability.js';

const sources = new KernelSources();

/** The portable specialisations of the sources in `files`. */
export function portableSpecs(files: readonly string[]) {
  return portableModuleSpecs().filter((spec) => isPortableKernel(spec.file) && files.includes(spec.file));
}

/** One test per specialisation: it compiles for `target` and holds every kernel the backend launches. */
export function compileEach(target: string, files: readonly string[]): void {
  const specs = portableSpecs(files);
  it('has specialisations to compile', () => expect(specs.length).toBeGreaterThan(0));
  for (const spec of specs) {
    it(`${moduleKey(spec)} for ${target}`, () => {
      const { image } = compileHipKernelModule(spec, sources, { target, cache: false });
      const bytes = Buffer.from(image);
      for (const name of kernelNames(spec)) expect(bytes.includes(Buffer.from(`${name}\0`)), name).toBe(true);
    });
  }
}
