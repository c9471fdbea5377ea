import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { readCudaVersion } from '../../../src/nvrtc/cuda-include.js';
import { CompileError } from '../../../src/nvrtc/nvrtc-error.js';
import { compileProgram, Program, type ProgramOptions } from '../../../src/nvrtc/program.js';
import * as nvrtc from '../../../src/nvrtc/raw.js';
import { gpuAvailable } from '../../gpu/gpu-available.js';
import { nvrtcAvailable } from './nvrtc-available.js';

const nvrtcMajor = nvrtcAvailable ? nvrtc.version().major : 0;

const saxpy = `
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
`;

/** Compiles without touching any cache. */
function compile(source: string, options: ProgramOptions = {}) {
  return new Program(source, { arch: 'sm_80', cache: false, ...options }).compile();
}

function ptxText(image: Uint8Array): string {
  return Buffer.from(image).toString('utf8').replace(/\0$/, '');
}

describe('Program option checks (before NVRTC)', () => {
  const bad: [string, ProgramOptions | string][] = [
    ['empty source', ''],
    ['garbage arch', { arch: 'sm90' }],
    ['arch of another vendor', { arch: 'gfx90a' }],
    ['unknown output', { output: 'sass' as 'ptx' }],
    ['bad macro name', { defines: { '1N': 3 } }],
    ['multi-line define', { defines: { N: '1\n#include <x>' } }],
    ['non-finite define', { defines: { N: Number.NaN } }],
    ['unknown std', { std: 'c++98' as 'c++17' }],
    ['duplicate name expressions', { nameExpressions: ['k<int>', 'k<int>'] }],
    ['empty name expression', { nameExpressions: [' '] }],
    ['arch in extra options', { extraOptions: ['--gpu-architecture=sm_90'] }],
    ['-arch in extra options', { extraOptions: ['-arch=sm_90'] }],
    ['empty include path', { includePaths: [''] }],
    ['empty header name', { headers: { '': 'int x;' } }],
    ['file name with a newline', { name: 'a\nb.cu' }],
    ['minimal that is not a boolean', { minimal: 'yes' as unknown as boolean }],
  ];
  it.each(bad)('refuses %s with InvalidArgumentError', (_label, input) => {
    const [source, options] = typeof input === 'string' ? [input, {}] : [saxpy, input];
    expect(() => new Program(source, options)).toThrow(InvalidArgumentError);
  });

  it('keeps the source, the file name (default kernel.cu) and a copy of the options', () => {
    const options: ProgramOptions = { defines: { N: 1 } };
    const program = new Program(saxpy, options);
    expect(program.source).toBe(saxpy);
    expect(program.name).toBe('kernel.cu');
    expect(program.options).not.toBe(options);
    expect(new Program(saxpy, { name: 'saxpy.cu' }).name).toBe('saxpy.cu');
  });

  it('is not changed by later edits to the caller\'s option objects', () => {
    const defines: Record<string, number> = { N: 1 };
    const extraOptions = ['--extra-device-vectorization'];
    const program = new Program(saxpy, { defines, extraOptions });
    defines.N = Number.NaN;
    extraOptions.push('-arch=sm_90');
    expect(program.options.defines).toEqual({ N: 1 });
    expect(program.options.extraOptions).toEqual(['--extra-device-vectorization']);
  });
});

