import { InvalidArgumentError } from '../errors.js';
import { HipDeviceAttribute } from './generated/device-attribute.js';
import { defaultWavefrontSize, parseGfxTarget } from './gfx-target.js';
import { HipError } from './hip-error.js';
import { HipResult } from './hip-result.js';
import {
  deviceGetArchName,
  deviceGetAttribute,
  deviceGetName,
  deviceGetPciBusId,
  deviceSynchronize,
  deviceTotalMem,
  getDevice,
  getDeviceCount,
  init,
  memGetInfo,
  setDevice,
} from './raw/device.js';

/** Everything {@link HipDevice} knows as plain data. */
export interface HipDeviceProperties {
  ordinal: number;
  name: string;
  pciBusId: string;
  /** Target ID, e.g. `gfx90a:sramecc+:xnack-`. */
  target: string;
  /** The processor alone, e.g. `gfx90a`. */
  processor: string;
  totalMemory: number;
  multiprocessorCount: number;
  warpSize: number;
  maxThreadsPerBlock: number;
  maxBlockDim: [number, number, number];
  maxGridDim: [number, number, number];
  sharedMemoryPerBlock: number;
  l2CacheSize: number;
  clockRateKHz: number;
  cooperativeLaunch: boolean;
  integrated: boolean;
}

let initialized = false;
/** The device this thread made current last (hipSetDevice is per thread; JS calls run on one). */
let currentOrdinal = -1;

/** What hipInit answers where no AMD GPU is usable: hipErrorNoDevice, or (ROCm 5.2) hipErrorInvalidDevice. */
const NO_DEVICE_AT_INIT: ReadonlySet<number> = new Set([HipResult.hipErrorNoDevice, HipResult.hipErrorInvalidDevice]);

/**
 * Initialises the HIP runtime once (hipInit). Where no AMD GPU is usable it
 * throws a HipError saying so, whichever of its two codes the runtime chose.
 */
export function initHip(): void {
  if (initialized) return;
  try {
    init(0);
  } catch (err) {
    if (err instanceof HipError && NO_DEVICE_AT_INIT.has(err.result)) {
      throw new HipError(err.result, 'hipInit', 'The HIP runtime finds no usable AMD GPU: none installed, no access to /dev/kfd, or all hidden by HIP_VISIBLE_DEVICES.');
    }
    throw err;
  }
  initialized = true;
}

/**
 * An AMD GPU seen through the HIP runtime. HIP has no contexts to manage:
 * work goes to the calling thread's current device, which {@link makeCurrent}
 * sets (and every safe-tier object does before it submits).
 */
export class HipDevice {
  static readonly #byOrdinal = new Map<number, HipDevice>();

  /** How many HIP devices are visible: 0 where the runtime loads but finds none. */
  static count(): number {
    try {
      initHip();
      return getDeviceCount();
    } catch (err) {
      if (err instanceof HipError && NO_DEVICE_AT_INIT.has(err.result)) return 0;
      throw err;
    }
  }

