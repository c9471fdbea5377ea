/// <reference types="@webgpu/types" />
/**
 * Finding a WebGPU adapter through Dawn, and describing it for `info` and backend selection.
 *
 * Dawn's GPUAdapterInfo does not say which native API an adapter runs on, so the backend is
 * always chosen explicitly (Dawn's `backend=` flag): the requested one, else the platform's
 * (Metal on macOS, D3D12 then Vulkan on Windows, Vulkan elsewhere); the answer then names it.
 * Dawn lists every adapter it found in the error it raises for an adapter name that matches
 * none, which is how {@link listWebGpuAdapters} enumerates them.
 */
import { acquireInstance, loadDawn, type DawnImporter, type DawnInstance, type DawnModule } from './dawn.js';
import { WebGpuUnavailableError } from './webgpu-errors.js';

/** The native APIs a WebGPU adapter can run on here. */
export type WebGpuBackendType = 'metal' | 'vulkan' | 'd3d12';

/** Every backend type, for validating options. */
export const WEBGPU_BACKEND_TYPES: readonly WebGpuBackendType[] = ['metal', 'vulkan', 'd3d12'];

/** The adapter features the backend uses when present. */
export const WEBGPU_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query'] as const;

/** One of {@link WEBGPU_FEATURES}. */
export type WebGpuFeature = (typeof WEBGPU_FEATURES)[number];

/** The limits that decide what the backend can run (and that `info` shows). */
export const WEBGPU_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
  'maxUniformBufferBindingSize',
  'minUniformBufferOffsetAlignment',
  'minStorageBufferOffsetAlignment',
] as const;

/** One of {@link WEBGPU_LIMITS}. */
export type WebGpuLimit = (typeof WEBGPU_LIMITS)[number];

