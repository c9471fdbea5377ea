/**
 * What `gpucompute info` reports, gathered as plain data: per backend whether
 * it can be used and, when not, why (which library paths were tried, what the
 * runtime answered), then every GPU with its capabilities. Nothing here
 * prints; {@link InfoReport} is also the `--json` document.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, freemem, release, totalmem } from 'node:os';
import { LibraryNotFoundError, type LibraryAttempt } from '../errors.js';
import type { LoadedLibrary } from '../ffi/library.js';
import { CudaError } from '../driver/cuda-error.js';
import { Device } from '../driver/device.js';
import { openLibcuda } from '../driver/library.js';
import { deviceGetCount } from '../driver/raw/device.js';
import { driverGetVersion, init } from '../driver/raw/init.js';
import { openNvrtc } from '../nvrtc/library.js';
import { getSupportedArchs, version as nvrtcVersion } from '../nvrtc/raw.js';
import { hipResultDescription } from '../hip/hip-result.js';
import { formatHipVersion, hipProbeFunctions as hip, openHipRuntime } from '../hip/runtime.js';

/** Whether a shared library loaded, from where, and every candidate that did not. */
export interface LibraryProbe {
  found: boolean;
  /** The candidate that loaded; null when none did. */
  path: string | null;
  /** Candidates that failed, in order, with the loader's error. */
  tried: LibraryAttempt[];
}

/** The outcome of one runtime call such as `cuInit`. */
export interface CallProbe {
  call: string;
  ok: boolean;
  /** The result code (0 on success). */
  code: number;
  /** Its name, e.g. `CUDA_ERROR_NO_DEVICE` or `hipErrorNoDevice`. */
  name: string;
  /** What the code means: the CUDA driver's description, or for HIP (whose runtime gives names only) this library's table. */
  description: string | null;
}

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

/** The CUDA backend: driver library, cuInit, versions, device count, NVRTC. */
export interface CudaProbe {
  available: boolean;
  /** Why it is not available; null when it is. */
  reason: string | null;
  library: LibraryProbe;
  /** cuInit(0); null when the library did not load. */
  init: CallProbe | null;
  /** The CUDA version the driver supports, e.g. "13.0" (cuDriverGetVersion). */
  driverVersion: string | null;
  /** The NVIDIA kernel module's version, e.g. "580.65.06" (Linux, /proc/driver/nvidia/version). */
  displayDriverVersion: string | null;
  deviceCount: number | null;
  nvrtc: NvrtcProbe;
}

/** The HIP backend (AMD GPUs through ROCm). */
export interface HipProbe {
  available: boolean;
  reason: string | null;
  library: LibraryProbe;
  init: CallProbe | null;
  /** hipGetDeviceCount's outcome; a failure here (hipErrorNoDevice) is the usual "no AMD GPU". */
  deviceCountCall: CallProbe | null;
  deviceCount: number | null;
  /** HIP runtime version, `major.minor.patch`. */
  runtimeVersion: string | null;
  driverVersion: string | null;
}

/** The Metal backend (macOS). */
export interface MetalProbe {
  available: boolean;
  reason: string | null;
}

/** The CPU backend, which always works. */
export interface CpuProbe {
  available: true;
  reason: null;
  model: string;
  /** Logical cores the process may use. */
  cores: number;
  memoryTotal: number;
  memoryFree: number;
}

/**
 * One GPU and what it can do. Every key is always present; a value the
 * backend cannot report (or that failed to read, see `error`) is null.
 * Sizes are in bytes.
 */
export interface DeviceInfo {
  backend: 'cuda' | 'hip';
  /** The backend's device ordinal. */
  ordinal: number;
  name: string;
  uuid: string | null;
  pciBusId: string | null;
  /** Compiler target, e.g. "sm_90". */
  arch: string | null;
  /** e.g. "9.0". */
  computeCapability: string | null;
  multiprocessorCount: number | null;
  warpSize: number | null;
  maxThreadsPerBlock: number | null;
  memoryTotal: number | null;
  memoryFree: number | null;
  memoryBusWidthBits: number | null;
  memoryClockKHz: number | null;
  clockKHz: number | null;
  sharedMemoryPerBlock: number | null;
  /** Shared memory per block after opting in (cuFuncSetAttribute). */
  sharedMemoryPerBlockOptin: number | null;
  l2CacheSize: number | null;
  tensorCores: boolean | null;
  fp16: boolean | null;
  bf16: boolean | null;
  cooperativeLaunch: boolean | null;
  clusterLaunch: boolean | null;
  /** The backend's driver version (CUDA version for CUDA devices). */
  driverVersion: string | null;
  /** Why some values are null, when reading them failed. */
  error: string | null;
}

/**
 * The `gpucompute info --json` document. `schema` changes only when a key is
 * removed or changes meaning; new keys may be added within a schema.
 */
