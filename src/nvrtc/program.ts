import { performance } from 'node:perf_hooks';
import { InvalidArgumentError } from '../errors.js';
import { currentDeviceArch, parseArch, resolveArch, type OutputKind } from './arch.js';
import { fingerprintIncludeDirs, kernelCacheKey } from './cache-key.js';
import { autoCudaIncludes } from './cuda-include.js';
import { KernelCache } from './kernel-cache.js';
import * as raw from './raw.js';

/** C++ dialects NVRTC accepts (`c++20` needs NVRTC 12). */
export type CppStandard = 'c++03' | 'c++11' | 'c++14' | 'c++17' | 'c++20';
const STANDARDS: readonly CppStandard[] = ['c++03', 'c++11', 'c++14', 'c++17', 'c++20'];

/** How to compile a {@link Program}. Every field is optional. */
export interface ProgramOptions {
  /** File name used in diagnostics and `__FILE__`; default `kernel.cu`. */
  name?: string;
  /** In-memory headers: `#include "<key>"` finds the value before any include path. */
  headers?: Readonly<Record<string, string>>;
  /** Extra include folders (their files are fingerprinted for the cache key). */
  includePaths?: readonly string[];
  /** Macros: `{ N: 256 }` → `-DN=256`; `true` defines the name alone (as 1). */
  defines?: Readonly<Record<string, string | number | true>>;
  /**
   * Target arch, e.g. `sm_90`, `sm_90a` or `compute_80`. Default: the current
   * device's, clamped to what NVRTC supports (see `resolveArch`).
   */
  arch?: string;
  /**
   * The arch of the device the code is for (`sm_XY`), where that is not the current CUDA device:
   * compiling ahead of time, or without a GPU. The default arch is then derived from it, and an
   * arch-specific target (`sm_90a`) is checked against it, exactly as for a present device of
   * that arch, so the cache keys are the ones that device's own compiles look up.
   */
  deviceArch?: string;
  /** `cubin` (default: runs on the device's own arch) or `ptx` (compiled by the driver at load time). */
  output?: OutputKind;
  /** Line information for profilers (`--generate-line-info`). */
  lineInfo?: boolean;
  /** Device debug information, optimisations off (`--device-debug`). */
  debug?: boolean;
  /** Fast, less accurate math (`--use_fast_math`). */
  fastMath?: boolean;
  /** C++ dialect; default `c++17`. */
  std?: CppStandard;
  /** Expressions such as `add<float>` whose mangled names the result reports in `loweredNames`. */
  nameExpressions?: readonly string[];
  /**
   * Add the CUDA toolkit's include folders (for `cuda_fp16.h`, `cuda_bf16.h`;
   * `include/cccl` on CUDA 13) when they match NVRTC's major version; default true.
   */
  cudaIncludes?: boolean;
  /**
   * Compile with NVRTC's `-minimal` where it has it (12.4 and later; an older NVRTC compiles as
   * without it): the CUDA runtime's declarations (texture and surface functions, the `cuda*`
   * device runtime calls, launches from device code, the runtime's types such as `cudaError_t`)
   * are left out of the program, so a source that uses none of them compiles faster. Default false.
   */
  minimal?: boolean;
  /** Further NVRTC options, passed as given (the arch belongs in `arch`). */
  extraOptions?: readonly string[];
  /** Where compiled images are cached; default {@link KernelCache.shared}; `false` compiles every time. */
  cache?: KernelCache | false;
}

/** The result of {@link Program.compile}. */
export interface CompiledProgram {
  /** CUBIN bytes, or PTX text bytes ending in a NUL; either goes straight to `Module.load`. */
  readonly image: Uint8Array;
  readonly output: OutputKind;
  /** The arch compiled for, e.g. `sm_90` (`compute_90` for PTX). */
  readonly arch: string;
  /** The compiler's log (warnings); empty when it had nothing to say. */
  readonly log: string;
  /** Name expression → mangled name to pass to `module.getFunction`. */
  readonly loweredNames: Readonly<Record<string, string>>;
  /** True when the image came from the kernel cache. */
  readonly cacheHit: boolean;
  /** Milliseconds `compile()` took, cache lookup included. */
  readonly compileMs: number;
}

/** What a compile and a cache lookup share: the resolved target, the NVRTC options, the cache and key. */
interface CompilePlan {
  readonly arch: string;
  readonly output: OutputKind;
  readonly nvrtcOptions: string[];
  readonly headers: Readonly<Record<string, string>>;
  readonly nameExpressions: readonly string[];
  readonly cache: KernelCache | undefined;
  /** Undefined when nothing is cached (caching off, or an include folder could not be fingerprinted). */
  readonly key: string | undefined;
}

interface CompilerInfo {
  readonly major: number;
  readonly minor: number;
  readonly supported: readonly number[];
}

let compilerInfo: CompilerInfo | undefined;

/** NVRTC's version and supported archs, asked once per process. */
function compiler(): CompilerInfo {
  compilerInfo ??= { ...raw.version(), supported: raw.getSupportedArchs() };
  return compilerInfo;
}