/** A WebGPU adapter as `info` reports it. */
export interface WebGpuAdapterInfo {
  /** The native API under Dawn. */
  backendType: WebGpuBackendType;
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** A software adapter (e.g. Mesa's lavapipe, SwiftShader). */
  fallback: boolean;
  /** Whether Dawn's bounds checks are on in the kernels: off on a hardware adapter unless asked for, on for a software one. */
  robustness: boolean;
  /** Subgroup sizes the adapter may use (when it reports them). */
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
  /** The features that matter to the backend, present or not. */
  features: Record<WebGpuFeature, boolean>;
  /** Every feature the adapter offers. */
  allFeatures: string[];
  limits: Record<WebGpuLimit, number>;
}

/** An adapter of Dawn's list: its backend and device name. */
export interface WebGpuAdapterEntry {
  backend: string;
  name: string;
}

/** How to pick an adapter. */
export interface WebGpuAdapterOptions {
  /** Only this native API. Default: the platform's (see the file comment). */
  requireBackend?: WebGpuBackendType;
  /** Passed to `requestAdapter`. */
  powerPreference?: 'low-power' | 'high-performance';
  /** The n-th adapter of {@link listWebGpuAdapters} (filtered by `requireBackend`); default: Dawn's choice. */
  device?: number;
  /**
   * Keep Dawn's bounds checks on every buffer and array access of the kernels (default: the
   * `GPUCOMPUTE_WEBGPU_ROBUSTNESS` environment variable, `1` for on; else off on hardware
   * adapters, on for software ones: the kernels are this library's own and keep their indices in
   * bounds, and the checks cost 4-15% of matmul and attention time on an H200).
   */
  robustness?: boolean;
  /** Dawn toggles to enable (see Dawn's Toggles.cpp). */
  enableToggles?: readonly string[];
  /** Dawn toggles to disable. */
  disableToggles?: readonly string[];
  /** Replaces `import('webgpu')` (tests). */
  importer?: DawnImporter;
}

/** An adapter found, with the instance that owns it (to be released by its user). */
export interface FoundAdapter {
  readonly dawn: DawnModule;
  readonly instance: DawnInstance;
  readonly adapter: GPUAdapter;
  readonly backendType: WebGpuBackendType;
  /** Whether Dawn's bounds checks are on (see {@link findAdapter}). */
  readonly robustness: boolean;
}

/** The backends to try, in order, when none is required. */
export function platformBackends(platform: NodeJS.Platform = process.platform): WebGpuBackendType[] {
  if (platform === 'darwin') return ['metal'];
  if (platform === 'win32') return ['d3d12', 'vulkan'];
  return ['vulkan'];
}

/** Dawn's toggle that turns its bounds checks off. */
const UNCHECKED_TOGGLE = 'disable_robustness';

/** Whether Dawn's bounds checks stay on: the option, else the environment variable. */
export function robustnessWanted(options: WebGpuAdapterOptions, env: NodeJS.ProcessEnv = process.env): boolean {
  return options.robustness ?? env.GPUCOMPUTE_WEBGPU_ROBUSTNESS === '1';
}

function toggleFlags(options: WebGpuAdapterOptions, unchecked: boolean): string[] {
  const flags: string[] = [];
  const enable = [...(options.enableToggles ?? []), ...(unchecked ? [UNCHECKED_TOGGLE] : [])];
  if (enable.length) flags.push(`enable-dawn-features=${enable.join(',')}`);
  if (options.disableToggles?.length) flags.push(`disable-dawn-features=${options.disableToggles.join(',')}`);
  return flags;
}

/** A device name no adapter has, to make Dawn list the adapters it found. */
const NO_SUCH_ADAPTER = 'gpucompute: list the adapters';

/**
 * Every adapter Dawn finds, with its backend, from the list in the error Dawn raises for an
 * adapter name that matches none.
 */
export async function listWebGpuAdapters(importer?: DawnImporter): Promise<WebGpuAdapterEntry[]> {
  const dawn = await loadDawn(importer);
  const gpu = dawn.create([`adapter=${NO_SUCH_ADAPTER}`]);
  try {
    await gpu.requestAdapter();
    return [];
  } catch (err) {
    return parseAdapterList(err instanceof Error ? err.message : String(err));
  }
}

/** The `* backend: 'vulkan', name: '...'` lines of Dawn's adapter list. */
export function parseAdapterList(message: string): WebGpuAdapterEntry[] {
  const entries: WebGpuAdapterEntry[] = [];
  for (const match of message.matchAll(/^\s*\* backend: '([^']*)', name: '(.*)'\s*$/gm)) {
    entries.push({ backend: match[1]!, name: match[2]! });
  }
  return entries;
}

/**
 * Finds an adapter by `options`.
 *
 * Unless robustness is asked for ({@link robustnessWanted}), a hardware adapter comes from an
 * instance with Dawn's `disable_robustness` toggle: the shader compiler then leaves out the
 * clamp it puts on every index into a buffer or array. The kernels are this library's own and
 * keep their indices in bounds themselves (the conformance and hardening suites run on them so);
 * a kernel that did not would read stray values or lose the device, a typed error, as a CUDA
 * kernel would. Burn's CubeCL runs its own kernels unchecked for the same reason. On an H200
 * through Vulkan the clamps cost 7% of attention's time at head dim 256, 15% at 64 and 4% of
 * matmul's. A software adapter keeps them: there a stray read is one of the process's own.
 * @throws WebGpuUnavailableError naming what was tried when none answers (or the package is missing).
 */