export interface InfoReport {
  schema: 1;
  tool: 'gpucompute';
  /** This package's version. */
  version: string;
  /** ISO 8601 time of the probe. */
  generatedAt: string;
  host: { platform: string; arch: string; osRelease: string; node: string };
  backends: { cuda: CudaProbe; hip: HipProbe; metal: MetalProbe; cpu: CpuProbe };
  /** CUDA devices first, then HIP devices. */
  devices: DeviceInfo[];
}

/** Probes every backend and device. Never throws for a missing or failing backend. */
export function probeAll(): InfoReport {
  const cuda = probeCuda();
  const hipResult = probeHip();
  return {
    schema: 1,
    tool: 'gpucompute',
    version: packageVersion(),
    generatedAt: new Date().toISOString(),
    host: { platform: process.platform, arch: process.arch, osRelease: release(), node: process.version },
    backends: { cuda: cuda.backend, hip: hipResult.backend, metal: probeMetal(), cpu: probeCpu() },
    devices: [...cuda.devices, ...hipResult.devices],
  };
}

/** What {@link probeCuda} reads. */
export interface CudaProbeOptions {
  /** Read each device's free memory, which retains its primary context (creating it when needed); default true. */
  freeMemory?: boolean;
}

/** The CUDA driver, its devices and NVRTC. */
export function probeCuda(options: CudaProbeOptions = {}): { backend: CudaProbe; devices: DeviceInfo[] } {
  const backend: CudaProbe = {
    available: false,
    reason: null,
    library: probeLibrary(openLibcuda),
    init: null,
    driverVersion: null,
    displayDriverVersion: readNvidiaModuleVersion(),
    deviceCount: null,
    nvrtc: probeNvrtc(),
  };
  const devices: DeviceInfo[] = [];
  if (!backend.library.found) {
    backend.reason = `the CUDA driver library (libcuda) is not installed: none of ${backend.library.tried.length} candidates loaded`;
    return { backend, devices };
  }
  backend.init = cudaCall('cuInit', () => init(0));
  backend.driverVersion = attempt(() => formatCudaVersion(driverGetVersion())) ?? null;
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
    devices.push(describeCudaDevice(ordinal, backend.driverVersion, options.freeMemory ?? true));
  }
  backend.available = backend.deviceCount! > 0;
  if (!backend.available) backend.reason = 'the CUDA driver loaded but sees no device';
  return { backend, devices };
}

function describeCudaDevice(ordinal: number, driverVersion: string | null, freeMemory: boolean): DeviceInfo {
  const info = emptyDevice('cuda', ordinal, driverVersion);
  try {
    const device = Device.get(ordinal);
    info.name = device.name;
    const cc = device.computeCapability;
    Object.assign(info, {
      uuid: device.uuid,
      pciBusId: device.pciBusId,
      arch: device.arch,
      computeCapability: `${cc.major}.${cc.minor}`,
      multiprocessorCount: device.multiprocessorCount,
      warpSize: device.warpSize,
      maxThreadsPerBlock: device.maxThreadsPerBlock,
      memoryTotal: device.totalMemory,
      memoryBusWidthBits: device.memoryBusWidth,
      memoryClockKHz: device.memoryClockRateKHz,
      clockKHz: device.clockRateKHz,
      sharedMemoryPerBlock: device.sharedMemoryPerBlock,
      sharedMemoryPerBlockOptin: device.sharedMemoryPerBlockOptin,
      l2CacheSize: device.l2CacheSize,
      tensorCores: device.supportsTensorCores,
      fp16: device.supportsFp16,
      bf16: device.supportsBf16,
      cooperativeLaunch: device.cooperativeLaunch,
      clusterLaunch: device.clusterLaunch,
    } satisfies Partial<DeviceInfo>);
    if (!freeMemory) return info;
    // Free memory needs a context; the primary one is retained just for this.
    const ctx = device.primaryContext();
    try {
      info.memoryFree = ctx.memoryInfo().free;
    } finally {
      ctx.dispose();
    }
  } catch (err) {
    info.error = message(err);
  }
  return info;
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
    probe.reason = `NVRTC loaded from ${probe.library.path} but failed: ${message(err)}`;
  }
  return probe;
}

/** The HIP runtime and its devices; the backend is available when the runtime sees a device. */
export function probeHip(): { backend: HipProbe; devices: DeviceInfo[] } {
  const backend: HipProbe = {
    available: false,
    reason: null,
    library: probeLibrary(openHipRuntime),
    init: null,
    deviceCountCall: null,
    deviceCount: null,
    runtimeVersion: null,
    driverVersion: null,
  };
  const devices: DeviceInfo[] = [];
  if (!backend.library.found) {
    backend.reason = `the HIP runtime (libamdhip64) is not installed: none of ${backend.library.tried.length} candidates loaded`;
    return { backend, devices };
  }
  try {
    inspectHip(backend, devices);
  } catch (err) {
    // A runtime lacking one of these entry points (MissingSymbolError) is reported, not fatal.
    backend.reason = `the HIP runtime at ${backend.library.path} failed: ${message(err)}`;
  }
  return { backend, devices };
}

