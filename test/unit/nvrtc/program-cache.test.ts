import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';
import { Program, type ProgramOptions } from '../../../src/nvrtc/program.js';
import { nvrtcAvailable } from './nvrtc-available.js';

const root = mkdtempSync(join(tmpdir(), 'gpucompute-program-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshCache = () => new KernelCache({ dir: join(root, `cache-${++dirs}`) });

const source = `#include "params.cuh"
template <typename T> __global__ void add(const T* a, const T* b, T* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] * SCALE;
}
`;
const base: ProgramOptions = {
  name: 'add.cu',
  arch: 'sm_80',
  headers: { 'params.cuh': '#pragma once\n' },
  defines: { SCALE: 2 },
  nameExpressions: ['add<float>'],
};

describe.skipIf(!nvrtcAvailable)('Program through the kernel cache (real NVRTC)', () => {
  it('misses, then hits with identical bytes and lowered names, in memory and from disk', () => {
    const cache = freshCache();
    const first = new Program(source, { ...base, cache }).compile();
    const second = new Program(source, { ...base, cache }).compile();
    expect(first.cacheHit).toBe(false);
    expect(second.cacheHit).toBe(true);
    expect(Buffer.from(second.image).equals(Buffer.from(first.image))).toBe(true);
    expect(second.loweredNames).toEqual({ 'add<float>': '_Z3addIfEvPKT_S2_PS0_j' });
    expect(second.loweredNames).toEqual(first.loweredNames);
    expect(second).toMatchObject({ arch: 'sm_80', output: 'cubin', log: first.log });
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, memoryHits: 1, diskHits: 0, writes: 1 });

    // Another process: same folder, empty memory.
    const other = new KernelCache({ dir: cache.dir });
    const third = new Program(source, { ...base, cache: other }).compile();
    expect(third.cacheHit).toBe(true);
    expect(Buffer.from(third.image).equals(Buffer.from(first.image))).toBe(true);
    expect(third.loweredNames).toEqual(first.loweredNames);
    expect(other.stats()).toMatchObject({ hits: 1, diskHits: 1, misses: 0 });
    console.log(
      `add<float> sm_80: first compile ${first.compileMs.toFixed(1)} ms, memory hit ${(second.compileMs * 1000).toFixed(0)} µs, ` +
        `disk hit ${(third.compileMs * 1000).toFixed(0)} µs (whole compile() call)`,
    );
  });

  it('misses when any input changes: source, header, option, arch, define, output, name expressions', () => {
    const cache = freshCache();
    new Program(source, { ...base, cache }).compile();
    const variants: [string, string, ProgramOptions][] = [
      ['source', source.replace('a[i] + b[i]', 'a[i] - b[i]'), base],
      ['header', source, { ...base, headers: { 'params.cuh': '#pragma once\n// changed\n' } }],
      ['option', source, { ...base, lineInfo: true }],
      ['arch', source, { ...base, arch: 'sm_86' }],
      ['define', source, { ...base, defines: { SCALE: 3 } }],
      ['output', source, { ...base, output: 'ptx' }],
      ['name expressions', source, { ...base, nameExpressions: ['add<float>', 'add<int>'] }],
    ];
    for (const [label, variantSource, options] of variants) {
      const result = new Program(variantSource, { ...options, cache }).compile();
      expect(result.cacheHit, label).toBe(false);
    }
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 1 + variants.length, writes: 1 + variants.length });
    // Each variant now hits.
    for (const [label, variantSource, options] of variants) {
      expect(new Program(variantSource, { ...options, cache }).compile().cacheHit, label).toBe(true);
    }
  });

  it('misses when a header in an include path changes, and compiles the new contents', () => {
    const cache = freshCache();
    const includeDir = join(root, 'include');
    mkdirSync(join(includeDir, 'nested'), { recursive: true });
    const header = join(includeDir, 'nested', 'value.cuh');
    writeFileSync(header, '#define VALUE 1\n');
    const checked = 'extern "C" __global__ void k(int* x) { x[0] = VALUE; }\nstatic_assert(VALUE == EXPECTED, "VALUE");\n';
    const options = (expected: number): ProgramOptions => ({
      arch: 'sm_80',
      includePaths: [includeDir],
      defines: { EXPECTED: expected },
      headers: { 'value.cuh': '#include "nested/value.cuh"\n' },
      cache,
    });
    const withInclude = `#include "nested/value.cuh"\n${checked}`;
    expect(new Program(withInclude, options(1)).compile().cacheHit).toBe(false);
    expect(new Program(withInclude, options(1)).compile().cacheHit).toBe(true);
    writeFileSync(header, '#define VALUE 22\n');
    utimesSync(header, new Date(), new Date(Date.now() + 5000));
    // A stale hit would return VALUE 1's image; instead it recompiles and sees 22.
    expect(() => new Program(withInclude, options(1)).compile()).toThrow(/VALUE/);
    expect(new Program(withInclude, options(22)).compile().cacheHit).toBe(false);
  });

  it('cache: false compiles every time and writes nothing', () => {
    const cache = freshCache();
    const a = new Program(source, { ...base, cache: false }).compile();
    const b = new Program(source, { ...base, cache: false }).compile();
    expect([a.cacheHit, b.cacheHit]).toEqual([false, false]);
    expect(readdirSync(cache.dir)).toEqual([]);
  });

  it('a corrupted entry is a miss, recompiled and rewritten', () => {
    const cache = freshCache();
    const first = new Program(source, { ...base, cache }).compile();
    const [file] = readdirSync(cache.dir);
    writeFileSync(join(cache.dir, file!), 'garbage');
    const fresh = new KernelCache({ dir: cache.dir });
    const again = new Program(source, { ...base, cache: fresh }).compile();
    expect(again.cacheHit).toBe(false);
    expect(Buffer.from(again.image).equals(Buffer.from(first.image))).toBe(true);
    const third = new Program(source, { ...base, cache: new KernelCache({ dir: cache.dir }) }).compile();
    expect(third.cacheHit).toBe(true);
  });
});
