import { performance } from 'node:perf_hooks';
import { InvalidArgumentError } from '../errors.js';
import { kernelCacheKey } from '../nvrtc/cache-key.js';
import { KernelCache } from '../nvrtc/kernel-cache.js';
import { HipDevice } from './device.js';
import { checkCompilableTarget, parseGfxTarget } from './gfx-target.js';
import * as hiprtc from './hiprtc.js';
import { runtimeGetVersion } from './raw/device.js';

/** How to compile a {@link HipProgram}. */
export interface HipProgramOptions {
  /** File name used in diagnostics; default `kernel.cu`. */
  name?: string;
  /** In-memory headers: `#include "<key>"` finds the value. */
  headers?: Readonly<Record<string, string>>;
  /** Macros: `{ N: 256 }` → `-DN=256`; `true` defines the name alone. */
  defines?: Readonly<Record<string, string | number | true>>;
  /**
   * Target ID, e.g. `gfx90a` or `gfx90a:sramecc+:xnack-`. Default: the current
   * device's. Targets the installed hiprtc does not know are refused before it is called.
   */
  target?: string;
  /** C++ dialect; default `c++17` (hiprtc's own default is older). */
  std?: 'c++14' | 'c++17' | 'c++20';
  /** Expressions such as `add<float>` whose mangled names come back in `loweredNames`. */
  nameExpressions?: readonly string[];
  /** Further hiprtc (clang) options, passed as given; the target belongs in `target`. */
  extraOptions?: readonly string[];
  /** Where code objects are cached; default the shared {@link KernelCache}; `false` compiles every time. */
  cache?: KernelCache | false;
}

/** The result of {@link HipProgram.compile}. */
export interface CompiledHipProgram {
  /** The code object, for `HipModule.load`. */
  readonly image: Uint8Array;
  /** The target ID compiled for. */
  readonly target: string;
  readonly log: string;
  readonly loweredNames: Readonly<Record<string, string>>;
  readonly cacheHit: boolean;
  readonly compileMs: number;
}

interface CompilerInfo {
  /** HIP_VERSION of the runtime, which decides the known targets. */
  readonly hipVersion: number;
  /** Identifies the compiler in cache keys. */
  readonly tag: string;
}

let compilerInfo: CompilerInfo | undefined;

function compiler(): CompilerInfo {
  if (!compilerInfo) {
    const hipVersion = runtimeGetVersion();
    const { major, minor } = hiprtc.version();
    compilerInfo = { hipVersion, tag: `hiprtc ${major}.${minor} / HIP ${hipVersion}` };
  }
  return compilerInfo;
}

/**
 * HIP C++ source (the CUDA dialect) and how to compile it with hiprtc, the
 * safe tier: each compile creates a hiprtc program and always destroys it;
 * code objects are cached on disk by the same {@link KernelCache} as NVRTC's,
 * keyed also by the hiprtc and HIP versions and the target.
 */
export class HipProgram {
  readonly source: string;
  readonly name: string;
  readonly options: Readonly<HipProgramOptions>;

  constructor(source: string, options: HipProgramOptions = {}) {
    if (typeof source !== 'string' || source.trim() === '') throw new InvalidArgumentError('HipProgram source must be a non-empty string');
    validate(options);
    this.source = source;
    this.name = options.name ?? 'kernel.cu';
    this.options = Object.freeze({
      ...options,
      headers: options.headers && Object.freeze({ ...options.headers }),
      defines: options.defines && Object.freeze({ ...options.defines }),
      nameExpressions: options.nameExpressions && Object.freeze([...options.nameExpressions]),
      extraOptions: options.extraOptions && Object.freeze([...options.extraOptions]),
    });
  }