function inspectHip(backend: HipProbe, devices: DeviceInfo[]): void {
  const version = new Int32Array(1);
  backend.runtimeVersion = hip.hipRuntimeGetVersion(version) === 0 ? formatHipVersion(version[0]!) : null;
  backend.driverVersion = hip.hipDriverGetVersion(version) === 0 ? formatHipVersion(version[0]!) : null;
  backend.init = hipCall('hipInit', hip.hipInit(0) as number);
  const count = new Int32Array(1);
  backend.deviceCountCall = hipCall('hipGetDeviceCount', hip.hipGetDeviceCount(count) as number);
  if (!backend.deviceCountCall.ok) {
    const initNote = backend.init.ok ? '' : `hipInit returned ${backend.init.name} (${backend.init.code}), `;
    backend.reason = `no HIP device: ${initNote}hipGetDeviceCount returned ${backend.deviceCountCall.name} (${backend.deviceCountCall.code})`;
    return;
  }
  backend.deviceCount = count[0]!;
  for (let ordinal = 0; ordinal < backend.deviceCount; ordinal++) devices.push(describeHipDevice(ordinal, backend.driverVersion));
  backend.available = backend.deviceCount > 0;
  backend.reason = backend.available ? null : 'the HIP runtime loaded but sees no device';
}

function describeHipDevice(ordinal: number, driverVersion: string | null): DeviceInfo {
  const info = emptyDevice('hip', ordinal, driverVersion);
  const handle = new Int32Array(1);
  const name = Buffer.alloc(256);
  const bytes = new BigUint64Array(1);
  const failed = (call: string, code: number) => `${call} returned ${hipErrorName(code)} (${code})`;
  let code = hip.hipDeviceGet(handle, ordinal) as number;
  if (code !== 0) {
    info.error = failed('hipDeviceGet', code);
    return info;
  }
  code = hip.hipDeviceGetName(name, name.length, handle[0]!) as number;
  if (code === 0) info.name = name.toString('utf8', 0, Math.max(0, name.indexOf(0)));
  else info.error = failed('hipDeviceGetName', code);
  code = hip.hipDeviceTotalMem(bytes, handle[0]!) as number;
  if (code === 0) info.memoryTotal = Number(bytes[0]!);
  else info.error = failed('hipDeviceTotalMem', code);
  return info;
}

/** Metal: only macOS has it, and this version has no Metal backend. */
export function probeMetal(): MetalProbe {
  return {
    available: false,
    reason:
      process.platform === 'darwin'
        ? 'this version of gpucompute has no Metal backend'
        : `Metal exists only on macOS (this is ${process.platform})`,
  };
}

/** The CPU backend's resources. */
export function probeCpu(): CpuProbe {
  return {
    available: true,
    reason: null,
    model: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryTotal: totalmem(),
    memoryFree: freemem(),
  };
}

/** 13000 → "13.0", 12040 → "12.4" (the encoding of cuDriverGetVersion and CUDA_VERSION). */
export function formatCudaVersion(version: number): string {
  return `${Math.floor(version / 1000)}.${Math.floor((version % 1000) / 10)}`;
}

/** The version of this package, from its package.json (one folder above `src/` or `dist/`). */
export function packageVersion(): string {
  try {
    const json = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return json.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function probeLibrary(open: () => LoadedLibrary): LibraryProbe {
  try {
    return { found: true, path: open().path, tried: [] };
  } catch (err) {
    if (err instanceof LibraryNotFoundError) return { found: false, path: null, tried: [...err.attempts] };
    return { found: false, path: null, tried: [{ path: '(loading)', error: message(err) }] };
  }
}

function cudaCall(call: string, fn: () => void): CallProbe {
  try {
    fn();
    return { call, ok: true, code: 0, name: 'CUDA_SUCCESS', description: 'no error' };
  } catch (err) {
    if (err instanceof CudaError) return { call, ok: false, code: err.result, name: err.errorName, description: err.description };
    return { call, ok: false, code: -1, name: err instanceof Error ? err.name : 'Error', description: message(err) };
  }
}

function hipCall(call: string, code: number): CallProbe {
  return { call, ok: code === 0, code, name: hipErrorName(code), description: hipResultDescription(code) };
}

function hipErrorName(code: number): string {
  return attempt(() => hip.hipGetErrorName(code) as string | null) ?? `hipError ${code}`;
}

function emptyDevice(backend: 'cuda' | 'hip', ordinal: number, driverVersion: string | null): DeviceInfo {
  return {
    backend,
    ordinal,
    name: 'unknown',
    uuid: null,
    pciBusId: null,
    arch: null,
    computeCapability: null,
    multiprocessorCount: null,
    warpSize: null,
    maxThreadsPerBlock: null,
    memoryTotal: null,
    memoryFree: null,
    memoryBusWidthBits: null,
    memoryClockKHz: null,
    clockKHz: null,
    sharedMemoryPerBlock: null,
    sharedMemoryPerBlockOptin: null,
    l2CacheSize: null,
    tensorCores: null,
    fp16: null,
    bf16: null,
    cooperativeLaunch: null,
    clusterLaunch: null,
    driverVersion,
    error: null,
  };
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

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
