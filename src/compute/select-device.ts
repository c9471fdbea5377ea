/**
 * Device selection for schedulers: enumerate the local devices (every device each registered
 * backend's probe reports, the CPU among them), drop those that miss the requirements, and pick
 * the least loaded of the rest.
 *
 * Load is read as free memory (no NVML binding yet, so SM utilisation is not
 * available). GPUs rank before the CPU whatever their free memory: a caller
 * who accepts the CPU as a platform still wants a GPU when one qualifies.
 */
import { InvalidArgumentError } from '../errors.js';
import type { DeviceInfo } from './backend/backend.js';
import { BACKEND_KINDS, registration, type BackendKind } from './backends.js';

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
  backend: string;
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
    // An alias (Metal) lists the devices of the backend it opens, which is enumerated itself.
    if (!platforms.includes(kind) || registration(kind).aliasOf !== undefined) continue;
    const { backend, devices } = await registration(kind).probe();
    if (!backend.available) rejected.push({ backend: kind, reason: backend.reason ?? 'unavailable' });
    for (const device of devices) {
      if (device.info) candidates.push({ info: device.info });
      else rejected.push({ backend: kind, reason: `device ${device.partial.ordinal}: its capabilities could not be read (${device.error})` });
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

  // Unknown free memory (NaN) ranks as none.
  const free = (info: DeviceInfo) => (Number.isNaN(info.freeMemory) ? 0 : info.freeMemory);
  qualified.sort((a, b) => rank(a.info) - rank(b.info) || free(b.info) - free(a.info));
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
    options: { backend: chosen.backend as BackendKind, device: chosen.ordinal },
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
  if (info.software) return 'a software adapter, which the CPU backend outruns';
  if (r.minMemoryBytes !== undefined && Number.isNaN(info.freeMemory)) return `its free memory is unknown (${info.backend} does not report it)`;
  if (r.minMemoryBytes !== undefined && info.freeMemory < r.minMemoryBytes) {
    return `free memory ${gib(info.freeMemory)} is below the required ${gib(r.minMemoryBytes)}`;
  }
  if (r.tensorCores && !info.tensorCores) return 'no tensor cores';
  if (r.fp16 && !info.fp16) return 'no native fp16 arithmetic';
  if (r.bf16 && !info.bf16) return 'no native bf16 arithmetic';
  return undefined;
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
