import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openNvrtc } from './library.js';

/**
 * NVRTC's C API as koffi prototypes, bound on first use (the "sys" level). An
 * `nvrtcProgram` is an opaque pointer, carried as a `bigint`. Callers should use
 * the checked functions in `raw.ts`, which turn result codes into errors and
 * out-parameters into return values.
 */
export const nvrtcFunctions = lazyFunctions(openNvrtc, {
  nvrtcGetErrorString: 'const char *nvrtcGetErrorString(int result)',
  nvrtcVersion: 'int nvrtcVersion(_Out_ int *major, _Out_ int *minor)',
  nvrtcGetNumSupportedArchs: 'int nvrtcGetNumSupportedArchs(_Out_ int *numArchs)',
  nvrtcGetSupportedArchs: 'int nvrtcGetSupportedArchs(_Out_ int *supportedArchs)',
  nvrtcCreateProgram:
    'int nvrtcCreateProgram(_Out_ void **prog, const char *src, const char *name, int numHeaders, ' +
    'const char **headers, const char **includeNames)',
  nvrtcDestroyProgram: 'int nvrtcDestroyProgram(_Inout_ void **prog)',
  nvrtcCompileProgram: 'int nvrtcCompileProgram(void *prog, int numOptions, const char **options)',
  nvrtcGetProgramLogSize: 'int nvrtcGetProgramLogSize(void *prog, _Out_ size_t *logSizeRet)',
  nvrtcGetProgramLog: 'int nvrtcGetProgramLog(void *prog, _Out_ uint8_t *log)',
  nvrtcGetPTXSize: 'int nvrtcGetPTXSize(void *prog, _Out_ size_t *ptxSizeRet)',
  nvrtcGetPTX: 'int nvrtcGetPTX(void *prog, _Out_ uint8_t *ptx)',
  nvrtcGetCUBINSize: 'int nvrtcGetCUBINSize(void *prog, _Out_ size_t *cubinSizeRet)',
  nvrtcGetCUBIN: 'int nvrtcGetCUBIN(void *prog, _Out_ uint8_t *cubin)',
  nvrtcAddNameExpression: 'int nvrtcAddNameExpression(void *prog, const char *nameExpression)',
  nvrtcGetLoweredName: 'int nvrtcGetLoweredName(void *prog, const char *nameExpression, _Out_ const char **loweredName)',
});