export async function findAdapter(options: WebGpuAdapterOptions = {}): Promise<FoundAdapter> {
  const dawn = await loadDawn(options.importer);
  const backends = options.requireBackend ? [options.requireBackend] : platformBackends();
  const misses: string[] = [];
  let name: string | undefined;
  if (options.device !== undefined && options.device !== 0) name = await adapterName(options, backends);
  const request = async (backend: WebGpuBackendType, unchecked: boolean): Promise<FoundAdapter | undefined> => {
    const flags = [`backend=${backend}`, ...toggleFlags(options, unchecked), ...(name ? [`adapter=${name}`] : [])];
    const instance = acquireInstance(dawn, flags);
    try {
      const adapter = await instance.gpu.requestAdapter(options.powerPreference ? { powerPreference: options.powerPreference } : {});
      if (adapter) return { dawn, instance, adapter, backendType: backend, robustness: !unchecked && !options.enableToggles?.includes(UNCHECKED_TOGGLE) };
      misses.push(`${backend}: no adapter`);
    } catch (err) {
      misses.push(`${backend}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
    instance.release();
    return undefined;
  };
  const robust = robustnessWanted(options);
  for (const backend of backends) {
    const found = await request(backend, !robust);
    if (found && !found.robustness && isSoftware(found.adapter)) {
      found.instance.release();
      return (await request(backend, false)) ?? throwUnavailable(misses);
    }
    if (found) return found;
  }
  return throwUnavailable(misses);
}

/** Whether an adapter is a software one (Mesa's lavapipe, SwiftShader): Dawn's isFallbackAdapter. */
function isSoftware(adapter: GPUAdapter): boolean {
  return (adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter === true;
}

function throwUnavailable(misses: readonly string[]): never {
  const hint =
    process.platform === 'linux'
      ? ' (a Vulkan driver is needed: the GPU vendor\'s, or Mesa\'s lavapipe for a software device: apt install mesa-vulkan-drivers)'
      : '';
  throw new WebGpuUnavailableError(`no WebGPU adapter (${misses.join('; ')})${hint}`);
}

/** The device name of adapter number `options.device` among those on `backends`. */
async function adapterName(options: WebGpuAdapterOptions, backends: readonly string[]): Promise<string> {
  const all = (await listWebGpuAdapters(options.importer)).filter((a) => backends.includes(a.backend));
  const ordinal = options.device!;
  const entry = all[ordinal];
  if (!entry) {
    throw new WebGpuUnavailableError(`there is no WebGPU adapter ${ordinal} (found ${all.length}: ${all.map((a) => `${a.backend} '${a.name}'`).join(', ') || 'none'})`);
  }
  // Dawn picks the first adapter whose name contains the given one: a name shared with an earlier adapter cannot be told apart.
  const first = all.findIndex((a) => a.name.includes(entry.name));
  if (first !== ordinal) {
    throw new WebGpuUnavailableError(`WebGPU adapter ${ordinal} ('${entry.name}') cannot be selected: Dawn picks adapters by name and adapter ${first} matches it first`);
  }
  return entry.name;
}

/** The record `info` shows for an adapter. */
export function describeAdapter(adapter: GPUAdapter, backendType: WebGpuBackendType, robustness: boolean): WebGpuAdapterInfo {
  const info = adapter.info as GPUAdapterInfo & { subgroupMinSize?: number; subgroupMaxSize?: number };
  const features = Object.fromEntries(WEBGPU_FEATURES.map((f) => [f, adapter.features.has(f)])) as Record<WebGpuFeature, boolean>;
  const limits = Object.fromEntries(WEBGPU_LIMITS.map((l) => [l, adapter.limits[l]])) as Record<WebGpuLimit, number>;
  return {
    backendType,
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    fallback: isSoftware(adapter),
    robustness,
    ...(info.subgroupMinSize ? { subgroupMinSize: info.subgroupMinSize } : {}),
    ...(info.subgroupMaxSize ? { subgroupMaxSize: info.subgroupMaxSize } : {}),
    features,
    allFeatures: [...adapter.features].sort(),
    limits,
  };
}

/**
 * Describes the adapter the WebGPU backend would use with `options`, without opening a device.
 * @throws WebGpuUnavailableError (with the install command when the package is missing).
 */
export async function webgpuAdapterInfo(options: WebGpuAdapterOptions = {}): Promise<WebGpuAdapterInfo> {
  const found = await findAdapter(options);
  try {
    return describeAdapter(found.adapter, found.backendType, found.robustness);
  } finally {
    found.instance.release();
  }
}
