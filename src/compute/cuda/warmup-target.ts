/**
 * The device a kernel warmup compiles for: its arch (given, or the present CUDA device's), what
 * NVRTC makes of it, and the device limits that decide which kernel configurations the engine
 * picks there. Given an arch, only NVRTC is needed, not a GPU.
 */
import { Device } from '../../driver/device.js';
import { InvalidArgumentError } from '../../errors.js';
import { parseArch, resolveArch } from '../../nvrtc/arch.js';
import * as nvrtc from '../../nvrtc/raw.js';

/** What a warmup compiles for. */
export interface WarmupTarget {
  /** The device's arch, e.g. `sm_90`. */
  readonly deviceArch: string;
  /**
   * What the device's own compiles target: its arch clamped to what NVRTC supports (`sm_90`), or
   * PTX for the highest supported arch (`compute_90`) on a device newer than NVRTC knows.
   */
  readonly compileArch: string;
  /** NVRTC's version, e.g. `12.8`. */
  readonly nvrtcVersion: string;
  /** Whether NVRTC builds arch-specific targets (`sm_90a`, the Hopper kernels): version 12 on. */
  readonly archSpecific: boolean;
  /** Dynamic shared memory one block may opt in to, in bytes: the device's, else its arch's documented value. */
  readonly sharedMemoryPerBlockOptin: number;
}

/**
 * Shared memory per block with opt-in, by compute capability (CUDA C++ Programming Guide,
 * "Technical Specifications per Compute Capability"), for an arch given without its device.
 */
const OPTIN_SHARED_MEMORY: Readonly<Record<number, number>> = {
  70: 96 * 1024,
  72: 96 * 1024,
  75: 64 * 1024,
  80: 163 * 1024,
  86: 99 * 1024,
  87: 163 * 1024,
  89: 99 * 1024,
  90: 227 * 1024,
  100: 227 * 1024,
  101: 227 * 1024,
  103: 227 * 1024,
  110: 227 * 1024,
  120: 99 * 1024,
  121: 99 * 1024,
};

/** What every CUDA device gives a block without opting in: the value used for an arch the table does not know. */
const PORTABLE_SHARED_MEMORY = 48 * 1024;

/**
 * The opt-in shared memory per block of a device of `arch` (`sm_XY`); 48 KiB for an arch this
 * library has no figure for (the warmup then leaves out the larger tiles, which compile on first
 * use if the device takes them).
 */
export function archSharedMemoryOptin(arch: string): number {
  return OPTIN_SHARED_MEMORY[parseArch(arch).number] ?? PORTABLE_SHARED_MEMORY;
}

/**
 * The target of a warmup for `arch` (a device arch, `sm_XY`), or for the current CUDA device
 * (else device 0) when no arch is given. Loads NVRTC.
 * @throws InvalidArgumentError for an arch that is not `sm_XY`, one NVRTC cannot build for, or
 *   no arch where no CUDA device answers.
 * @throws LibraryNotFoundError when NVRTC is not found.
 */
export function resolveWarmupTarget(arch?: string): WarmupTarget {
  let deviceArch: string;
  let optin: number | undefined;
  if (arch === undefined) {
    let device: Device;
    try {
      device = Device.current();
      deviceArch = device.arch;
      optin = device.sharedMemoryPerBlockOptin;
    } catch (err) {
      // The first line says it (a library error goes on with every path it tried).
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/\s*Tried:$/, '');
      throw new InvalidArgumentError(`warmupKernels: no arch was given and no CUDA device answered (${reason}); pass one, e.g. 'sm_90'`);
    }
  } else {
    const parsed = parseArch(arch);
    if (parsed.kind !== 'sm' || parsed.specific) {
      throw new InvalidArgumentError(`warmupKernels: arch must name a device as sm_XY (e.g. 'sm_90'), not ${JSON.stringify(arch)}`);
    }
    deviceArch = arch;
  }
  const { major, minor } = nvrtc.version();
  const supported = nvrtc.getSupportedArchs();
  // The arch the backend's own compiles resolve to on such a device (Program's default).
  const { arch: compileArch } = resolveArch({}, { supported, nvrtcMajor: major, deviceArch: () => deviceArch });
  return {
    deviceArch,
    compileArch,
    nvrtcVersion: `${major}.${minor}`,
    archSpecific: major >= 12,
    sharedMemoryPerBlockOptin: optin ?? archSharedMemoryOptin(deviceArch),
  };
}
