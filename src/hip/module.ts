import { guard, unguard } from '../driver/leak-guard.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { HipDevice } from './device.js';
import { HipError } from './hip-error.js';
import { HipResult } from './hip-result.js';
import { HipKernel } from './kernel.js';
import type { HipModuleHandle } from './raw/handles.js';
import { moduleGetFunction, moduleLoadData, moduleUnload } from './raw/module.js';

declare module './kernel.js' {
  // A kernel's module is a HipModule (see HipKernelModule).
  interface HipKernelModule extends HipModule {}
}

/** A loaded code object (hiprtc's output) on one device. Kernels taken from it refuse to work once it is disposed. */
export class HipModule implements Disposable {
  /** Loads a code object onto `device`. */
  static load(device: HipDevice, image: Uint8Array): HipModule {
    if (!(image instanceof Uint8Array) || image.length === 0) {
      throw new InvalidArgumentError('HipModule.load takes the non-empty bytes of a code object (a Uint8Array)');
    }
    device.makeCurrent();
    return new HipModule(device, moduleLoadData(image));
  }

  readonly #handle: HipModuleHandle;
  readonly #kernels = new Map<string, HipKernel>();
  #disposed = false;

  private constructor(
    readonly device: HipDevice,
    handle: HipModuleHandle,
  ) {
    this.#handle = handle;
    guard(this, 'HipModule', () => moduleUnload(handle));
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** The hipModule_t (raw tier). */
  get handle(): HipModuleHandle {
    if (this.#disposed) throw new DisposedError('HipModule');
    return this.#handle;
  }

  /** The kernel named `name` (`extern "C"`, or a lowered name), one object per name. */
  getFunction(name: string): HipKernel {
    if (this.#disposed) throw new DisposedError('HipModule');
    const cached = this.#kernels.get(name);
    if (cached) return cached;
    this.device.makeCurrent();
    let handle: bigint;
    try {
      handle = moduleGetFunction(this.#handle, name);
    } catch (err) {
      if (err instanceof HipError && (err.result === HipResult.hipErrorNotFound || err.result === HipResult.hipErrorInvalidDeviceFunction)) {
        throw new HipError(err.result, err.call, `The module has no kernel named "${name}"; C++ names are mangled unless declared extern "C".`);
      }
      throw err;
    }
    const kernel = new HipKernel(this, handle, name);
    this.#kernels.set(name, kernel);
    return kernel;
  }

  /** Unloads the module. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    this.device.makeCurrent();
    moduleUnload(this.#handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