  /** The device with this ordinal (one object per ordinal). */
  static get(ordinal = 0): HipDevice {
    const cached = HipDevice.#byOrdinal.get(ordinal);
    if (cached) return cached;
    const count = HipDevice.count();
    if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= count) {
      throw new InvalidArgumentError(
        count === 0 ? 'No HIP device is available' : `HIP device ordinal ${ordinal} is out of range: ${count} device(s) visible`,
      );
    }
    const device = new HipDevice(ordinal);
    HipDevice.#byOrdinal.set(ordinal, device);
    return device;
  }

  /** The calling thread's current device. */
  static current(): HipDevice {
    initHip();
    return HipDevice.get(getDevice());
  }

  readonly #attributes = new Map<number, number>();
  #name: string | undefined;
  #target: string | undefined;

  private constructor(
    /** The ordinal (0-based, as HIP_VISIBLE_DEVICES renumbers them). */
    readonly ordinal: number,
  ) {}

  /** Makes this device current for the calling thread (skipped when it already is). */
  makeCurrent(): void {
    if (currentOrdinal === this.ordinal) return;
    setDevice(this.ordinal);
    currentOrdinal = this.ordinal;
  }

  /** One hipDeviceAttribute_t, read once and cached. */
  attribute(attribute: HipDeviceAttribute): number {
    let value = this.#attributes.get(attribute);
    if (value === undefined) {
      value = deviceGetAttribute(attribute, this.ordinal);
      this.#attributes.set(attribute, value);
    }
    return value;
  }

  get name(): string {
    return (this.#name ??= deviceGetName(this.ordinal));
  }

  get pciBusId(): string {
    return deviceGetPciBusId(this.ordinal);
  }

  /** The target ID hiprtc compiles for, e.g. `gfx90a:sramecc+:xnack-`. */
  get target(): string {
    return (this.#target ??= parseGfxTarget(deviceGetArchName(this.ordinal)).id);
  }

  /** The processor alone, e.g. `gfx90a`. */
  get processor(): string {
    return parseGfxTarget(this.target).processor;
  }

  get totalMemory(): number {
    return deviceTotalMem(this.ordinal);
  }

  get multiprocessorCount(): number {
    return this.attribute(HipDeviceAttribute.MultiprocessorCount);
  }

  /**
   * Threads per wavefront: 64 on CDNA/GCN, 32 on RDNA. Checked against the
   * compiler's default for the processor, which the kernels are built with.
   */
  get warpSize(): number {
    const reported = this.attribute(HipDeviceAttribute.WarpSize);
    const compiled = defaultWavefrontSize(this.processor);
    if (reported !== compiled) {
      throw new InvalidArgumentError(
        `${this.name} (${this.processor}) reports wavefronts of ${reported} threads, but its compiler default is ${compiled}; ` +
          'this library builds kernels for the default',
      );
    }
    return reported;
  }

  get maxThreadsPerBlock(): number {
    return this.attribute(HipDeviceAttribute.MaxThreadsPerBlock);
  }

  get maxBlockDim(): [number, number, number] {
    const a = HipDeviceAttribute;
    return [this.attribute(a.MaxBlockDimX), this.attribute(a.MaxBlockDimY), this.attribute(a.MaxBlockDimZ)];
  }

  get maxGridDim(): [number, number, number] {
    const a = HipDeviceAttribute;
    return [this.attribute(a.MaxGridDimX), this.attribute(a.MaxGridDimY), this.attribute(a.MaxGridDimZ)];
  }

  /** Shared (LDS) memory one block may use; HIP has no opt-in above it. */
  get sharedMemoryPerBlock(): number {
    return this.attribute(HipDeviceAttribute.MaxSharedMemoryPerBlock);
  }

  get l2CacheSize(): number {
    return this.attribute(HipDeviceAttribute.L2CacheSize);
  }

  get clockRateKHz(): number {
    return this.attribute(HipDeviceAttribute.ClockRate);
  }

  get cooperativeLaunch(): boolean {
    return this.attribute(HipDeviceAttribute.CooperativeLaunch) !== 0;
  }

  get integrated(): boolean {
    return this.attribute(HipDeviceAttribute.Integrated) !== 0;
  }

  /** Free and total memory of the device now. */
  memoryInfo(): { free: number; total: number } {
    this.makeCurrent();
    return memGetInfo();
  }

  /** Waits for all work queued on the device. */
  synchronize(): void {
    this.makeCurrent();
    deviceSynchronize();
  }

  describe(): HipDeviceProperties {
    return {
      ordinal: this.ordinal,
      name: this.name,
      pciBusId: this.pciBusId,
      target: this.target,
      processor: this.processor,
      totalMemory: this.totalMemory,
      multiprocessorCount: this.multiprocessorCount,
      warpSize: this.warpSize,
      maxThreadsPerBlock: this.maxThreadsPerBlock,
      maxBlockDim: this.maxBlockDim,
      maxGridDim: this.maxGridDim,
      sharedMemoryPerBlock: this.sharedMemoryPerBlock,
      l2CacheSize: this.l2CacheSize,
      clockRateKHz: this.clockRateKHz,
      cooperativeLaunch: this.cooperativeLaunch,
      integrated: this.integrated,
    };
  }
}
