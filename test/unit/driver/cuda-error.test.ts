import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  check,
  ContextUnusableError,
  CudaError,
  cudaError,
  isStickyResult,
  onStickyError,
} from '../../../src/driver/cuda-error.js';
import { CudaResult, cudaResultName } from '../../../src/driver/result-code.js';
import { GpuError } from '../../../src/errors.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';

beforeAll(() => {
  // Format errors from the static table, as on a machine without a driver.
  process.env.GPUCOMPUTE_LIBCUDA = '/nonexistent/gpucompute-test/libcuda.so.1';
  resetLibraryCache();
});

afterEach(() => onStickyError(undefined));

describe('CudaError', () => {
  it('names the code, the call and the description without a driver', () => {
    const error = new CudaError(CudaResult.CUDA_ERROR_OUT_OF_MEMORY, 'cuMemAlloc_v2');
    expect(error).toBeInstanceOf(GpuError);
    expect(error.code).toBe('CUDA_ERROR');
    expect(error.name).toBe('CudaError');
    expect(error.result).toBe(2);
    expect(error.errorName).toBe('CUDA_ERROR_OUT_OF_MEMORY');
    expect(error.call).toBe('cuMemAlloc_v2');
    expect(error.description.length).toBeGreaterThan(0);
    expect(error.sticky).toBe(false);
    expect(error.message).toMatch(/^cuMemAlloc_v2 failed with CUDA_ERROR_OUT_OF_MEMORY \(2\): /);
    expect(error.message).not.toContain('unusable');
  });

  it('flags sticky errors and says the context is unusable', () => {
    const error = new CudaError(CudaResult.CUDA_ERROR_ILLEGAL_ADDRESS, 'cuStreamSynchronize');
    expect(error.sticky).toBe(true);
    expect(error.errorName).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(error.message).toContain('cuStreamSynchronize failed with CUDA_ERROR_ILLEGAL_ADDRESS (700)');
    expect(error.message).toContain('context is now unusable');
  });

  it('appends a detail such as a JIT log', () => {
    const error = new CudaError(CudaResult.CUDA_ERROR_INVALID_PTX, 'cuModuleLoadDataEx', 'JIT error log:\nline 7: syntax error');
    expect(error.message.split('\n').slice(1)).toEqual(['JIT error log:', 'line 7: syntax error']);
  });

  it('names a code it does not know by number', () => {
    const error = new CudaError(123456, 'cuSomething');
    expect(error.errorName).toBe('CUresult 123456');
    expect(error.message).toContain('cuSomething failed with CUresult 123456 (123456)');
  });
});

describe('sticky results', () => {
  it.each([226, 700, 702, 714, 715, 716, 717, 718, 719, 721, 810, 911])('treats %i as sticky', (code) => {
    expect(isStickyResult(code)).toBe(true);
  });

  it.each([0, 1, 2, 100, 200, 201, 400, 500, 600, 701, 720, 999])('does not treat %i as sticky', (code) => {
    expect(isStickyResult(code)).toBe(false);
  });

  it('tells the registered listener about sticky errors only', () => {
    const seen: CudaError[] = [];
    onStickyError((error) => seen.push(error));
    cudaError(CudaResult.CUDA_ERROR_INVALID_VALUE, 'cuMemcpyHtoD_v2');
    const sticky = cudaError(CudaResult.CUDA_ERROR_LAUNCH_FAILED, 'cuCtxSynchronize');
    expect(seen).toEqual([sticky]);
  });
});

describe('check', () => {
  it('returns on CUDA_SUCCESS and throws the CudaError otherwise', () => {
    expect(() => check(0, 'cuInit')).not.toThrow();
    expect(() => check(CudaResult.CUDA_ERROR_NO_DEVICE, 'cuInit')).toThrow(/cuInit failed with CUDA_ERROR_NO_DEVICE \(100\)/);
  });
});

describe('ContextUnusableError', () => {
  it('carries the sticky error and says what to do', () => {
    const cause = new CudaError(CudaResult.CUDA_ERROR_ILLEGAL_ADDRESS, 'cuStreamSynchronize');
    const error = new ContextUnusableError('The CUDA context of device 0', cause);
    expect(error.code).toBe('CONTEXT_UNUSABLE');
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('The CUDA context of device 0 is unusable');
    expect(error.message).toContain('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(error.message).toContain('restart the process');
  });
});

describe('the CUresult table', () => {
  it('maps codes to their C names', () => {
    expect(cudaResultName(0)).toBe('CUDA_SUCCESS');
    expect(cudaResultName(700)).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(cudaResultName(999)).toBe('CUDA_ERROR_UNKNOWN');
    expect(cudaResultName(-1)).toBeUndefined();
  });
});