/**
 * CUDA C++ source and how to compile it with NVRTC (the safe tier). A Program
 * holds no native resource: each {@link Program.compile} creates an NVRTC
 * program and always destroys it, also when the compile fails. Results are
 * cached on disk by {@link KernelCache}.
 *
 * @example
 * ```ts
 * const { image, loweredNames } = new Program(src, { name: 'add.cu', nameExpressions: ['add<float>'] }).compile();
 * const kernel = Module.load(ctx, image).getFunction(loweredNames['add<float>']!);
 * ```
 */
export class Program {
  readonly source: string;
  readonly name: string;
  readonly options: Readonly<ProgramOptions>;

  /** @throws InvalidArgumentError for malformed options (checked here, before NVRTC sees them). */
  constructor(source: string, options: ProgramOptions = {}) {
    if (typeof source !== 'string' || source.trim() === '') {
      throw new InvalidArgumentError('Program source must be a non-empty string');
    }
    validateOptions(options);
    this.source = source;
    this.name = options.name ?? 'kernel.cu';
    // Copies, so changing the caller's objects later cannot bypass the checks above.
    this.options = Object.freeze({
      ...options,
      headers: options.headers && Object.freeze({ ...options.headers }),
      defines: options.defines && Object.freeze({ ...options.defines }),
      includePaths: options.includePaths && Object.freeze([...options.includePaths]),
      nameExpressions: options.nameExpressions && Object.freeze([...options.nameExpressions]),
      extraOptions: options.extraOptions && Object.freeze([...options.extraOptions]),
    });
  }

  /**
   * Compiles (or fetches from the cache) for the resolved arch.
   * @throws CompileError when NVRTC refuses the source, with the first error's file and line.
   * @throws InvalidArgumentError when the arch cannot be resolved or is not supported.
   */
  compile(): CompiledProgram {
    const started = performance.now();
    const plan = this.#plan();
    const hit = plan.key !== undefined ? plan.cache!.get(plan.key) : undefined;
    if (hit) return { ...hit, output: plan.output, arch: plan.arch, cacheHit: true, compileMs: performance.now() - started };

    const built = build(this.source, this.name, plan.headers, plan.nvrtcOptions, plan.nameExpressions, plan.output);
    if (plan.key !== undefined) plan.cache!.set(plan.key, built);
    return { ...built, output: plan.output, arch: plan.arch, cacheHit: false, compileMs: performance.now() - started };
  }

  /**
   * The compiled program when the kernel cache holds it, without compiling; `undefined` when it
   * does not (or when caching is off). What {@link Program.compile} would return on a cache hit.
   * @throws InvalidArgumentError when the arch cannot be resolved or is not supported.
   */
  cached(): CompiledProgram | undefined {
    const started = performance.now();
    const plan = this.#plan();
    const hit = plan.key !== undefined ? plan.cache!.get(plan.key) : undefined;
    return hit && { ...hit, output: plan.output, arch: plan.arch, cacheHit: true, compileMs: performance.now() - started };
  }

  /** The resolved arch, the NVRTC options and the cache key of a compile. */
  #plan(): CompilePlan {
    const options = this.options;
    const info = compiler();
    const deviceArch = options.deviceArch;
    const { arch, output } = resolveArch(
      { arch: options.arch, output: options.output },
      { supported: info.supported, nvrtcMajor: info.major, deviceArch: deviceArch === undefined ? currentDeviceArch : () => deviceArch },
    );
    const cudaHeaders = options.cudaIncludes === false ? undefined : autoCudaIncludes(info.major);
    const nvrtcOptions = this.#nvrtcOptions(arch, cudaHeaders?.paths ?? [], info);
    const headers = options.headers ?? {};
    const nameExpressions = options.nameExpressions ?? [];

    const cache = options.cache === false ? undefined : (options.cache ?? KernelCache.shared());
    const includeFingerprint = cache ? fingerprintIncludeDirs(options.includePaths ?? []) : undefined;
    const key =
      cache && includeFingerprint !== undefined
        ? kernelCacheKey({
            source: this.source,
            name: this.name,
            headers,
            options: nvrtcOptions,
            arch,
            output,
            nvrtcVersion: `${info.major}.${info.minor}`,
            nameExpressions,
            cudaHeaders: cudaHeaders?.paths.length ? `${cudaHeaders.paths.join('\n')}\n${cudaHeaders.cudaVersion}` : '',
            includeFingerprint,
          })
        : undefined;
    return { arch, output, nvrtcOptions, headers, nameExpressions, cache, key };
  }

  /** The NVRTC option list; user include paths come before the automatic CUDA ones so they can shadow them. */
  #nvrtcOptions(arch: string, cudaIncludePaths: readonly string[], info: CompilerInfo): string[] {
    const options = this.options;
    return [
      `--gpu-architecture=${arch}`,
      `--std=${options.std ?? 'c++17'}`,
      ...Object.entries(options.defines ?? {}).map(([name, value]) =>
        value === true ? `--define-macro=${name}` : `--define-macro=${name}=${value}`,
      ),
      ...[...(options.includePaths ?? []), ...cudaIncludePaths].map((dir) => `--include-path=${dir}`),
      ...(options.lineInfo ? ['--generate-line-info'] : []),
      ...(options.debug ? ['--device-debug'] : []),
      ...(options.fastMath ? ['--use_fast_math'] : []),
      ...(options.minimal && takesMinimal(info) ? ['-minimal'] : []),
      ...(options.extraOptions ?? []),
    ];
  }
}

