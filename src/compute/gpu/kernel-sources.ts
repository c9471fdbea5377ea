/**
 * The CUDA C sources under the package's `kernels/` folder, and how one
 * specialisation of a source becomes a compiled image. Needs NVRTC but no GPU,
 * so the same code compiles every kernel in CI.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from '../../errors.js';
import { Program, type CompiledProgram } from '../../nvrtc/program.js';
import type { KernelCache } from '../../nvrtc/kernel-cache.js';

/** One compiled specialisation of a kernel source: the file plus its `-D` defines. */
export interface ModuleSpec {
  /** A `.cu` file in `kernels/`, e.g. `unary.cu`. */
  readonly file: string;
  /** Macros that specialise it, e.g. `{ GC_DTYPE: 'GC_F16', GC_OP: 'OpExp' }`. */
  readonly defines?: Readonly<Record<string, string | number>>;
}

/** A stable string naming a module spec (file plus sorted defines). */
export function moduleKey(spec: ModuleSpec): string {
  const defines = Object.entries(spec.defines ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`);
  return defines.length === 0 ? spec.file : `${spec.file}?${defines.join('&')}`;
}

/**
 * `kernels/` next to the package root: this file lives in `src/compute/gpu/`
 * (run through tsx/vitest) or `dist/compute/gpu/` (built), three levels down
 * in both cases.
 */
export function defaultKernelsDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'kernels');
}

/** Reads kernel sources and their headers from one folder, each file once. */
export class KernelSources {
  readonly dir: string;
  readonly #sources = new Map<string, string>();
  #headers: Readonly<Record<string, string>> | undefined;

  constructor(dir: string = defaultKernelsDir()) {
    this.dir = dir;
  }

  /** The text of `file` (a `.cu` in the folder). */
  source(file: string): string {
    let text = this.#sources.get(file);
    if (text === undefined) {
      if (!/^[A-Za-z0-9_.-]+\.cu$/.test(file)) throw new InvalidArgumentError(`kernel source must be a .cu file name, got ${JSON.stringify(file)}`);
      text = readFileSync(join(this.dir, file), 'utf8');
      this.#sources.set(file, text);
    }
    return text;
  }

  /**
   * Every `.cuh` of the folder, as NVRTC in-memory headers: includes resolve
   * without an include path, and the headers' text is part of the cache key.
   */
  headers(): Readonly<Record<string, string>> {
    if (!this.#headers) {
      const headers: Record<string, string> = {};
      for (const name of readdirSync(this.dir).filter((f) => f.endsWith('.cuh')).sort()) {
        headers[name] = readFileSync(join(this.dir, name), 'utf8');
      }
      this.#headers = headers;
    }
    return this.#headers;
  }
}

/** How to compile a module spec. */
export interface CompileKernelOptions {
  /** Target arch; default the current device's (see the NVRTC Program). */
  arch?: string;
  /** Kernel cache; default the shared one. */
  cache?: KernelCache | false;
}

/**
 * Compiles one specialisation to a CUBIN (through the kernel cache). The
 * sources are header-free (no cuda_fp16.h), so no CUDA include folder is
 * added and any NVRTC from 11.8 on compiles them.
 */
export function compileKernelModule(spec: ModuleSpec, sources: KernelSources, options: CompileKernelOptions = {}): CompiledProgram {
  return new Program(sources.source(spec.file), {
    name: spec.file,
    headers: sources.headers(),
    defines: spec.defines ?? {},
    std: 'c++17',
    cudaIncludes: false,
    ...(options.arch === undefined ? {} : { arch: options.arch }),
    ...(options.cache === undefined ? {} : { cache: options.cache }),
  }).compile();
}