  /**
   * Compiles (or fetches from the cache) for the target.
   * @throws InvalidArgumentError for a target this hiprtc does not know (checked before calling it).
   * @throws HiprtcCompileError when hiprtc refuses the source, with the first error and the log.
   */
  compile(): CompiledHipProgram {
    const started = performance.now();
    const info = compiler();
    const requested = this.options.target ?? defaultTarget();
    const target = checkCompilableTarget(requested, info.hipVersion).id;
    const options = this.#options(target);
    const headers = this.options.headers ?? {};
    const nameExpressions = this.options.nameExpressions ?? [];
    const cache = this.options.cache === false ? undefined : (this.options.cache ?? KernelCache.shared());
    const key = cache
      ? kernelCacheKey({
          source: this.source,
          name: this.name,
          headers,
          options,
          arch: target,
          output: 'hip-code-object',
          nvrtcVersion: info.tag,
          nameExpressions,
          cudaHeaders: '',
          includeFingerprint: '',
        })
      : undefined;
    const hit = key !== undefined ? cache!.get(key) : undefined;
    if (hit) return { ...hit, target, cacheHit: true, compileMs: performance.now() - started };
    const built = build(this.source, this.name, headers, options, nameExpressions);
    if (key !== undefined) cache!.set(key, built);
    return { ...built, target, cacheHit: false, compileMs: performance.now() - started };
  }

  #options(target: string): string[] {
    const o = this.options;
    return [
      `--offload-arch=${target}`,
      `-std=${o.std ?? 'c++17'}`,
      ...Object.entries(o.defines ?? {}).map(([name, value]) => (value === true ? `-D${name}` : `-D${name}=${value}`)),
      ...(o.extraOptions ?? []),
    ];
  }
}

/** The current device's target; a machine without a HIP device needs an explicit one. */
function defaultTarget(): string {
  if (HipDevice.count() === 0) {
    throw new InvalidArgumentError('HipProgram: no target given and no HIP device to take it from; pass e.g. { target: "gfx90a" }');
  }
  return HipDevice.current().target;
}

function build(
  source: string,
  name: string,
  headers: Readonly<Record<string, string>>,
  options: readonly string[],
  nameExpressions: readonly string[],
): { image: Uint8Array; log: string; loweredNames: Record<string, string> } {
  const program = hiprtc.createProgram(
    source,
    name,
    Object.entries(headers).map(([headerName, headerSource]) => ({ name: headerName, source: headerSource })),
  );
  try {
    for (const expression of nameExpressions) hiprtc.addNameExpression(program, expression);
    hiprtc.compileProgram(program, options);
    const loweredNames: Record<string, string> = {};
    for (const expression of nameExpressions) loweredNames[expression] = hiprtc.getLoweredName(program, expression);
    return { image: hiprtc.getCode(program), log: hiprtc.getProgramLog(program), loweredNames };
  } finally {
    hiprtc.destroyProgram(program);
  }
}

const MACRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function validate(options: HipProgramOptions): void {
  const fail = (message: string): never => {
    throw new InvalidArgumentError(`HipProgram: ${message}`);
  };
  if (options.name !== undefined && (typeof options.name !== 'string' || !/^[^\0\n]+$/.test(options.name))) fail('name must be a file name');
  for (const [name, source] of Object.entries(options.headers ?? {})) {
    if (name === '' || name.includes('\0') || typeof source !== 'string') fail(`header ${JSON.stringify(name)} must map a file name to source`);
  }
  for (const [name, value] of Object.entries(options.defines ?? {})) {
    if (!MACRO_NAME.test(name)) fail(`define ${JSON.stringify(name)} is not a macro name`);
    const ok = value === true || (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && !/[\n\0]/.test(value));
    if (!ok) fail(`define ${name} must be a finite number, a one-line string or true`);
  }
  if (options.target !== undefined) parseGfxTarget(options.target);
  if (options.std !== undefined && !['c++14', 'c++17', 'c++20'].includes(options.std)) fail(`std ${JSON.stringify(options.std)} is not c++14, c++17 or c++20`);
  const expressions = options.nameExpressions ?? [];
  if (expressions.some((e) => typeof e !== 'string' || e.trim() === '')) fail('name expressions must be non-empty strings');
  if (new Set(expressions).size !== expressions.length) fail('name expressions must be unique');
  for (const option of options.extraOptions ?? []) {
    if (typeof option !== 'string' || option === '') fail('extra options must be non-empty strings');
    if (/^--?offload-arch\b|^--?amdgpu-target\b|^--?gpu-architecture\b/.test(option)) fail(`give the target with the target option, not ${JSON.stringify(option)}`);
  }
  if (options.cache !== undefined && options.cache !== false && !(options.cache instanceof KernelCache)) fail('cache must be a KernelCache or false');
}
