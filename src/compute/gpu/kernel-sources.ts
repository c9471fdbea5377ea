/**
 * The CUDA C sources under the package's `kernels/` folder (the portable ones compile for HIP
 * too), and the module spec that names one compiled specialisation of a source.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from '../../errors.js';

/** One compiled specialisation of a kernel source: the file, its `-D` defines, and the target it needs. */
export interface ModuleSpec {
  /** A `.cu` file in `kernels/`, e.g. `unary.cu`. */
  readonly file: string;
  /** Macros that specialise it, e.g. `{ GC_DTYPE: 'GC_F16', GC_OP: 'OpExp' }`. */
  readonly defines?: Readonly<Record<string, string | number>>;
  /**
   * The compiler target it must be built for, where the device's own is not enough: `sm_90a` for
   * the Hopper-only instructions (wgmma, TMA multicast, setmaxnreg). Default: the device's arch.
   */
  readonly arch?: string;
}

/** A stable string naming a module spec (file, sorted defines, and its arch when it has one). */
export function moduleKey(spec: ModuleSpec): string {
  const defines = Object.entries(spec.defines ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`);
  const key = defines.length === 0 ? spec.file : `${spec.file}?${defines.join('&')}`;
  return spec.arch === undefined ? key : `${key}@${spec.arch}`;
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
