/**
 * hiprtc's C API as checked functions (the raw tier): each returns its outputs
 * and throws {@link HiprtcError} (or {@link HiprtcCompileError} with the log for
 * a refused source). Programs are bigint handles for {@link destroyProgram}.
 *
 * Some hiprtc releases abort the whole process when asked to compile for a
 * target they do not know; {@link compileProgram} does not check targets, so
 * callers should go through `HipProgram`, which refuses unknown ones first.
 */
import { HiprtcResult } from './generated/hiprtc-result.js';
import { hiprtcFunctions as rtc } from './hiprtc-bindings.js';
import { HiprtcCompileError, HiprtcError } from './hiprtc-error.js';

/** A `hiprtcProgram` handle. */
export type HiprtcProgram = bigint;

/** An in-memory header: what `#include "name"` resolves to. */
export interface HiprtcHeader {
  readonly name: string;
  readonly source: string;
}

const sizeOut = new BigUint64Array(1);
const handleOut = new BigUint64Array(1);
const intOut = new Int32Array(1);
const intOut2 = new Int32Array(1);

/** The name of a `hiprtcResult`, e.g. `HIPRTC_ERROR_COMPILATION`. */
export function getErrorString(result: number): string {
  return (rtc.hiprtcGetErrorString(result) as string | null) ?? `HIPRTC error ${result}`;
}

function check(call: string, result: number): void {
  if (result !== HiprtcResult.SUCCESS) throw new HiprtcError(call, result, getErrorString(result));
}

/** hiprtcVersion. */
export function version(): { major: number; minor: number } {
  check('hiprtcVersion', rtc.hiprtcVersion(intOut, intOut2));
  return { major: intOut[0]!, minor: intOut2[0]! };
}

/** hiprtcCreateProgram. */
export function createProgram(source: string, name: string, headers: readonly HiprtcHeader[] = []): HiprtcProgram {
  const contents = headers.length > 0 ? headers.map((h) => h.source) : null;
  const names = headers.length > 0 ? headers.map((h) => h.name) : null;
  check('hiprtcCreateProgram', rtc.hiprtcCreateProgram(handleOut, source, name, headers.length, contents, names));
  return handleOut[0]!;
}

/** hiprtcDestroyProgram. */
export function destroyProgram(program: HiprtcProgram): void {
  check('hiprtcDestroyProgram', rtc.hiprtcDestroyProgram(new BigUint64Array([program])));
}

/**
 * hiprtcCompileProgram with options such as `--offload-arch=gfx90a`. A refused
 * source throws {@link HiprtcCompileError} carrying the log.
 */
export function compileProgram(program: HiprtcProgram, options: readonly string[] = []): void {
  const result = rtc.hiprtcCompileProgram(program, options.length, options.length > 0 ? options : null) as number;
  if (result === HiprtcResult.SUCCESS) return;
  const log = getProgramLog(program);
  if (result === HiprtcResult.COMPILATION) throw new HiprtcCompileError('hiprtcCompileProgram', result, getErrorString(result), log);
  throw new HiprtcError('hiprtcCompileProgram', result, getErrorString(result), { detail: log.trim() || undefined });
}

/** The compiler's log of the last compile; empty when it had nothing to say. */
export function getProgramLog(program: HiprtcProgram): string {
  check('hiprtcGetProgramLogSize', rtc.hiprtcGetProgramLogSize(program, sizeOut));
  const buffer = Buffer.alloc(Number(sizeOut[0]));
  if (buffer.length > 0) check('hiprtcGetProgramLog', rtc.hiprtcGetProgramLog(program, buffer));
  return buffer.toString('utf8').replace(/\0+$/, '');
}

/** The compiled code object, ready for hipModuleLoadData. */
export function getCode(program: HiprtcProgram): Uint8Array {
  check('hiprtcGetCodeSize', rtc.hiprtcGetCodeSize(program, sizeOut));
  const code = new Uint8Array(Number(sizeOut[0]));
  if (code.length === 0) throw new HiprtcError('hiprtcGetCodeSize', HiprtcResult.INVALID_PROGRAM, 'the program holds no code');
  check('hiprtcGetCode', rtc.hiprtcGetCode(program, code));
  return code;
}

/** hiprtcAddNameExpression: registers e.g. `add<float>` before compiling. */
export function addNameExpression(program: HiprtcProgram, expression: string): void {
  check('hiprtcAddNameExpression', rtc.hiprtcAddNameExpression(program, expression));
}

/** hiprtcGetLoweredName: the mangled name of a registered expression, after compiling. */
export function getLoweredName(program: HiprtcProgram, expression: string): string {
  const out: (string | null)[] = [null];
  check('hiprtcGetLoweredName', rtc.hiprtcGetLoweredName(program, expression, out));
  if (!out[0]) throw new HiprtcError('hiprtcGetLoweredName', HiprtcResult.NAME_EXPRESSION_NOT_VALID, 'no lowered name');
  return out[0];
}
