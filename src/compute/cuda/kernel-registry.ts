/**
 * Compiles the kernels under `kernels/` lazily for the device's arch, or the arch a spec names
 * (sm_90a for the Hopper kernels), through NVRTC and its disk cache; loads each specialisation once
 * per context, caches the kernels and their bound launchers, and sizes grid-stride launches from
 * the occupancy API. The one compile path of the CUDA backend. Each compile that misses the
 * kernel cache is reported as a progress event through the logger; loaded modules cost nothing.
 */
import { performance } from 'node:perf_hooks';
import type { Context } from '../../driver/context.js';
import type { BoundKernel, Kernel } from '../../driver/kernel.js';
import { Module } from '../../driver/module.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { KernelCache } from '../../nvrtc/kernel-cache.js';
import type { CompiledProgram } from '../../nvrtc/program.js';
import type { Logger } from '../core/logger.js';
import { KernelSources, moduleKey, type ModuleSpec } from '../gpu/kernel-sources.js';
import type { LaunchShape } from '../gpu/launch-context.js';
import { wholeSourceSpec } from '../gpu/kernel-specs.js';
import { cachedKernelModule, compileKernelModule } from './kernel-compile.js';

/** A kernel ready to launch: its bound fast-path launcher and its occupancy-derived shape. */
export interface RegisteredKernel {
  readonly kernel: Kernel;
  /** Launcher for the declared signature (see `Kernel.bind`). */
  readonly launch: BoundKernel;
  /**
   * The best block size (at most `blockLimit`, 0 = the kernel's own limit) and
   * the resident-grid size for it; computed on first use per limit.
   */
  shape(blockLimit?: number): LaunchShape;
  /**
   * Blocks of `block` threads with `sharedMemBytes` of dynamic shared memory resident on the
   * whole device, after raising the kernel's limit above 48 KB where needed; 0 when the device
   * cannot give one block that much.
   */
  residentGrid(block: number, sharedMemBytes: number): number;
}

/** Options of {@link KernelRegistry}. */
export interface KernelRegistryOptions {
  /** Where the sources are read from; default the package's `kernels/`. */
  sources?: KernelSources;
  /**
   * Receives a debug line per cache hit, and a progress event (an info line, and the logger's
   * `onProgress`) per module compiled or failed, with its time.
   */
  logger?: Logger;
  /** Kernel cache; default NVRTC's shared one. */
  cache?: KernelCache | false;
}

/** The kernels of one CUDA context. */
export class KernelRegistry {
  readonly context: Context;
  readonly sources: KernelSources;
  readonly #logger: Logger | undefined;
  readonly #cache: KernelCache | false | undefined;
  readonly #modules = new Map<string, Module>();
  readonly #kernels = new Map<string, RegisteredKernel>();
  /** Modules compiled (not found in the kernel cache) so far: the progress events' count. */
  #compiles = 0;
  #multiprocessors = 0;

  constructor(context: Context, options: KernelRegistryOptions = {}) {
    this.context = context;
    this.sources = options.sources ?? new KernelSources();
    this.#logger = options.logger;
    this.#cache = options.cache;
  }

  /**
   * The loaded module of a specialisation, compiled on first use (for the spec's arch, else the
   * device's). A one-kernel spec takes its whole source's module instead where this context has
   * loaded it or the kernel cache holds it (as a warmup leaves it).
   */
  module(spec: ModuleSpec): Module {
    const key = moduleKey(spec);
    let module = this.#modules.get(key);
    if (!module) {
      module = this.#wholeSourceModule(spec) ?? Module.load(this.context, this.#compile(spec, key).image);
      this.#modules.set(key, module);
    }
    return module;
  }

