/** The capability record of a WebGPU adapter, shared by the WebGPU backend's `info()` and its probe. */
import type { DeviceInfo } from '../backend/backend.js';
import type { WebGpuAdapterInfo } from './adapter.js';
import { WEBGPU_PACKAGE_VERSION } from './webgpu-errors.js';

/** `adapter` as the device of ordinal `ordinal`; `fp16` says whether f16 is computed natively. */
export function webgpuDeviceInfo(adapter: WebGpuAdapterInfo, ordinal: number, fp16: boolean = adapter.features['shader-f16']): DeviceInfo {
  return {
    backend: 'webgpu',
    platform: `WebGPU (Dawn, webgpu@${WEBGPU_PACKAGE_VERSION}) on ${adapter.backendType}${adapter.fallback ? ', software adapter' : ''}`,
    deviceName: adapter.description || adapter.device || `${adapter.vendor} ${adapter.architecture}`.trim(),
    ordinal,
    // WebGPU reports no memory sizes or compute-unit counts: unknown.
    totalMemory: NaN,
    freeMemory: NaN,
    multiprocessorCount: NaN,
    tensorCores: false,
    fp16,
    bf16: false,
    ...(adapter.fallback ? { software: true } : {}),
  };
}
