import { MissingSymbolError } from '../../errors.js';
import { cuda } from '../bindings.js';
import { check, cudaError } from '../cuda-error.js';
import type { FunctionAttribute, FunctionCache } from '../generated/enums.js';
import { CudaResult } from '../result-code.js';
import type { CUfunction } from './handles.js';
import { out } from './out-params.js';

/** Where one kernel parameter lies in the parameter buffer, and its size, in bytes. */
export interface ParamInfo {
  readonly offset: number;
  readonly size: number;
}

/** cuFuncGetAttribute. */
export function funcGetAttribute(fn: CUfunction, attribute: FunctionAttribute): number {
  check(cuda.cuFuncGetAttribute(out.i32, attribute, fn), 'cuFuncGetAttribute');
  return out.i32[0]!;
}

/** cuFuncSetAttribute (e.g. MAX_DYNAMIC_SHARED_SIZE_BYTES to go above 48 KB of dynamic shared memory). */
export function funcSetAttribute(fn: CUfunction, attribute: FunctionAttribute, value: number): void {
  check(cuda.cuFuncSetAttribute(fn, attribute, value), 'cuFuncSetAttribute');
}

/** cuFuncSetCacheConfig. */
export function funcSetCacheConfig(fn: CUfunction, config: FunctionCache): void {
  check(cuda.cuFuncSetCacheConfig(fn, config), 'cuFuncSetCacheConfig');
}

/** cuFuncGetParamInfo (CUDA 12.4+): offset and size of parameter `index`. */
export function funcGetParamInfo(fn: CUfunction, index: number): ParamInfo {
  check(cuda.cuFuncGetParamInfo(fn, index, out.u64, out.u64b), 'cuFuncGetParamInfo');
  return { offset: Number(out.u64[0]!), size: Number(out.u64b[0]!) };
}

/**
 * Every parameter of a kernel, through cuFuncGetParamInfo; undefined when the
 * driver cannot tell (older than CUDA 12.4, or a function it has no
 * information for), so callers skip validation rather than fail.
 */
export function funcGetParams(fn: CUfunction): ParamInfo[] | undefined {
  let getParamInfo;
  try {
    getParamInfo = cuda.cuFuncGetParamInfo;
  } catch (err) {
    if (err instanceof MissingSymbolError) return undefined;
    throw err;
  }
  const params: ParamInfo[] = [];
  for (;;) {
    const result = getParamInfo(fn, params.length, out.u64, out.u64b) as number;
    // The driver answers INVALID_VALUE for the first index past the last parameter.
    if (result === CudaResult.CUDA_ERROR_INVALID_VALUE) return params;
    if (result === CudaResult.CUDA_ERROR_NOT_SUPPORTED) return undefined;
    if (result !== 0) throw cudaError(result, 'cuFuncGetParamInfo');
    params.push({ offset: Number(out.u64[0]!), size: Number(out.u64b[0]!) });
  }
}

/** cuFuncGetName: the function's (mangled) name. */
export function funcGetName(fn: CUfunction): string {
  out.str[0] = null;
  check(cuda.cuFuncGetName(out.str, fn), 'cuFuncGetName');
  return out.str[0] ?? '';
}
