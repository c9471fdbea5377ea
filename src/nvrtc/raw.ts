/**
 * NVRTC's C API as checked functions (the raw tier): each returns its outputs
 * and throws {@link NvrtcError} (or {@link CompileError} for a refused source)
 * instead of returning a result code. Programs are `bigint` handles that the
 * caller must pass to {@link destroyProgram}; the safe tier (`Program`) does that
 * for you.
 */
import { InvalidArgumentError } from '../errors.js';
import { nvrtcFunctions as nv } from './bindings.js';
import { CompileError, NvrtcError, NvrtcResult } from './nvrtc-error.js';

/** An `nvrtcProgram` handle. */
export type NvrtcProgram = bigint;

/** An in-memory header: what `#include "name"` resolves to. */
export interface HeaderSource {
  readonly name: string;
  readonly source: string;
}

// Reused out-parameters: NVRTC calls are synchronous, so one of each suffices.
const sizeOut = new BigUint64Array(1);
const handleOut = new BigUint64Array(1);
const intOut = new Int32Array(1);
const intOut2 = new Int32Array(1);

/** The name of an `nvrtcResult`, e.g. `NVRTC_ERROR_COMPILATION`. */
export function getErrorString(result: number): string {
  return (nv.nvrtcGetErrorString(result) as string | null) ?? `NVRTC error ${result}`;
}

function check(call: string, result: number): void {
  if (result !== NvrtcResult.SUCCESS) throw new NvrtcError(call, result, getErrorString(result));
}

/** NVRTC's version (`nvrtcVersion`), e.g. `{ major: 12, minor: 8 }`. */
export function version(): { major: number; minor: number } {
  check('nvrtcVersion', nv.nvrtcVersion(intOut, intOut2));
  return { major: intOut[0]!, minor: intOut2[0]! };
}

/** The `sm_XY` numbers NVRTC can compile for (e.g. `[75, 80, 86, 89, 90, ...]`), ascending. */
export function getSupportedArchs(): number[] {
  check('nvrtcGetNumSupportedArchs', nv.nvrtcGetNumSupportedArchs(intOut));
  const archs = new Int32Array(intOut[0]!);
  if (archs.length > 0) check('nvrtcGetSupportedArchs', nv.nvrtcGetSupportedArchs(archs));
  return [...archs].sort((a, b) => a - b);
}

/**
 * Creates a program from CUDA C++ source (`nvrtcCreateProgram`).
 * @param name - the file name NVRTC uses in diagnostics and `__FILE__`.
 * @param headers - sources that `#include "<name>"` finds before any include path.
 */
export function createProgram(source: string, name: string, headers: readonly HeaderSource[] = []): NvrtcProgram {
  const contents = headers.length > 0 ? headers.map((h) => h.source) : null;
  const names = headers.length > 0 ? headers.map((h) => h.name) : null;
  check('nvrtcCreateProgram', nv.nvrtcCreateProgram(handleOut, source, name, headers.length, contents, names));
  return handleOut[0]!;
}

/** Frees a program (`nvrtcDestroyProgram`). */
export function destroyProgram(program: NvrtcProgram): void {
  const slot = new BigUint64Array([program]);
  check('nvrtcDestroyProgram', nv.nvrtcDestroyProgram(slot));
}

/**
 * Compiles (`nvrtcCompileProgram`) with options such as
 * `--gpu-architecture=sm_90`. A refused source throws {@link CompileError}
 * carrying the log; other failures (a bad option, say) throw {@link NvrtcError}
 * with the log appended.
 */
export function compileProgram(program: NvrtcProgram, options: readonly string[] = []): void {
  const result = nv.nvrtcCompileProgram(program, options.length, options.length > 0 ? options : null) as number;
  if (result === NvrtcResult.SUCCESS) return;
  const log = getProgramLog(program);
  if (result === NvrtcResult.COMPILATION) {
    throw new CompileError('nvrtcCompileProgram', result, getErrorString(result), log);
  }
  throw new NvrtcError('nvrtcCompileProgram', result, getErrorString(result), { detail: log.trim() || undefined });
}

/** The compiler's log (warnings and errors) of the last compile; empty when there was nothing to say. */
export function getProgramLog(program: NvrtcProgram): string {
  check('nvrtcGetProgramLogSize', nv.nvrtcGetProgramLogSize(program, sizeOut));
  const buffer = Buffer.alloc(Number(sizeOut[0]));
  if (buffer.length > 0) check('nvrtcGetProgramLog', nv.nvrtcGetProgramLog(program, buffer));
  return buffer.toString('utf8').replace(/\0+$/, '');
}

/**
 * The PTX of a compiled program, as bytes including NVRTC's terminating NUL,
 * so the image can go straight to `cuModuleLoadData`.
 */
export function getPTX(program: NvrtcProgram): Uint8Array {
  check('nvrtcGetPTXSize', nv.nvrtcGetPTXSize(program, sizeOut));
  const image = new Uint8Array(Number(sizeOut[0]));
  check('nvrtcGetPTX', nv.nvrtcGetPTX(program, image));
  return image;
}

/** The CUBIN of a program compiled for a real architecture (`sm_XY`, not `compute_XY`). */
export function getCUBIN(program: NvrtcProgram): Uint8Array {
  check('nvrtcGetCUBINSize', nv.nvrtcGetCUBINSize(program, sizeOut));
  const image = new Uint8Array(Number(sizeOut[0]));
  if (image.length === 0) {
    throw new InvalidArgumentError('NVRTC produced no CUBIN: the program was compiled for a virtual arch (compute_XY)');
  }
  check('nvrtcGetCUBIN', nv.nvrtcGetCUBIN(program, image));
  return image;
}

/**
 * Registers a name expression (e.g. `add<float>`) before compiling, so its
 * mangled name can be read back with {@link getLoweredName}.
 */
export function addNameExpression(program: NvrtcProgram, expression: string): void {
  check('nvrtcAddNameExpression', nv.nvrtcAddNameExpression(program, expression));
}

/** The mangled (lowered) name of a registered name expression, after compiling. */
export function getLoweredName(program: NvrtcProgram, expression: string): string {
  const out: (string | null)[] = [null];
  check('nvrtcGetLoweredName', nv.nvrtcGetLoweredName(program, expression, out));
  const lowered = out[0];
  if (!lowered) throw new NvrtcError('nvrtcGetLoweredName', NvrtcResult.NAME_EXPRESSION_NOT_VALID, 'no lowered name');
  return lowered;
}
