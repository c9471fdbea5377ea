import { GpuError } from '../errors.js';

/** A hiprtc call returned something other than `HIPRTC_SUCCESS`. */
export class HiprtcError extends GpuError {
  /** The `hiprtcResult` code. */
  readonly result: number;
  /** Its name as hiprtcGetErrorString spells it, e.g. `HIPRTC_ERROR_INVALID_OPTION`. */
  readonly errorName: string;
  /** The hiprtc function that failed. */
  readonly call: string;

  constructor(call: string, result: number, errorName: string, options: { detail?: string; headline?: string; code?: string } = {}) {
    super(
      options.code ?? 'HIPRTC_ERROR',
      `${options.headline ? `${options.headline}\n` : ''}${call} failed: ${errorName} (${result})${options.detail ? `\n${options.detail}` : ''}`,
    );
    this.result = result;
    this.errorName = errorName;
    this.call = call;
  }
}

/** Where the compiler's first error points. */
export interface HipDiagnostic {
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly message: string;
  /** The diagnostic line as the compiler wrote it. */
  readonly text: string;
}

/**
 * hiprtc refused the source (`HIPRTC_ERROR_COMPILATION`). The message starts
 * with the first error (clang's `file:line:col: error: text`), the whole log
 * follows and is kept in {@link HiprtcCompileError.log}.
 */
export class HiprtcCompileError extends HiprtcError {
  readonly log: string;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;
  /** Text of the first error. */
  readonly diagnostic: string;

  constructor(call: string, result: number, errorName: string, log: string) {
    const first = firstClangDiagnostic(log);
    super(call, result, errorName, { headline: first.text, detail: `\n${log.trimEnd()}`, code: 'COMPILE_ERROR' });
    this.log = log;
    this.file = first.file;
    this.line = first.line;
    this.column = first.column;
    this.diagnostic = first.message;
  }
}

/**
 * The first error of a clang log (`path:line:col: error: text`, also `fatal error`).
 * hiprtc compiles through a temporary folder, so the path is reduced to its last part.
 */
export function firstClangDiagnostic(log: string): HipDiagnostic {
  const match = /^(.+?):(\d+):(\d+): (?:fatal )?error: (.*)$/m.exec(log);
  if (match) {
    const file = match[1]!.split('/').pop();
    return { file, line: Number(match[2]), column: Number(match[3]), message: match[4]!.trim(), text: match[0].trim() };
  }
  const firstLine = (log.split('\n').find((l) => l.trim() !== '') ?? 'compilation failed (empty log)').trim();
  return { file: undefined, line: undefined, column: undefined, message: firstLine, text: firstLine };
}
