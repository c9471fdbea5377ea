/**
 * The WebGPU backend's registration: any GPU through Dawn (the optional `webgpu` package) on
 * Vulkan, Metal or D3D12. `auto` takes it after CUDA and HIP and before the CPU, but not on a
 * software adapter (Mesa's lavapipe, SwiftShader), which the CPU backend outruns; an explicit
 * `backend: 'webgpu'` takes any adapter.
 */
import { BackendUnavailableError, oneLine, type BackendProbe, type BackendRegistration, type ProbedDevice } from '../backend/registration.js';
import { listWebGpuAdapters, webgpuAdapterInfo, type WebGpuAdapterEntry, type WebGpuAdapterInfo, type WebGpuAdapterOptions } from './adapter.js';
import { webgpuDeviceInfo } from './device-info.js';
import { WEBGPU_UNSUPPORTED } from './support.js';
import { WebGpuUnavailableError } from './webgpu-errors.js';

/** The WebGPU backend: the adapter it would use, and every adapter Dawn sees. */
export interface WebGpuProbe extends BackendProbe {
  /** The adapter `backend: 'webgpu'` opens; null when there is none. */
  adapter: WebGpuAdapterInfo | null;
  /** Every adapter Dawn finds, with its native API. */
  adapters: WebGpuAdapterEntry[];
}

/** The unavailable reason `auto` gives a software adapter. */
export function softwareAdapterReason(adapter: WebGpuAdapterInfo): string {
  return `only a software adapter (${adapter.description || adapter.device}), which the CPU backend outruns; select it with backend: 'webgpu'`;
}

/** What the WebGPU backend finds with `options` (a required native API, for Metal). */
export async function probeWebGpu(options: WebGpuAdapterOptions = {}): Promise<{ backend: WebGpuProbe; devices: ProbedDevice[] }> {
  const backend: WebGpuProbe = { available: false, reason: null, adapter: null, adapters: [] };
  try {
    backend.adapter = await webgpuAdapterInfo(options);
    backend.adapters = await listWebGpuAdapters();
    backend.available = true;
    return { backend, devices: [{ info: webgpuDeviceInfo(backend.adapter, options.device ?? 0) }] };
  } catch (err) {
    backend.reason = err instanceof WebGpuUnavailableError ? err.reason : oneLine(err);
    return { backend, devices: [] };
  }
}

/** `gpucompute info`'s lines for a WebGPU probe. */
export function describeWebGpu(probe: WebGpuProbe): { summary: string; details: string[] } {
  const a = probe.adapter;
  if (!a) return { summary: probe.reason ?? 'unknown reason', details: [] };
  const features = Object.entries(a.features).map(([f, has]) => `${f} ${has ? 'yes' : 'no'}`).join(', ');
  const details = [
    `${a.vendor} ${a.architecture} through ${a.backendType}${a.fallback ? ' (software adapter: auto prefers the CPU backend)' : ''}`,
    `features: ${features}${a.subgroupMinSize ? `; subgroups of ${a.subgroupMinSize}–${a.subgroupMaxSize}` : ''}; bounds checks ${a.robustness ? 'on' : 'off (GPUCOMPUTE_WEBGPU_ROBUSTNESS=1 turns them on)'}`,
    `limits: storage binding ${a.limits.maxStorageBufferBindingSize} B, workgroup memory ${a.limits.maxComputeWorkgroupStorageSize} B, ${a.limits.maxComputeInvocationsPerWorkgroup} invocations per workgroup`,
    ...probe.adapters.map((entry, i) => `adapter ${i}: ${entry.name} (${entry.backend})`),
  ];
  return { summary: a.description || a.device, details };
}

/** Opens the WebGPU backend with `options`, turning Dawn's unavailability into BackendUnavailableError for `kind`. */
export async function openWebGpu(kind: string, options: Parameters<BackendRegistration['open']>[0], adapter: WebGpuAdapterOptions = {}) {
  const { device, poolLimitBytes, logger, auto } = options;
  let backend;
  try {
    // Loaded on demand: Dawn is an optional peer dependency.
    const { createWebGpuBackend } = await import('./webgpu-backend.js');
    backend = await createWebGpuBackend({ ...adapter, device, logger, ...(poolLimitBytes === undefined ? {} : { poolLimitBytes }) });
  } catch (err) {
    throw new BackendUnavailableError(kind, err instanceof WebGpuUnavailableError ? err.reason : oneLine(err), err);
  }
  if (auto && backend.dev.adapterInfo.fallback) {
    const reason = softwareAdapterReason(backend.dev.adapterInfo);
    backend.dispose();
    throw new BackendUnavailableError(kind, reason);
  }
  return backend;
}

export const webgpuRegistration: BackendRegistration<'webgpu', WebGpuProbe> = {
  kind: 'webgpu',
  title: 'WebGPU',
  unsupported: WEBGPU_UNSUPPORTED,
  probe: () => probeWebGpu(),
  describe: describeWebGpu,
  open: (options) => openWebGpu('webgpu', options),
};
