/**
 * `-minimal` reaches NVRTC only where NVRTC knows it (12.4 on), and the kernel sources ask for it.
 * NVRTC is replaced by a stand-in that reports a version and records the options it is given, so
 * every version is covered on any machine; the real NVRTC 11.8 of CI compiles the kernels with
 * the option dropped (the kernel compile tests).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const nvrtc = vi.hoisted(() => ({ version: { major: 12, minor: 4 }, options: [] as string[][] }));

vi.mock('../../../src/nvrtc/raw.js', () => ({
  version: () => nvrtc.version,
  getSupportedArchs: () => [75, 80, 86, 89, 90],
  createProgram: () => 1n,
  destroyProgram: () => {},
  compileProgram: (_program: unknown, options: readonly string[]) => {
    nvrtc.options.push([...options]);
  },
  getProgramLog: () => '',
  getCUBIN: () => new Uint8Array([0x7f, 0x45, 0x4c, 0x46]),
  getPTX: () => new Uint8Array([0]),
  addNameExpression: () => {},
  getLoweredName: () => '',
}));

const source = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.f; }';

/** The options one compile passes to NVRTC of `version` (a fresh module: Program asks NVRTC's version once per process). */
async function optionsFor(version: { major: number; minor: number }, minimal: boolean | undefined): Promise<string[]> {
  nvrtc.version = version;
  const { Program } = await import('../../../src/nvrtc/program.js');
  new Program(source, { arch: 'sm_80', cache: false, cudaIncludes: false, ...(minimal === undefined ? {} : { minimal }) }).compile();
  return nvrtc.options.at(-1)!;
}

beforeEach(() => {
  vi.resetModules();
  nvrtc.options = [];
});

describe('Program minimal', () => {
  it.each([
    [{ major: 12, minor: 4 }, true],
    [{ major: 12, minor: 9 }, true],
    [{ major: 13, minor: 0 }, true],
    [{ major: 12, minor: 3 }, false],
    [{ major: 11, minor: 8 }, false],
  ])('NVRTC %o gets -minimal: %s', async (version, expected) => {
    expect((await optionsFor(version, true)).includes('-minimal')).toBe(expected);
  });

  it('is off unless asked for', async () => {
    expect(await optionsFor({ major: 13, minor: 0 }, undefined)).not.toContain('-minimal');
    expect(await optionsFor({ major: 13, minor: 0 }, false)).not.toContain('-minimal');
  });

  it('is part of the cache key: a compile with it is another entry than one without', async () => {
    nvrtc.version = { major: 13, minor: 0 };
    const { Program } = await import('../../../src/nvrtc/program.js');
    const { KernelCache } = await import('../../../src/nvrtc/kernel-cache.js');
    const dir = mkdtempSync(join(tmpdir(), 'gc-minimal-'));
    try {
      const cache = new KernelCache({ dir });
      const compile = (minimal: boolean) => new Program(source, { arch: 'sm_80', cache, cudaIncludes: false, minimal }).compile().cacheHit;
      expect(compile(true)).toBe(false);
      expect(compile(false)).toBe(false);
      expect(compile(true)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kernel modules', () => {
  it('compile with -minimal where NVRTC has it, and without it before 12.4', async () => {
    for (const [version, expected] of [
      [{ major: 13, minor: 0 }, true],
      [{ major: 11, minor: 8 }, false],
    ] as const) {
      vi.resetModules();
      nvrtc.version = version;
      const { compileKernelModule } = await import('../../../src/compute/cuda/kernel-compile.js');
      const { KernelSources } = await import('../../../src/compute/gpu/kernel-sources.js');
      compileKernelModule({ file: 'fill.cu' }, new KernelSources(), { arch: 'sm_90', cache: false });
      expect(nvrtc.options.at(-1)!.includes('-minimal')).toBe(expected);
    }
  });
});
