import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { allModuleSpecs, kernelNames } from '../../../src/compute/cuda/kernel-specs.js';
import { binarySpec, castSpec, reduceSpec, transposeSpec, unarySpec } from '../../../src/compute/gpu/kernel-specs.js';
import { defaultKernelsDir, KernelSources, moduleKey } from '../../../src/compute/gpu/kernel-sources.js';
import { InvalidArgumentError } from '../../../src/errors.js';

describe('kernel specialisations', () => {
  it('names each specialisation by file and sorted defines', () => {
    expect(moduleKey(unarySpec('gelu', 'bf16'))).toBe('unary.cu?GC_DTYPE=GC_BF16&GC_OP=OpGelu');
    expect(moduleKey(reduceSpec('mean', 'f32'))).toBe(moduleKey(reduceSpec('sum', 'f32')));
    expect(moduleKey(castSpec('i32', 'f16'))).toBe('cast.cu?GC_DST=GC_F16&GC_SRC=GC_I32');
    expect(moduleKey(transposeSpec('i32'))).toBe(moduleKey(transposeSpec('f32')));
    expect(moduleKey(transposeSpec('bf16'))).toBe(moduleKey(transposeSpec('f16')));
  });

  it('lists every specialisation once, i32 only for the ops the front-end allows', () => {
    const keys = allModuleSpecs().map(moduleKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain(moduleKey(binarySpec('mul', 'i32')));
    expect(keys).not.toContain(moduleKey(binarySpec('div', 'i32')));
    expect(keys).not.toContain(moduleKey(unarySpec('exp', 'i32')));
    expect(keys.filter((k) => k.startsWith('cast.cu'))).toHaveLength(12);
  });

  it('every spec names an existing source and the kernels it defines', () => {
    const dir = defaultKernelsDir();
    for (const spec of allModuleSpecs()) {
      expect(existsSync(join(dir, spec.file))).toBe(true);
      expect(kernelNames(spec).length).toBeGreaterThan(0);
    }
  });

  it('reads sources and every header from the kernels folder', () => {
    const sources = new KernelSources();
    expect(sources.source('unary.cu')).toContain('unary_vec');
    expect(Object.keys(sources.headers())).toEqual(expect.arrayContaining(['dtype.cuh', 'philox.cuh', 'row.cuh']));
    expect(() => sources.source('../package.json')).toThrow(InvalidArgumentError);
  });
});
