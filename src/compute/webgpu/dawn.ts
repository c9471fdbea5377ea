/// <reference types="@webgpu/types" />
/**
 * Dawn's npm package `webgpu`, loaded on first use (it is an optional peer dependency), and the
 * Dawn instances (`create(flags)`) the backends share.
 *
 * Nothing is put on `globalThis`: the constants and error classes come from the package's
 * `globals` object. An instance is kept only while a backend (or a probe) holds it, because the
 * process does not exit while the object `create` returned is referenced (Dawn's README).
 */
import { WEBGPU_INSTALL_COMMAND, WEBGPU_PACKAGE_VERSION, WebGpuUnavailableError } from './webgpu-errors.js';

/** The constants and classes of the package's `globals` that the backend uses. */
export interface DawnGlobals {
  readonly GPUBufferUsage: GPUBufferUsage;
  readonly GPUMapMode: GPUMapMode;
  readonly GPUShaderStage: GPUShaderStage;
  readonly GPUValidationError: abstract new (...args: never[]) => GPUError;
  readonly GPUOutOfMemoryError: abstract new (...args: never[]) => GPUError;
  readonly GPUInternalError: abstract new (...args: never[]) => GPUError;
}

/** What the package exports. */
export interface DawnModule {
  create(flags: string[]): GPU;
  readonly globals: DawnGlobals;
}

/** How the package is imported; tests pass one that fails to see the missing-package error. */
export type DawnImporter = () => Promise<unknown>;

const importWebgpu: DawnImporter = () => import('webgpu');

let loaded: Promise<DawnModule> | undefined;

/**
 * The `webgpu` package, imported once.
 * @throws WebGpuUnavailableError with the install command when it is not installed or does not load.
 */
export function loadDawn(importer: DawnImporter = importWebgpu): Promise<DawnModule> {
  if (importer !== importWebgpu) return importDawn(importer);
  loaded ??= importDawn(importer).catch((err: unknown) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}

async function importDawn(importer: DawnImporter): Promise<DawnModule> {
  let mod: Partial<DawnModule>;
  try {
    mod = (await importer()) as Partial<DawnModule>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    const reason = missing
      ? `the optional package 'webgpu' is not installed; install it with \`${WEBGPU_INSTALL_COMMAND}\``
      : `the package 'webgpu' did not load (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); ` +
        `reinstall it with \`${WEBGPU_INSTALL_COMMAND}\``;
    throw new WebGpuUnavailableError(reason, err);
  }
  if (typeof mod.create !== 'function' || typeof mod.globals !== 'object' || mod.globals === null) {
    throw new WebGpuUnavailableError(
      `the installed 'webgpu' package does not export create() and globals; this library needs webgpu@${WEBGPU_PACKAGE_VERSION} (\`${WEBGPU_INSTALL_COMMAND}\`)`,
    );
  }
  return mod as DawnModule;
}

/** A Dawn instance shared by everything opened with the same flags, released with its last holder. */
export interface DawnInstance {
  readonly gpu: GPU;
  readonly flags: readonly string[];
  /** Gives the holder's reference back; the instance is dropped once none is left. */
  release(): void;
}

const instances = new Map<string, { gpu: GPU; holders: number }>();

/** The instance for `flags` (e.g. `backend=vulkan`), created on first need. */
export function acquireInstance(dawn: DawnModule, flags: readonly string[]): DawnInstance {
  const key = flags.join('\n');
  let entry = instances.get(key);
  if (!entry) {
    entry = { gpu: dawn.create([...flags]), holders: 0 };
    instances.set(key, entry);
  }
  entry.holders++;
  const held = entry;
  let released = false;
  return {
    gpu: held.gpu,
    flags,
    release() {
      if (released) return;
      released = true;
      if (--held.holders === 0 && instances.get(key) === held) instances.delete(key);
    },
  };
}