describe.skipIf(!nvrtcAvailable)('Program with the real NVRTC', () => {
  it('compiles to a CUBIN for sm_80 by default output', () => {
    const result = compile(saxpy);
    expect(result.output).toBe('cubin');
    expect(result.arch).toBe('sm_80');
    expect(result.cacheHit).toBe(false);
    expect([...result.image.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    expect(result.compileMs).toBeGreaterThan(0);
    console.log(`saxpy → sm_80 CUBIN: ${result.image.length} bytes in ${result.compileMs.toFixed(1)} ms`);
  });

  it('compiles to PTX on request, for the virtual arch', () => {
    const result = compile(saxpy, { output: 'ptx' });
    expect(result.output).toBe('ptx');
    expect(result.arch).toBe('compute_80');
    expect(ptxText(result.image)).toMatch(/\.entry saxpy\(/);
    expect(compile(saxpy, { arch: 'compute_75' }).output).toBe('ptx');
  });

  it('reports a compile error with the program name and line', () => {
    const source = ['// my kernel', 'extern "C" __global__ void k(float* x) {', '  x[0] = 1.0f;', '  x[1] = not_declared;', '}', ''].join('\n');
    let error: unknown;
    try {
      compile(source, { name: 'my_kernel.cu' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CompileError);
    const compileError = error as CompileError;
    expect(compileError.file).toBe('my_kernel.cu');
    expect(compileError.line).toBe(4);
    expect(compileError.diagnostic).toMatch(/not_declared/);
    expect(compileError.message.split('\n')[0]).toMatch(/^my_kernel\.cu\(4\): error: .*not_declared/);
    expect(compileError.log).toContain('1 error detected in the compilation of "my_kernel.cu"');
  });

  it('points at the header when the error is in an in-memory header', () => {
    const headers = { 'helpers.cuh': '#pragma once\n__device__ float twice(float v) {\n  return 2.0f * v +;\n}\n' };
    const source = '#include "helpers.cuh"\nextern "C" __global__ void k(float* x) { x[0] = twice(x[0]); }\n';
    expect(() => compile(source, { name: 'main.cu', headers })).toThrow(
      expect.objectContaining({ file: 'helpers.cuh', line: 3 }),
    );
  });

  it('compiles against in-memory headers', () => {
    const headers = {
      'config.cuh': '#pragma once\nconstexpr unsigned kBlock = 128;\n',
      'ops/scale.cuh': '#pragma once\n__device__ inline float scale(float v) { return v * kBlock; }\n',
    };
    const source = '#include "config.cuh"\n#include "ops/scale.cuh"\nextern "C" __global__ void k(float* x) { x[threadIdx.x] = scale(x[threadIdx.x]); }\n';
    const result = compile(source, { headers, output: 'ptx' });
    expect(ptxText(result.image)).toMatch(/\.entry k\(/);
    // Without the headers the include fails: the compile really used them.
    expect(() => compile(source)).toThrow(CompileError);
  });

  it('passes defines (valued and bare)', () => {
    const source = [
      'static_assert(BLOCK == 256, "BLOCK must arrive as 256");',
      '#ifndef USE_FAST',
      '#error USE_FAST must be defined',
      '#endif',
      'static_assert(USE_FAST == 1, "a bare define is 1");',
      'extern "C" __global__ void k(float* x) { x[threadIdx.x % BLOCK] = SCALE; }',
    ].join('\n');
    expect(compile(source, { defines: { BLOCK: 256, USE_FAST: true, SCALE: '2.5f' } }).image.length).toBeGreaterThan(0);
    expect(() => compile(source, { defines: { BLOCK: 128, USE_FAST: true, SCALE: '2.5f' } })).toThrow(/BLOCK must arrive as 256/);
    expect(() => compile(source, { defines: { BLOCK: 256, SCALE: '1' } })).toThrow(/USE_FAST must be defined/);
  });

  it('returns lowered names of template kernels from name expressions', () => {
    const source = 'template <typename T> __global__ void add(const T* a, const T* b, T* c, unsigned n) {\n' +
      '  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i];\n}\n';
    const result = compile(source, { nameExpressions: ['add<float>', 'add<double>'], output: 'ptx' });
    expect(result.loweredNames).toEqual({
      'add<float>': '_Z3addIfEvPKT_S2_PS0_j',
      'add<double>': '_Z3addIdEvPKT_S2_PS0_j',
    });
    const text = ptxText(result.image);
    for (const lowered of Object.values(result.loweredNames)) expect(text).toContain(`.entry ${lowered}(`);
  });

  it('applies lineInfo, debug, fastMath, std and extra options', () => {
    const lineInfo = ptxText(compile(saxpy, { output: 'ptx', lineInfo: true }).image);
    expect(lineInfo).toMatch(/^\s*\.loc\s/m);
    expect(ptxText(compile(saxpy, { output: 'ptx' }).image)).not.toMatch(/^\s*\.loc\s/m);
    const fast = ptxText(compile('extern "C" __global__ void k(float* x) { x[0] = __fdividef(1.0f, x[1]) + sinf(x[2]); }', { output: 'ptx', fastMath: true }).image);
    expect(fast).toMatch(/sin\.approx/);
    expect(ptxText(compile(saxpy, { output: 'ptx', debug: true }).image)).toMatch(/\.section\s+\.debug_info/);
    expect(() => compile('static_assert(__cplusplus >= 201703L, "c++17");\n', { std: 'c++14' })).toThrow(CompileError);
    expect(compile('static_assert(__cplusplus >= 201703L, "c++17");\n', {}).image.length).toBeGreaterThan(0);
    expect(() => compile(saxpy, { extraOptions: ['--not-an-nvrtc-option'] })).toThrow(/NVRTC_ERROR_INVALID_OPTION/);
  });

  // On this machine and in CI, /usr/local/cuda/include is CUDA 13 and NVRTC is 11.8.
  const cuda13HeadersWithNvrtc11 = nvrtcMajor === 11 && readCudaVersion('/usr/local/cuda/include') === 13000;
  it.skipIf(!cuda13HeadersWithNvrtc11)('does not add CUDA headers of another major version', () => {
    expect(() => compile('#include <cuda_fp16.h>\n__global__ void k(__half* x) {}\n')).toThrow(
      expect.objectContaining({ file: 'kernel.cu', line: 1 }),
    );
  });

  it.skipIf(nvrtcMajor >= 12)('refuses sm_90a on NVRTC 11', () => {
    expect(() => compile(saxpy, { arch: 'sm_90a' })).toThrow(/needs NVRTC 12/);
  });

  it('refuses archs NVRTC lacks', () => {
    expect(() => compile(saxpy, { arch: 'sm_99' })).toThrow(/cannot compile for sm_99/);
  });

  it.skipIf(gpuAvailable)('without an arch and without a GPU, asks for an arch', () => {
    expect(() => new Program(saxpy, { cache: false }).compile()).toThrow(/no arch was given.*pass arch explicitly/s);
  });

  it('compileProgram is new Program(...).compile()', () => {
    const direct = compileProgram(saxpy, { arch: 'sm_80', cache: false });
    expect(direct.image).toEqual(compile(saxpy).image);
  });
});
