/**
 * Device selection for schedulers: enumerate the local devices (every CUDA
 * and HIP device the runtimes report, plus the CPU), drop those that miss the
 * requirements, and pick the least loaded of the rest.
 *
 * Load is read as free memory (no NVML binding yet, so SM utilisation is not
 * available). GPUs rank before the CPU whatever their free memory: a caller
 * who accepts the CPU as a platform still wants a GPU when one qualifies.
 */
import { InvalidArgumentError } from '../errors.js';
import { BACKEND_KINDS, type BackendKind, type DeviceInfo } from './backend/backend.js';
import { CpuBackend } from './cpu/cpu-backend.js';

/** What a caller needs from a device. Every field is optional. */
export interface DeviceRequirements {
  /** Minimum free memory in bytes, read now. */
  minMemoryBytes?: number;
  /** Require tensor cores. */
  tensorCores?: boolean;
  /** Acceptable backends (default: all). */
  platforms?: readonly BackendKind[];
  /** Require native f16 arithmetic. */
  fp16?: boolean;
  /** Require native bf16 arithmetic. */
  bf16?: boolean;
}

/** A device that was looked at and not chosen, or a platform that offered none. */
export interface DeviceRejection {
  backend: BackendKind;
  /** Absent when the whole platform was unavailable. */
  device?: DeviceInfo;
  reason: string;
}

/** The outcome of {@link selectDevice}. */
export interface DeviceSelection {
  /** The chosen device. */
  chosen: DeviceInfo;
  /** Options that open it: `GpuCompute.create(selection.options)`. */
  options: { backend: BackendKind; device: number };
  /** Why it won. */
  reason: string;
  /** Every other device or platform, with why it lost. */
  rejected: DeviceRejection[];
}

/** One enumerated device. */
export interface DeviceCandidate {
  info: DeviceInfo;
}

/**
 * Picks a local device. Throws {@link InvalidArgumentError} for malformed
 * requirements, and when no device qualifies (the message lists every rejection).
 */
export async function selectDevice(requirements: DeviceRequirements = {}): Promise<DeviceSelection> {
  const platforms = validateRequirements(requirements);
  const rejected: DeviceRejection[] = [];
  const candidates: DeviceCandidate[] = [];
  for (const kind of BACKEND_KINDS) {
    if (!platforms.includes(kind)) continue;
    try {
      for (const info of await enumerate(kind)) candidates.push({ info });
    } catch (err) {
      rejected.push({ backend: kind, reason: err instanceof Error ? err.message.replace(/\s*\n\s*/g, ' ') : String(err) });
    }
  }
  for (const kind of BACKEND_KINDS) {
    if (!platforms.includes(kind)) rejected.push({ backend: kind, reason: `not in the allowed platforms (${platforms.join(', ')})` });
  }

  const qualified: DeviceCandidate[] = [];
  for (const candidate of candidates) {
    const miss = unmetRequirement(candidate.info, requirements);
    if (miss) rejected.push({ backend: candidate.info.backend, device: candidate.info, reason: miss });
    else qualified.push(candidate);
  }
  if (qualified.length === 0) {
    const why = rejected.map((r) => `${label(r)}: ${r.reason}`).join('; ');
    throw new InvalidArgumentError(`selectDevice: no local device meets the requirements (${why})`);
  }

  qualified.sort((a, b) => rank(a.info) - rank(b.info) || b.info.freeMemory - a.info.freeMemory);
  const [best, ...others] = qualified;
  const chosen = best!.info;
  for (const other of others) {
    const reason =
      rank(other.info) > rank(chosen)
        ? `a ${chosen.backend} device qualifies and is preferred over ${other.info.backend}`
        : `less free memory (${gib(other.info.freeMemory)} vs ${gib(chosen.freeMemory)})`;
    rejected.push({ backend: other.info.backend, device: other.info, reason });
  }
  return {
    chosen,
    options: { backend: chosen.backend, device: chosen.ordinal },
    reason: `meets the requirements with the most free memory (${gib(chosen.freeMemory)}) among ${qualified.length} qualifying device(s) of the preferred platform`,
    rejected,
  };
}

