import { lazyFunctions } from '../ffi/lazy-functions.js';
import { openHiprtc } from './library.js';

/**
 * hiprtc's C API as koffi prototypes, bound on first use (the "sys" level);
 * `hiprtc.ts` holds the checked functions. A `hiprtcProgram` is a bigint.
 */
export const hiprtcFunctions = lazyFunctions(openHiprtc, {
  hiprtcGetErrorString: 'const char *hiprtcGetErrorString(int result)',
  hiprtcVersion: 'int hiprtcVersion(_Out_ int *major, _Out_ int *minor)',
  hiprtcCreateProgram:
    'int hiprtcCreateProgram(_Out_ void **prog, const char *src, const char *name, int numHeaders, ' +
    'const char **headers, const char **includeNames)',
  hiprtcDestroyProgram: 'int hiprtcDestroyProgram(_Inout_ void **prog)',
  hiprtcCompileProgram: 'int hiprtcCompileProgram(void *prog, int numOptions, const char **options)',
  hiprtcGetProgramLogSize: 'int hiprtcGetProgramLogSize(void *prog, _Out_ size_t *logSizeRet)',
  hiprtcGetProgramLog: 'int hiprtcGetProgramLog(void *prog, _Out_ uint8_t *log)',
  hiprtcGetCodeSize: 'int hiprtcGetCodeSize(void *prog, _Out_ size_t *codeSizeRet)',
  hiprtcGetCode: 'int hiprtcGetCode(void *prog, _Out_ uint8_t *code)',
  hiprtcAddNameExpression: 'int hiprtcAddNameExpression(void *prog, const char *nameExpression)',
  hiprtcGetLoweredName: 'int hiprtcGetLoweredName(void *prog, const char *nameExpression, _Out_ const char **loweredName)',
});