  #wholeSourceModule(spec: ModuleSpec): Module | undefined {
    const whole = wholeSourceSpec(spec);
    if (whole === undefined) return undefined;
    const key = moduleKey(whole);
    let module = this.#modules.get(key);
    if (module || this.#cache === false) return module;
    this.context.makeCurrent();
    const cached = cachedKernelModule(whole, this.sources, this.#cache === undefined ? {} : { cache: this.#cache });
    if (!cached) return undefined;
    this.#logger?.debug(`kernel ${moduleKey(spec)}: from the cached ${key}`);
    module = Module.load(this.context, cached.image);
    this.#modules.set(key, module);
    return module;
  }

  /**
   * Compiles a specialisation not loaded yet. A cache hit is a debug line; a compile (NVRTC
   * seconds) is a progress event, and so is a failed one, before its error propagates.
   */
  #compile(spec: ModuleSpec, key: string): CompiledProgram {
    // The default arch is the current device's: make this context current first.
    this.context.makeCurrent();
    const started = performance.now();
    let compiled: CompiledProgram;
    try {
      compiled = compileKernelModule(spec, this.sources, this.#cache === undefined ? {} : { cache: this.#cache });
    } catch (err) {
      this.#logger?.progress({ phase: 'compile', done: ++this.#compiles, what: key, outcome: 'failed', ms: performance.now() - started });
      throw err;
    }
    if (compiled.cacheHit) {
      this.#logger?.debug(`kernel ${key}: cache hit for ${compiled.arch} in ${compiled.compileMs.toFixed(1)} ms`);
    } else {
      this.#logger?.progress({ phase: 'compile', done: ++this.#compiles, what: key, outcome: 'done', ms: compiled.compileMs });
    }
    return compiled;
  }

  /**
   * The kernel `name` of a specialisation with a launcher bound to
   * `signature`; cached under `key` when given (callers on hot paths pass a
   * precomputed key), else under the spec and name.
   */
  get(spec: ModuleSpec, name: string, signature: readonly ArgType[], key?: string): RegisteredKernel {
    const cacheKey = key ?? `${moduleKey(spec)}#${name}`;
    let entry = this.#kernels.get(cacheKey);
    if (!entry) {
      const kernel = this.module(spec).getFunction(name);
      entry = this.#register(kernel, kernel.bind(signature));
      this.#kernels.set(cacheKey, entry);
    }
    return entry;
  }

  /**
   * The kernel `name` of a specialisation, unbound and not cached here: for callers that keep
   * their own kernels (the Hopper matmul's, with their residency) or launch through
   * `Kernel.launch` (the Hopper attention backward).
   */
  function(spec: ModuleSpec, name: string): Kernel {
    return this.module(spec).getFunction(name);
  }

  /** A registered kernel cached under `key` only (no spec needed once it exists). */
  cached(key: string): RegisteredKernel | undefined {
    return this.#kernels.get(key);
  }

  /** Unloads every module. */
  dispose(): void {
    // A whole source's module may serve under several keys.
    for (const module of new Set(this.#modules.values())) module.dispose();
    this.#modules.clear();
    this.#kernels.clear();
  }

  #register(kernel: Kernel, launch: BoundKernel): RegisteredKernel {
    const shapes = new Map<number, LaunchShape>();
    const grids = new Map<string, number>();
    return {
      kernel,
      launch,
      shape: (blockLimit = 0) => {
        let shape = shapes.get(blockLimit);
        if (!shape) {
          const { blockSize } = kernel.occupancy.maxPotentialBlockSize(0, blockLimit);
          const perSm = Math.max(1, kernel.occupancy.maxActiveBlocksPerMultiprocessor(blockSize));
          shape = { block: blockSize, maxGrid: perSm * this.#smCount() };
          shapes.set(blockLimit, shape);
        }
        return shape;
      },
      residentGrid: (block, sharedMemBytes) => {
        const key = `${block}|${sharedMemBytes}`;
        let grid = grids.get(key);
        if (grid === undefined) {
          const ceiling = this.context.device.sharedMemoryPerBlockOptin - kernel.attributes.sharedSizeBytes;
          if (sharedMemBytes > ceiling) {
            grid = 0;
          } else {
            if (sharedMemBytes > kernel.attributes.maxDynamicSharedSizeBytes) kernel.setMaxDynamicSharedMemory(sharedMemBytes);
            grid = kernel.occupancy.maxActiveBlocksPerMultiprocessor(block, sharedMemBytes) * this.#smCount();
          }
          grids.set(key, grid);
        }
        return grid;
      },
    };
  }

  #smCount(): number {
    if (this.#multiprocessors === 0) this.#multiprocessors = this.context.device.multiprocessorCount;
    return this.#multiprocessors;
  }
}
