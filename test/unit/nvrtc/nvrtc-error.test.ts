import { describe, expect, it } from 'vitest';
import { GpuError } from '../../../src/errors.js';
import { CompileError, firstDiagnostic, NvrtcError } from '../../../src/nvrtc/nvrtc-error.js';

const log11 = [
  'my_kernel.cu(3): warning: variable "unused" was declared but never referenced',
  '',
  'my_kernel.cu(12): error: identifier "undefined_thing" is undefined',
  '',
  'my_kernel.cu(14): error: expected a ";"',
  '',
  '2 errors detected in the compilation of "my_kernel.cu".',
  '',
].join('\n');

describe('firstDiagnostic', () => {
  it('takes the first error, skipping warnings', () => {
    expect(firstDiagnostic(log11)).toEqual({
      file: 'my_kernel.cu',
      line: 12,
      message: 'identifier "undefined_thing" is undefined',
      text: 'my_kernel.cu(12): error: identifier "undefined_thing" is undefined',
    });
  });

  it('reads catastrophic errors, numbered errors and header paths with parentheses', () => {
    expect(firstDiagnostic('kernel.cu(1): catastrophic error: cannot open source file "x.h"\n')).toMatchObject({
      file: 'kernel.cu',
      line: 1,
      message: 'cannot open source file "x.h"',
    });
    expect(firstDiagnostic('inc/a (copy).cuh(7): error #20-D: identifier "q" is undefined')).toMatchObject({
      file: 'inc/a (copy).cuh',
      line: 7,
      message: 'identifier "q" is undefined',
    });
  });

  it('falls back to the first non-empty line when the log has no file and line', () => {
    expect(firstDiagnostic('\nnvrtc: error: invalid value for --gpu-architecture (-arch)\n')).toEqual({
      file: undefined,
      line: undefined,
      message: 'nvrtc: error: invalid value for --gpu-architecture (-arch)',
      text: 'nvrtc: error: invalid value for --gpu-architecture (-arch)',
    });
  });
});

describe('NvrtcError and CompileError', () => {
  it('NvrtcError carries the code, its name and the call', () => {
    const error = new NvrtcError('nvrtcCompileProgram', 5, 'NVRTC_ERROR_INVALID_OPTION', { detail: 'nvrtc: error: bad' });
    expect(error).toBeInstanceOf(GpuError);
    expect(error.result).toBe(5);
    expect(error.errorName).toBe('NVRTC_ERROR_INVALID_OPTION');
    expect(error.call).toBe('nvrtcCompileProgram');
    expect(error.code).toBe('NVRTC_ERROR');
    expect(error.message).toBe('nvrtcCompileProgram failed: NVRTC_ERROR_INVALID_OPTION (5)\nnvrtc: error: bad');
  });

  it('CompileError starts its message with the first error and keeps the whole log', () => {
    const error = new CompileError('nvrtcCompileProgram', 6, 'NVRTC_ERROR_COMPILATION', log11);
    expect(error).toBeInstanceOf(NvrtcError);
    expect(error.code).toBe('COMPILE_ERROR');
    expect(error.file).toBe('my_kernel.cu');
    expect(error.line).toBe(12);
    expect(error.diagnostic).toBe('identifier "undefined_thing" is undefined');
    expect(error.log).toBe(log11);
    expect(error.message.split('\n')[0]).toBe('my_kernel.cu(12): error: identifier "undefined_thing" is undefined');
    expect(error.message).toContain('my_kernel.cu(14): error: expected a ";"');
  });
});
