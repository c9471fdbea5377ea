import { GpuError } from '../errors.js';

/** `nvrtcResult` codes (nvrtc.h). Codes above 11 exist only in newer NVRTC releases. */
export const NvrtcResult = {
  SUCCESS: 0,
  OUT_OF_MEMORY: 1,
  PROGRAM_CREATION_FAILURE: 2,
  INVALID_INPUT: 3,
  INVALID_PROGRAM: 4,
  INVALID_OPTION: 5,
  COMPILATION: 6,
  BUILTIN_OPERATION_FAILURE: 7,
  NO_NAME_EXPRESSIONS_AFTER_COMPILATION: 8,
  NO_LOWERED_NAMES_BEFORE_COMPILATION: 9,
  NAME_EXPRESSION_NOT_VALID: 10,
  INTERNAL_ERROR: 11,
  TIME_FILE_WRITE_FAILED: 12,
  NO_PCH_CREATE_ATTEMPTED: 13,
  PCH_CREATE_HEAP_EXHAUSTED: 14,
  PCH_CREATE: 15,
  CANCELLED: 16,
  TIME_TRACE_FILE_WRITE_FAILED: 17,
} as const;

/** An NVRTC call returned something other than `NVRTC_SUCCESS`. */
export class NvrtcError extends GpuError {
  /** The `nvrtcResult` code. */
  readonly result: number;
  /** Its name as `nvrtcGetErrorString` spells it, e.g. `NVRTC_ERROR_INVALID_OPTION`. */
  readonly errorName: string;
  /** The NVRTC function that failed. */
  readonly call: string;
  /**
   * @param options.detail - extra text NVRTC gave (for a failed compile, its log), appended.
   * @param options.headline - a line put before everything else (subclasses).
   */
  constructor(
    call: string,
    result: number,
    errorName: string,
    options: { detail?: string; headline?: string; code?: string } = {},
  ) {
    const summary = `${call} failed: ${errorName} (${result})`;
    super(
      options.code ?? 'NVRTC_ERROR',
      `${options.headline ? `${options.headline}\n` : ''}${summary}${options.detail ? `\n${options.detail}` : ''}`,
    );
    this.result = result;
    this.errorName = errorName;
    this.call = call;
  }
}

/** Where the compiler's first error points. */
export interface Diagnostic {
  /** The file named in the diagnostic (the program's name, or an included header). */
  readonly file: string | undefined;
  /** 1-based line, when the diagnostic names one. */
  readonly line: number | undefined;
  /** The diagnostic's text, without the file and line. */
  readonly message: string;
  /** The whole diagnostic line as the compiler wrote it. */
  readonly text: string;
}

/**
 * NVRTC refused the source (`NVRTC_ERROR_COMPILATION`). The message starts with
 * the first error in the compiler's usual form (`kernel.cu(12): error: ...`);
 * the whole log follows it and is kept in {@link CompileError.log}.
 */
export class CompileError extends NvrtcError {
  /** The compiler's full log. */
  readonly log: string;
  /** File of the first error, as the compiler names it. */
  readonly file: string | undefined;
  /** Line of the first error. */
  readonly line: number | undefined;
  /** Text of the first error. */
  readonly diagnostic: string;

  constructor(call: string, result: number, errorName: string, log: string) {
    const first = firstDiagnostic(log);
    super(call, result, errorName, { headline: first.text, detail: `\n${log.trimEnd()}`, code: 'COMPILE_ERROR' });
    this.log = log;
    this.file = first.file;
    this.line = first.line;
    this.diagnostic = first.message;
  }
}

/**
 * Finds the first error in an NVRTC log. Diagnostics read
 * `file(line): error: text`, sometimes `catastrophic error` or with an error
 * number (`error #20-D:`); logs without that shape (an option error, ptxas)
 * give their first non-empty line as the message.
 */
export function firstDiagnostic(log: string): Diagnostic {
  const match = /^(.+?)\((\d+)\): (?:catastrophic |fatal )?error(?: #[\w-]+)?: (.*)$/m.exec(log);
  if (match) return { file: match[1], line: Number(match[2]), message: match[3]!.trim(), text: match[0].trim() };
  const firstLine = (log.split('\n').find((l) => l.trim() !== '') ?? 'compilation failed (empty log)').trim();
  return { file: undefined, line: undefined, message: firstLine, text: firstLine };
}
