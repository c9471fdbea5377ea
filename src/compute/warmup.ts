/**
 * Kernel warmup: compiles ahead of time, in parallel, the CUDA kernel modules a device uses for
 * the common ops, so that first uses find them in the kernel cache instead of compiling them one
 * after another (NVRTC takes up to seconds per module). Given an arch it needs NVRTC only, not a
 * GPU; what `gpucompute warmup` runs. The CUDA parts (`cuda/warmup-*.ts`) load on first call, so
 * importing the library costs nothing for them.
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from '../errors.js';
import { isDType, type DType } from './core/dtype.js';
import { Logger, type LoggerFunction } from './core/logger.js';
import type { ProgressListener } from './core/progress.js';
import { checkInteger, checkOptions, closestName, describeValue, optionKeys } from './core/validation.js';
import { WARMUP_OPS, type WarmupOp } from './core/warmup-ops.js';
import type { WarmupResult } from './cuda/warmup-pool.js';

/** Options of {@link warmupKernels}. Every field is optional. */
export interface WarmupOptions {
  /**
   * The device arch to compile for, `sm_XY` (e.g. `sm_90`): then only NVRTC is needed, not a GPU.
   * Default: the current CUDA device's (else device 0's).
   */
  arch?: string;
  /** Processes compiling side by side, 1 to 256; default every core (`os.availableParallelism()`). */
  jobs?: number;
  /** The ops to compile for, by GpuCompute method name (see {@link WARMUP_OPS}); default all of them. */
  ops?: readonly WarmupOp[];
  /** The dtypes to compile for; default all four. Each op skips the dtypes it does not take. */
  dtypes?: readonly DType[];
  /** The kernel cache folder to fill; default the one GpuCompute uses (`GPUCOMPUTE_CACHE_DIR`, else the platform's cache folder). */
  cacheDir?: string;
  /** Receives one progress event per module, those already cached included, as each finishes. */
  onProgress?: ProgressListener;
  /**
   * Receives an info line per module compiled and a warning per module that failed: a Logger (a
   * GpuCompute's `logger`, with its level), or a function given every line. Default: none.
   */
  logger?: Logger | LoggerFunction;
}

/** The keys {@link WarmupOptions} takes. */
export const WARMUP_OPTIONS = optionKeys<WarmupOptions>({ arch: true, jobs: true, ops: true, dtypes: true, cacheDir: true, onProgress: true, logger: true });

/**
 * Compiles the kernel modules of `options.ops` in `options.dtypes` (default: every op and dtype)
 * for a device into the kernel cache, on `options.jobs` child processes, skipping the modules the
 * cache holds already. Modules that fail are listed in the result, each a {@link WarmupError}
 * naming it; the others are compiled all the same.
 *
 * ```ts
 * const result = await warmupKernels({ arch: 'sm_90', ops: ['softmax', 'layerNorm'], dtypes: ['f32', 'bf16'] });
 * console.log(`${result.compiled} compiled, ${result.cached} cached, ${result.failed.length} failed`);
 * ```
 * @throws InvalidArgumentError for a malformed option (naming it), an arch NVRTC cannot build
 *   for, or no arch where no CUDA device answers.
 * @throws LibraryNotFoundError when NVRTC is not found.
 * @throws WarmupError when the kernel cache is off (`GPUCOMPUTE_CACHE=0`) or not writable.
 */
export async function warmupKernels(options: WarmupOptions = {}): Promise<WarmupResult> {
  const op = 'warmupKernels';
  const o = checkOptions<WarmupOptions>(op, options, WARMUP_OPTIONS);
  if (o.arch !== undefined && typeof o.arch !== 'string') throw new InvalidArgumentError(`${op}: arch must be a string such as 'sm_90', got ${describeValue(o.arch)}`);
  const jobs = o.jobs === undefined ? availableParallelism() : checkInteger(op, 'jobs', o.jobs, 1, 256);
  const ops = o.ops === undefined ? undefined : checkList(op, 'ops', o.ops, (v): v is WarmupOp => (WARMUP_OPS as readonly unknown[]).includes(v), 'op names', WARMUP_OPS);
  const dtypes = o.dtypes === undefined ? undefined : checkList(op, 'dtypes', o.dtypes, isDType, 'dtypes', ['f32', 'f16', 'bf16', 'i32']);
  if (o.cacheDir !== undefined && (typeof o.cacheDir !== 'string' || o.cacheDir === '')) {
    throw new InvalidArgumentError(`${op}: cacheDir must be a non-empty folder path, got ${describeValue(o.cacheDir)}`);
  }
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') {
    throw new InvalidArgumentError(`${op}: onProgress must be a function (event) => void, got ${describeValue(o.onProgress)}`);
  }
  if (o.logger !== undefined && !(o.logger instanceof Logger) && typeof o.logger !== 'function') {
    throw new InvalidArgumentError(`${op}: logger must be a Logger or a function (level, message) => void, got ${describeValue(o.logger)}`);
  }
  const logger = o.logger === undefined || o.logger instanceof Logger ? o.logger : new Logger(o.logger, 'debug');

  const [{ resolveWarmupTarget }, { warmupModuleSpecs }, { compileModules }] = await Promise.all([
    import('./cuda/warmup-target.js'),
    import('./cuda/warmup-specs.js'),
    import('./cuda/warmup-pool.js'),
  ]);
  const target = resolveWarmupTarget(o.arch);
  const specs = warmupModuleSpecs(target, { ...(ops ? { ops } : {}), ...(dtypes ? { dtypes } : {}) });
  return compileModules(specs, target, {
    jobs,
    ...(o.cacheDir === undefined ? {} : { cacheDir: o.cacheDir }),
    ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }),
    ...(logger === undefined ? {} : { logger }),
  });
}

/** An array option whose every element passes `valid`; the message lists the valid values. */
function checkList<T>(op: string, name: string, value: unknown, valid: (v: unknown) => v is T, what: string, all: readonly string[]): T[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(`${op}: ${name} must be an array of ${what}, got ${describeValue(value)}`);
  for (const v of value) {
    if (!valid(v)) {
      const near = typeof v === 'string' ? closestName(v, all) : undefined;
      throw new InvalidArgumentError(`${op}: ${name} has ${describeValue(v)}, which is not one of the ${what}${near ? ` (did you mean '${near}'?)` : ''}: ${all.join(', ')}`);
    }
  }
  return value as T[];
}
