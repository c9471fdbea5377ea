/**
 * What this machine has for the CUDA backend, as plain data: the driver library, cuInit, the
 * driver's versions, the devices, and NVRTC (which compiles the kernels). Serves `gpucompute info`,
 * `selectDevice` and the benchmarks' reports; never throws for a missing or failing driver.
 */
import { readFileSync } from 'node:fs';
import { CudaError } from '../../driver/cuda-error.js';
import { Device } from '../../driver/device.js';
import { openLibcuda } from '../../driver/library.js';
import { deviceGetCount } from '../../driver/raw/device.js';
import { driverGetVersion, init } from '../../driver/raw/init.js';
import { openNccl } from '../../nccl/library.js';
import { getVersion as ncclGetVersion } from '../../nccl/raw/version.js';
import { openNvrtc } from '../../nvrtc/library.js';
import { getSupportedArchs, version as nvrtcVersion } from '../../nvrtc/raw.js';
import {
  errorMessage,
  probeLibrary,
  type BackendProbe,
  type CallProbe,
  type LibraryProbe,
  type ProbedDevice,
  type ProbeOptions,
} from '../backend/registration.js';
import { cudaDeviceInfo, formatCudaVersion } from './device-info.js';

/** NVRTC, the run-time compiler the CUDA backend needs for its kernels. */
export interface NvrtcProbe {
  available: boolean;
  reason: string | null;
  library: LibraryProbe;
  /** `major.minor`, e.g. "13.0". */
  version: string | null;
  /** Targets it can compile for, ascending, e.g. ["sm_75", ..., "sm_90"]. */
  supportedArchs: string[];
}

/** NCCL, the collectives library of `Communicator` between CUDA devices. */
export interface NcclProbe {
  available: boolean;
  reason: string | null;
  library: LibraryProbe;
  /** `major.minor.patch`, e.g. "2.27.3". */
  version: string | null;
}

/** The CUDA backend: driver library, cuInit, versions, device count, NVRTC, NCCL. */
export interface CudaProbe extends BackendProbe {
  library: LibraryProbe;
  /** cuInit(0); null when the library did not load. */
  init: CallProbe | null;
  /** The CUDA version the driver supports, e.g. "13.0" (cuDriverGetVersion). */
  driverVersion: string | null;
  /** The NVIDIA kernel module's version, e.g. "580.65.06" (Linux, /proc/driver/nvidia/version). */
  displayDriverVersion: string | null;
  deviceCount: number | null;
  nvrtc: NvrtcProbe;
  nccl: NcclProbe;
}

/** The CUDA driver, its devices and NVRTC. */
export function probeCuda(options: ProbeOptions = {}): { backend: CudaProbe; devices: ProbedDevice[] } {
  const backend: CudaProbe = {
    available: false,
    reason: null,
    library: probeLibrary(openLibcuda),
    init: null,
    driverVersion: null,
    displayDriverVersion: readNvidiaModuleVersion(),
    deviceCount: null,
    nvrtc: probeNvrtc(),
    nccl: probeNccl(),
  };
  const devices: ProbedDevice[] = [];
  if (!backend.library.found) {
    backend.reason = `the CUDA driver library (libcuda) is not installed: none of ${backend.library.tried.length} candidates loaded`;
    return { backend, devices };
  }
  backend.init = cudaCall('cuInit', () => init(0));
  const version = attempt(driverGetVersion);
  backend.driverVersion = version === undefined ? null : formatCudaVersion(version);
  if (!backend.init.ok) {
    backend.reason = `cuInit failed with ${backend.init.name} (${backend.init.code}): ${backend.init.description}`;
    return { backend, devices };
  }
  const count = cudaCall('cuDeviceGetCount', () => {
    backend.deviceCount = deviceGetCount();
  });
  if (!count.ok) {
    backend.reason = `cuDeviceGetCount failed with ${count.name} (${count.code}): ${count.description}`;
    return { backend, devices };
  }
  for (let ordinal = 0; ordinal < backend.deviceCount!; ordinal++) {
    devices.push(describeDevice(ordinal, version ?? 0, options.freeMemory ?? true));
  }
  backend.available = backend.deviceCount! > 0;
  if (!backend.available) backend.reason = 'the CUDA driver loaded but sees no device';
  return { backend, devices };
}

function describeDevice(ordinal: number, driverVersion: number, readFree: boolean): ProbedDevice {
  try {
    const device = Device.get(ordinal);
    if (!readFree) return { info: cudaDeviceInfo(device, driverVersion, undefined) };
    // Free memory needs a context; the primary one is retained just for this.
    const context = device.primaryContext();
    try {
      return { info: cudaDeviceInfo(device, driverVersion, context.memoryInfo().free) };
    } finally {
      context.dispose();
    }
  } catch (err) {
    return { partial: { backend: 'cuda', ordinal }, error: errorMessage(err) };
  }
}

/** NVRTC: where it loaded from, its version and targets. */
export function probeNvrtc(): NvrtcProbe {
  const probe: NvrtcProbe = { available: false, reason: null, library: probeLibrary(openNvrtc), version: null, supportedArchs: [] };
  if (!probe.library.found) {
    probe.reason = `NVRTC is not installed: none of ${probe.library.tried.length} candidates loaded`;
    return probe;
  }
  try {
    const { major, minor } = nvrtcVersion();
    probe.version = `${major}.${minor}`;
    probe.supportedArchs = getSupportedArchs().map((sm) => `sm_${sm}`);
    probe.available = true;
  } catch (err) {
    probe.reason = `NVRTC loaded from ${probe.library.path} but failed: ${errorMessage(err)}`;
  }
  return probe;
}

/** NCCL: where it loaded from and its version (no GPU needed to ask). */
export function probeNccl(): NcclProbe {
  const probe: NcclProbe = { available: false, reason: null, library: probeLibrary(openNccl), version: null };
  if (!probe.library.found) {
    probe.reason = `NCCL is not installed: none of ${probe.library.tried.length} candidates loaded`;
    return probe;
  }
  try {
    const { major, minor, patch } = ncclGetVersion();
    probe.version = `${major}.${minor}.${patch}`;
    probe.available = true;
  } catch (err) {
    probe.reason = `NCCL loaded from ${probe.library.path} but failed: ${errorMessage(err)}`;
  }
  return probe;
}

function cudaCall(call: string, fn: () => void): CallProbe {
  try {
    fn();
    return { call, ok: true, code: 0, name: 'CUDA_SUCCESS', description: 'no error' };
  } catch (err) {
    if (err instanceof CudaError) return { call, ok: false, code: err.result, name: err.errorName, description: err.description };
    return { call, ok: false, code: -1, name: err instanceof Error ? err.name : 'Error', description: errorMessage(err) };
  }
}

/** "580.65.06" from /proc/driver/nvidia/version, where the NVIDIA kernel module is loaded. */
function readNvidiaModuleVersion(): string | null {
  if (process.platform !== 'linux') return null;
  const text = attempt(() => readFileSync('/proc/driver/nvidia/version', 'utf8'));
  return (text && /Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)/.exec(text)?.[1]) || null;
}

function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn() ?? undefined;
  } catch {
    return undefined;
  }
}
