/**
 * Compiles the portable kernels under `kernels/` for the device's target
 * (through hiprtc and the shared disk cache), loads each specialisation once,
 * and hands the op launchers kernels of the same shape as the CUDA backend's.
 */
import { performance } from 'node:perf_hooks';
import type { HipDevice } from '../../hip/device.js';
import type { HipBoundValue, HipKernel } from '../../hip/kernel.js';
import { HipModule } from '../../hip/module.js';
import type { HipStream } from '../../hip/stream.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import { KernelSources, moduleKey, type ModuleSpec } from '../gpu/kernel-sources.js';
import type { LaunchKernel, LaunchShape } from '../gpu/launch-context.js';
import type { Logger } from '../core/logger.js';
import { compileHipKernelModule } from './kernel-compile.js';

export class HipKernelRegistry {
  readonly sources = new KernelSources();
  readonly #device: HipDevice;
  readonly #logger: Logger | undefined;
  readonly #modules = new Map<string, HipModule>();
  readonly #kernels = new Map<string, LaunchKernel<HipStream>>();
  /** Modules compiled (not found in the kernel cache) so far: the progress events' count. */
  #compiles = 0;

  constructor(device: HipDevice, logger: Logger | undefined) {
    this.#device = device;
    this.#logger = logger;
  }

  /** The kernel `name` of a specialisation bound to `signature`, cached under `key`. */
  get(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): LaunchKernel<HipStream> {
    let entry = this.#kernels.get(key);
    if (!entry) {
      const kernel = this.#module(spec()).getFunction(name);
      entry = this.#register(kernel, signature);
      this.#kernels.set(key, entry);
    }
    return entry;
  }

  dispose(): void {
    for (const module of this.#modules.values()) module.dispose();
    this.#modules.clear();
    this.#kernels.clear();
  }

  #module(spec: ModuleSpec): HipModule {
    const key = moduleKey(spec);
    let module = this.#modules.get(key);
    if (!module) {
      // As the CUDA registry: a compile (not a cache hit) is a progress event, a failed one too.
      const started = performance.now();
      let compiled: ReturnType<typeof compileHipKernelModule>;
      try {
        compiled = compileHipKernelModule(spec, this.sources, { target: this.#device.target });
      } catch (err) {
        this.#logger?.progress({ phase: 'compile', done: ++this.#compiles, what: key, outcome: 'failed', ms: performance.now() - started });
        throw err;
      }
      if (compiled.cacheHit) this.#logger?.debug(`kernel ${key}: cache hit for ${compiled.target} in ${compiled.compileMs.toFixed(1)} ms`);
      else this.#logger?.progress({ phase: 'compile', done: ++this.#compiles, what: key, outcome: 'done', ms: compiled.compileMs });
      module = HipModule.load(this.#device, compiled.image);
      this.#modules.set(key, module);
    }
    return module;
  }

  #register(kernel: HipKernel, signature: readonly ArgType[]): LaunchKernel<HipStream> {
    const launch = kernel.bind(signature);
    const shapes = new Map<number, LaunchShape>();
    const warp = this.#device.warpSize;
    return {
      // HIP signatures are scalar: a tensor map's bytes in one of their slots fails its slot check.
      launch: (config, ...values) => launch(config, ...(values as HipBoundValue[])),
      shape: (blockLimit = 0) => {
        let shape = shapes.get(blockLimit);
        if (!shape) {
          // Whole wavefronts only: the block reductions shuffle across full warps.
          const suggested = kernel.maxPotentialBlockSize(0, blockLimit).blockSize;
          const block = Math.max(warp, Math.floor(suggested / warp) * warp);
          const perCu = Math.max(1, kernel.maxActiveBlocksPerMultiprocessor(block));
          shape = { block, maxGrid: perCu * this.#device.multiprocessorCount };
          shapes.set(blockLimit, shape);
        }
        return shape;
      },
      // HIP kernels may use the whole LDS without an opt-in.
      residentGrid: (block, sharedMemBytes) =>
        sharedMemBytes > this.#device.sharedMemoryPerBlock
          ? 0
          : kernel.maxActiveBlocksPerMultiprocessor(block, sharedMemBytes) * this.#device.multiprocessorCount,
    };
  }
}
