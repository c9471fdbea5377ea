import { describe, expect, it } from 'vitest';
import { CompileError, NvrtcError } from '../../../src/nvrtc/nvrtc-error.js';
import * as nvrtc from '../../../src/nvrtc/raw.js';
import { nvrtcAvailable } from './nvrtc-available.js';

const vectorAdd = `
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
`;

/** Creates, compiles and always destroys a program; returns what `read` took from it. */
function withProgram<T>(
  source: string,
  options: string[],
  read: (program: nvrtc.NvrtcProgram) => T,
  setup: (program: nvrtc.NvrtcProgram) => void = () => {},
  headers: nvrtc.HeaderSource[] = [],
): T {
  const program = nvrtc.createProgram(source, 'vector_add.cu', headers);
  try {
    setup(program);
    nvrtc.compileProgram(program, options);
    return read(program);
  } finally {
    nvrtc.destroyProgram(program);
  }
}

describe.skipIf(!nvrtcAvailable)('NVRTC raw tier (real NVRTC)', () => {
  it('reports its version and supported archs', () => {
    const { major, minor } = nvrtc.version();
    expect(major).toBeGreaterThanOrEqual(11);
    expect(minor).toBeGreaterThanOrEqual(0);
    const archs = nvrtc.getSupportedArchs();
    expect(archs).toContain(80);
    expect(archs).toEqual([...archs].sort((a, b) => a - b));
    console.log(`NVRTC ${major}.${minor}, archs ${archs.join(' ')}`);
  });

  it('compiles to a CUBIN for sm_80 (an ELF for the CUDA machine)', () => {
    const cubin = withProgram(vectorAdd, ['--gpu-architecture=sm_80'], nvrtc.getCUBIN);
    expect([...cubin.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    const machine = new DataView(cubin.buffer, cubin.byteOffset).getUint16(18, true);
    expect(machine).toBe(190); // EM_CUDA
    expect(Buffer.from(cubin).includes('vector_add')).toBe(true);
  });

  it('compiles to PTX for compute_80, NUL-terminated', () => {
    const ptx = withProgram(vectorAdd, ['--gpu-architecture=compute_80'], nvrtc.getPTX);
    expect(ptx[ptx.length - 1]).toBe(0);
    const text = Buffer.from(ptx.subarray(0, -1)).toString('utf8');
    expect(text).toMatch(/^\.target sm_80$/m);
    expect(text).toMatch(/\.entry vector_add\(/);
  });

  it('refuses CUBIN output of a virtual-arch compile', () => {
    expect(() => withProgram(vectorAdd, ['--gpu-architecture=compute_80'], nvrtc.getCUBIN)).toThrow(/virtual arch/);
  });

  it('resolves #include from in-memory headers', () => {
    const source = '#include "scale.cuh"\nextern "C" __global__ void k(float* x) { x[0] = scale(x[0]); }\n';
    const header = { name: 'scale.cuh', source: '__device__ inline float scale(float v) { return 3.0f * v; }\n' };
    const ptx = withProgram(source, ['--gpu-architecture=compute_80'], nvrtc.getPTX, undefined, [header]);
    expect(Buffer.from(ptx).toString()).toContain('.entry k(');
  });

  it('gives lowered names of template instantiations', () => {
    const source = 'template <typename T> __global__ void add(T* x, T v) { x[threadIdx.x] += v; }\n';
    const names = withProgram(
      source,
      ['--gpu-architecture=compute_80'],
      (program) => ({
        f: nvrtc.getLoweredName(program, 'add<float>'),
        i: nvrtc.getLoweredName(program, 'add<int>'),
        ptx: Buffer.from(nvrtc.getPTX(program)).toString(),
      }),
      (program) => {
        nvrtc.addNameExpression(program, 'add<float>');
        nvrtc.addNameExpression(program, 'add<int>');
      },
    );
    expect(names.f).toBe('_Z3addIfEvPT_S0_');
    expect(names.i).toBe('_Z3addIiEvPT_S0_');
    expect(names.ptx).toContain(`.entry ${names.f}(`);
    expect(names.ptx).toContain(`.entry ${names.i}(`);
  });

  it('throws CompileError with the log, file and line for a refused source', () => {
    const source = 'extern "C" __global__ void k(int* x) {\n  x[0] = 1;\n  x[1] = undefined_name;\n}\n';
    const program = nvrtc.createProgram(source, 'broken.cu');
    try {
      let error: unknown;
      try {
        nvrtc.compileProgram(program, ['--gpu-architecture=sm_80']);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(CompileError);
      const compileError = error as CompileError;
      expect(compileError.result).toBe(6);
      expect(compileError.errorName).toBe('NVRTC_ERROR_COMPILATION');
      expect(compileError.file).toBe('broken.cu');
      expect(compileError.line).toBe(3);
      expect(compileError.diagnostic).toContain('undefined_name');
      expect(compileError.log).toBe(nvrtc.getProgramLog(program));
    } finally {
      nvrtc.destroyProgram(program);
    }
  });

  it('throws NvrtcError naming the result for a bad option, with the log', () => {
    let error: unknown;
    try {
      withProgram(vectorAdd, ['--no-such-option'], () => undefined);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(NvrtcError);
    expect(error).not.toBeInstanceOf(CompileError);
    expect((error as NvrtcError).errorName).toBe('NVRTC_ERROR_INVALID_OPTION');
    expect((error as NvrtcError).call).toBe('nvrtcCompileProgram');
    expect((error as NvrtcError).message).toContain('--no-such-option');
  });

  it('names result codes through nvrtcGetErrorString', () => {
    expect(nvrtc.getErrorString(0)).toBe('NVRTC_SUCCESS');
    expect(nvrtc.getErrorString(6)).toBe('NVRTC_ERROR_COMPILATION');
  });

  it('reports an invalid name expression as NvrtcError', () => {
    expect(() =>
      withProgram(
        vectorAdd,
        ['--gpu-architecture=compute_80'],
        (program) => nvrtc.getLoweredName(program, 'never_added<int>'),
      ),
    ).toThrow(NvrtcError);
  });
});
