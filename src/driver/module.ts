import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { Context } from './context.js';
import type { ContextCore } from './context-core.js';
import { CudaError, cudaError } from './cuda-error.js';
import { DeviceBuffer } from './device-buffer.js';
import { Kernel } from './kernel.js';
import { guard, unguard } from './leak-guard.js';
import { ensureCurrent } from './raw/context.js';
import type { CUmodule } from './raw/handles.js';
import { moduleGetFunction, moduleGetGlobal, moduleLoadDataEx, moduleUnload, type JitOptionValue, type ModuleImage } from './raw/module.js';
import { CudaResult } from './result-code.js';

/** Options of {@link Module.load}. */
export interface ModuleLoadOptions {
  /** Extra options for the driver's PTX JIT (CU_JIT_*), e.g. `[[JitOption.MAX_REGISTERS, 64]]`. */
  jitOptions?: readonly JitOptionValue[];
}

declare module './kernel.js' {
  // A kernel's module is a Module (see KernelModule).
  interface KernelModule extends Module {}
}

/**
 * Loaded GPU code: a CUBIN or fatbin (bytes) or PTX (text, compiled by the
 * driver for this device). Keeps its context alive; kernels and globals taken
 * from it refuse to work once it is disposed.
 */
export class Module implements Disposable {
  /**
   * Loads `image` into `ctx`. A PTX the driver cannot compile throws a
   * CudaError whose message carries the JIT's error log.
   */
  static load(ctx: Context, image: ModuleImage, options: ModuleLoadOptions = {}): Module {
    if (typeof image !== 'string' && !(image instanceof Uint8Array)) {
      throw new InvalidArgumentError('Module.load takes PTX text (a string) or CUBIN / fatbin bytes (a Uint8Array)');
    }
    if (image.length === 0) throw new InvalidArgumentError('Module.load: the image is empty');
    const core = ctx.acquireCore();
    try {
      const { module, infoLog } = moduleLoadDataEx(image, options.jitOptions);
      return new Module(ctx, core, module, infoLog);
    } catch (err) {
      core.release();
      throw err;
    }
  }

  readonly #core: ContextCore;
  readonly #handle: CUmodule;
  readonly #kernels = new Map<string, Kernel>();
  #disposed = false;

  private constructor(
    /** The context the module is loaded in. */
    readonly context: Context,
    core: ContextCore,
    handle: CUmodule,
    /** What the driver's JIT reported while loading (empty for CUBIN). */
    readonly infoLog: string,
  ) {
    this.#core = core;
    this.#handle = handle;
    guard(this, 'Module', () => releaseModule(core, handle));
  }

  /** The CUmodule handle (raw tier). */
  get handle(): CUmodule {
    if (this.#disposed) throw new DisposedError('Module');
    return this.#handle;
  }

  /** Whether {@link dispose} was called. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** @internal The shared context state. */
  get core(): ContextCore {
    return this.#core;
  }

  /**
   * The kernel named `name` (one object per name). C++ kernels need their
   * mangled name unless declared `extern "C"` (NVRTC name expressions give it).
   */
  getFunction(name: string): Kernel {
    if (this.#disposed) throw new DisposedError('Module');
    const cached = this.#kernels.get(name);
    if (cached) return cached;
    const handle = this.#lookup(name, 'kernel', () => moduleGetFunction(this.#handle, name));
    const kernel = new Kernel(this, handle, name);
    this.#kernels.set(name, kernel);
    return kernel;
  }

  /** A `__device__` or `__constant__` variable, as a non-owning DeviceBuffer view of its memory. */
  getGlobal(name: string): DeviceBuffer {
    const { ptr, bytes } = this.#lookup(name, 'global', () => moduleGetGlobal(this.#handle, name));
    return DeviceBuffer.viewOf(this, this.context, this.#core, ptr, bytes);
  }

  /** Unloads the module; its kernels and globals stop working. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    releaseModule(this.#core, this.#handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #lookup<T>(name: string, what: string, find: () => T): T {
    if (this.#disposed) throw new DisposedError('Module');
    this.#core.enter();
    try {
      return find();
    } catch (err) {
      if (err instanceof CudaError && err.result === CudaResult.CUDA_ERROR_NOT_FOUND) {
        throw cudaError(
          err.result,
          err.call,
          `The module has no ${what} named "${name}". C++ names are mangled: declare it extern "C", ` +
            'or compile with a name expression and use its lowered name.',
        );
      }
      throw err;
    }
  }
}

function releaseModule(core: ContextCore, handle: CUmodule): void {
  try {
    if (!core.broken) {
      ensureCurrent(core.handle);
      moduleUnload(handle);
    }
  } finally {
    core.release();
  }
}