function validateRequirements(r: DeviceRequirements): readonly BackendKind[] {
  const op = 'selectDevice';
  if (r.minMemoryBytes !== undefined && (!Number.isFinite(r.minMemoryBytes) || r.minMemoryBytes < 0)) {
    throw new InvalidArgumentError(`${op}: minMemoryBytes must be a number ≥ 0, got ${String(r.minMemoryBytes)}`);
  }
  const platforms = r.platforms ?? BACKEND_KINDS;
  for (const p of platforms) {
    if (!BACKEND_KINDS.includes(p)) throw new InvalidArgumentError(`${op}: unknown platform ${String(p)} (use ${BACKEND_KINDS.join(', ')})`);
  }
  return platforms;
}

/** The first requirement `info` misses, or undefined. */
function unmetRequirement(info: DeviceInfo, r: DeviceRequirements): string | undefined {
  if (r.minMemoryBytes !== undefined && info.freeMemory < r.minMemoryBytes) {
    return `free memory ${gib(info.freeMemory)} is below the required ${gib(r.minMemoryBytes)}`;
  }
  if (r.tensorCores && !info.tensorCores) return 'no tensor cores';
  if (r.fp16 && !info.fp16) return 'no native fp16 arithmetic';
  if (r.bf16 && !info.bf16) return 'no native bf16 arithmetic';
  return undefined;
}

/** Lists the devices of one platform, or throws why it has none. */
async function enumerate(kind: BackendKind): Promise<DeviceInfo[]> {
  switch (kind) {
    case 'cuda':
      return enumerateCuda();
    case 'cpu': {
      const cpu = new CpuBackend();
      return [cpu.info()];
    }
    case 'hip':
      return enumerateHip();
    case 'metal': {
      const { platformUnavailableReason } = await import('./backend-selection.js');
      throw new Error(platformUnavailableReason(kind));
    }
  }
}

/** CUDA devices through the driver's safe tier, loaded only when CUDA is asked about. */
async function enumerateCuda(): Promise<DeviceInfo[]> {
  const { Device } = await import('../driver/device.js');
  const { driverGetVersion } = await import('../driver/raw/init.js');
  // count() loads libcuda and runs cuInit: it throws LibraryNotFoundError without a driver.
  const count = Device.count();
  if (count === 0) throw new Error('the CUDA driver reports no device');
  const version = driverGetVersion();
  const platform = `CUDA (driver API ${Math.floor(version / 1000)}.${(version % 1000) / 10})`;
  const devices: DeviceInfo[] = [];
  for (let ordinal = 0; ordinal < count; ordinal++) {
    const device = Device.get(ordinal);
    const context = device.primaryContext();
    try {
      const { major, minor } = device.computeCapability;
      devices.push({
        backend: 'cuda',
        platform,
        deviceName: device.name,
        ordinal,
        computeCapability: `${major}.${minor}`,
        arch: device.arch,
        totalMemory: device.totalMemory,
        freeMemory: context.memoryInfo().free,
        multiprocessorCount: device.multiprocessorCount,
        tensorCores: device.supportsTensorCores,
        fp16: device.supportsFp16,
        bf16: device.supportsBf16,
      });
    } finally {
      context.dispose();
    }
  }
  return devices;
}

/** HIP devices through the HIP safe tier, loaded only when HIP is asked about. */
async function enumerateHip(): Promise<DeviceInfo[]> {
  const { platformUnavailableReason } = await import('./backend-selection.js');
  const { HipDevice } = await import('../hip/device.js');
  const { hipDeviceInfo } = await import('./hip/hip-device-info.js');
  let count = 0;
  try {
    count = HipDevice.count();
  } catch {
    count = 0;
  }
  // The probe's reason names the library, hipInit's and hipGetDeviceCount's answers.
  if (count === 0) throw new Error(platformUnavailableReason('hip'));
  return Array.from({ length: count }, (_, ordinal) => hipDeviceInfo(HipDevice.get(ordinal)));
}

function rank(info: DeviceInfo): number {
  return info.backend === 'cpu' ? 1 : 0;
}

function label(r: DeviceRejection): string {
  return r.device ? `${r.backend}:${r.device.ordinal} ${r.device.deviceName}` : r.backend;
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}