/** Whether this NVRTC knows `-minimal` (added in CUDA 12.4). */
function takesMinimal(info: CompilerInfo): boolean {
  return info.major > 12 || (info.major === 12 && info.minor >= 4);
}

/** Compiles `source` once: `new Program(source, options).compile()`. */
export function compileProgram(source: string, options: ProgramOptions = {}): CompiledProgram {
  return new Program(source, options).compile();
}

function build(
  source: string,
  name: string,
  headers: Readonly<Record<string, string>>,
  options: readonly string[],
  nameExpressions: readonly string[],
  output: OutputKind,
): { image: Uint8Array; log: string; loweredNames: Record<string, string> } {
  const program = raw.createProgram(
    source,
    name,
    Object.entries(headers).map(([headerName, headerSource]) => ({ name: headerName, source: headerSource })),
  );
  try {
    for (const expression of nameExpressions) raw.addNameExpression(program, expression);
    raw.compileProgram(program, options);
    const loweredNames: Record<string, string> = {};
    for (const expression of nameExpressions) loweredNames[expression] = raw.getLoweredName(program, expression);
    return {
      image: output === 'ptx' ? raw.getPTX(program) : raw.getCUBIN(program),
      log: raw.getProgramLog(program),
      loweredNames,
    };
  } finally {
    raw.destroyProgram(program);
  }
}

const MACRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function validateOptions(options: ProgramOptions): void {
  const fail = (message: string): never => {
    throw new InvalidArgumentError(`Program: ${message}`);
  };
  if (options.name !== undefined && (typeof options.name !== 'string' || !/^[^\0\n]+$/.test(options.name))) {
    fail(`name must be a non-empty file name, not ${JSON.stringify(options.name)}`);
  }
  for (const [name, source] of Object.entries(options.headers ?? {})) {
    if (name === '' || name.includes('\0')) fail(`header name ${JSON.stringify(name)} is not a file name`);
    if (typeof source !== 'string') fail(`header ${JSON.stringify(name)} must be a string of source`);
  }
  for (const dir of options.includePaths ?? []) {
    if (typeof dir !== 'string' || dir === '') fail(`include paths must be non-empty strings, not ${JSON.stringify(dir)}`);
  }
  for (const [name, value] of Object.entries(options.defines ?? {})) {
    if (!MACRO_NAME.test(name)) fail(`define ${JSON.stringify(name)} is not a macro name`);
    const ok =
      value === true ||
      (typeof value === 'number' && Number.isFinite(value)) ||
      (typeof value === 'string' && !/[\n\0]/.test(value));
    if (!ok) fail(`define ${name} must be a finite number, a one-line string or true, not ${JSON.stringify(value)}`);
  }
  if (options.arch !== undefined) parseArch(options.arch);
  if (options.deviceArch !== undefined) {
    const device = parseArch(options.deviceArch);
    if (device.kind !== 'sm' || device.specific) fail(`deviceArch must name a device as sm_XY, not ${JSON.stringify(options.deviceArch)}`);
  }
  if (options.minimal !== undefined && typeof options.minimal !== 'boolean') fail(`minimal must be true or false, not ${JSON.stringify(options.minimal)}`);
  if (options.output !== undefined && options.output !== 'cubin' && options.output !== 'ptx') {
    fail(`output must be 'cubin' or 'ptx', not ${JSON.stringify(options.output)}`);
  }
  if (options.std !== undefined && !STANDARDS.includes(options.std)) {
    fail(`std must be one of ${STANDARDS.join(', ')}, not ${JSON.stringify(options.std)}`);
  }
  const expressions = options.nameExpressions ?? [];
  for (const expression of expressions) {
    if (typeof expression !== 'string' || expression.trim() === '') fail('name expressions must be non-empty strings');
  }
  if (new Set(expressions).size !== expressions.length) fail('name expressions must be unique');
  for (const option of options.extraOptions ?? []) {
    if (typeof option !== 'string' || option === '') fail(`extra options must be non-empty strings, not ${JSON.stringify(option)}`);
    if (/^(--gpu-architecture|-arch)\b/.test(option)) fail(`give the arch with the arch option, not ${JSON.stringify(option)}`);
  }
  if (options.cache !== undefined && options.cache !== false && !(options.cache instanceof KernelCache)) {
    fail('cache must be a KernelCache or false');
  }
}
