/**
 * What `gpucompute info` reports, gathered as plain data from every registered backend's probe:
 * per backend whether it can be used and, when not, why (which library paths were tried, what
 * the runtime answered), then every GPU with its capabilities. Nothing here prints;
 * {@link InfoReport} is also the `--json` document.
 */
import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import type { DeviceInfo } from '../compute/backend/backend.js';
import type { ProbedDevice } from '../compute/backend/registration.js';
import { BACKENDS } from '../compute/backends.js';

export type { CallProbe, LibraryProbe } from '../compute/backend/registration.js';
export type { CudaProbe, NcclProbe, NvrtcProbe } from '../compute/cuda/probe.js';
export type { HipProbe } from '../compute/hip/probe.js';
export type { CpuProbe } from '../compute/cpu/registration.js';
export { formatCudaVersion } from '../compute/cuda/device-info.js';
export { probeCpu } from '../compute/cpu/registration.js';
export { probeMetal } from '../compute/metal/registration.js';
export { probeCuda } from '../compute/cuda/probe.js';

/**
 * One GPU in the `--json` document. Every key is always present; a value the
 * backend cannot report (or that failed to read, see `error`) is null.
 * Sizes are in bytes.
 */
export interface InfoDevice {
  backend: string;
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
  /** Each registered backend's probe, in the order `auto` tries them. */
  backends: { [R in (typeof BACKENDS)[number] as R['kind']]: Awaited<ReturnType<R['probe']>>['backend'] };
  /** Every backend's devices, in the same order. */
  devices: InfoDevice[];
}

/** Probes every backend and device. Never rejects for a missing or failing backend. */
export async function probeAll(): Promise<InfoReport> {
  const backends: Record<string, unknown> = {};
  const devices: InfoDevice[] = [];
  for (const registration of BACKENDS) {
    const probe = await registration.probe();
    backends[registration.kind] = probe.backend;
    // The device table lists GPUs: not the host, not an alias's copies, not software adapters.
    if (registration.hostDevice || registration.aliasOf) continue;
    devices.push(...probe.devices.filter((d) => !d.info?.software).map(infoDevice));
  }
  return {
    schema: 1,
    tool: 'gpucompute',
    version: packageVersion(),
    generatedAt: new Date().toISOString(),
    host: { platform: process.platform, arch: process.arch, osRelease: release(), node: process.version },
    backends: backends as InfoReport['backends'],
    devices,
  };
}

/** A probed device as the document's entry: every key present, null where unknown. */
export function infoDevice(device: ProbedDevice): InfoDevice {
  const d: Partial<DeviceInfo> = device.info ?? device.partial;
  const known = <T>(value: T | undefined): T | null => (value === undefined || (typeof value === 'number' && Number.isNaN(value)) ? null : value);
  return {
    backend: d.backend!,
    ordinal: d.ordinal!,
    name: d.deviceName ?? 'unknown',
    uuid: known(d.uuid),
    pciBusId: known(d.pciBusId),
    arch: known(d.arch),
    computeCapability: known(d.computeCapability),
    multiprocessorCount: known(d.multiprocessorCount),
    warpSize: known(d.warpSize),
    maxThreadsPerBlock: known(d.maxThreadsPerBlock),
    memoryTotal: known(d.totalMemory),
    memoryFree: known(d.freeMemory),
    memoryBusWidthBits: known(d.memoryBusWidthBits),
    memoryClockKHz: known(d.memoryClockKHz),
    clockKHz: known(d.clockKHz),
    sharedMemoryPerBlock: known(d.sharedMemoryPerBlock),
    sharedMemoryPerBlockOptin: known(d.sharedMemoryPerBlockOptin),
    l2CacheSize: known(d.l2CacheSize),
    tensorCores: known(d.tensorCores),
    fp16: known(d.fp16),
    bf16: known(d.bf16),
    cooperativeLaunch: known(d.cooperativeLaunch),
    clusterLaunch: known(d.clusterLaunch),
    driverVersion: known(d.driverVersion),
    error: device.error ?? null,
  };
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
