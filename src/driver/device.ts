import { InvalidArgumentError } from '../errors.js';
import { Context } from './context.js';
import { CudaError } from './cuda-error.js';
import { DeviceAttribute } from './generated/device-attribute.js';
import { ctxGetCurrent, ctxGetDevice } from './raw/context.js';
import {
  deviceGet,
  deviceGetAttribute,
  deviceGetCount,
  deviceGetName,
  deviceGetPciBusId,
  deviceGetUuid,
  deviceTotalMem,
} from './raw/device.js';
import { init } from './raw/init.js';
import { deviceCanAccessPeer } from './raw/peer.js';
import { CudaResult } from './result-code.js';

/** A compute capability, e.g. `{ major: 9, minor: 0 }` for Hopper. */
export interface ComputeCapability {
  readonly major: number;
  readonly minor: number;
}

/** Everything {@link Device} knows as plain data (for `--json` output and logs). */
export interface DeviceProperties {
  ordinal: number;
  name: string;
  uuid: string;
  pciBusId: string;
  computeCapability: ComputeCapability;
  arch: string;
  totalMemory: number;
  multiprocessorCount: number;
  warpSize: number;
  maxThreadsPerBlock: number;
  maxThreadsPerMultiprocessor: number;
  maxBlockDim: [number, number, number];
  maxGridDim: [number, number, number];
  sharedMemoryPerBlock: number;
  sharedMemoryPerBlockOptin: number;
  sharedMemoryPerMultiprocessor: number;
  registersPerBlock: number;
  l2CacheSize: number;
  clockRateKHz: number;
  memoryClockRateKHz: number;
  memoryBusWidth: number;
  supportsTensorCores: boolean;
  supportsFp16: boolean;
  supportsBf16: boolean;
  cooperativeLaunch: boolean;
  clusterLaunch: boolean;
  memoryPools: boolean;
  integrated: boolean;
}

let initialized = false;

/**
 * Initialises the driver once per process (cuInit). Throws
 * LibraryNotFoundError when libcuda cannot be loaded and CudaError when the
 * driver refuses (CUDA_ERROR_NO_DEVICE where it sees no GPU).
 */
export function initDriver(): void {
  if (initialized) return;
  init(0);
  initialized = true;
}

declare module './context.js' {
  // A context's device is a Device (see ContextDevice).
  interface ContextDevice extends Device {}
}

/**
 * A CUDA device. Attributes are read from the driver once and cached; every
 * CUdevice_attribute is reachable through {@link Device.attribute}.
 */
export class Device {
  static readonly #byOrdinal = new Map<number, Device>();

  /**
   * How many CUDA devices the driver sees: 0 when the driver loads but finds
   * no GPU. Throws LibraryNotFoundError when there is no driver at all.
   */
  static count(): number {
    try {
      initDriver();
    } catch (err) {
      if (err instanceof CudaError && err.result === CudaResult.CUDA_ERROR_NO_DEVICE) return 0;
      throw err;
    }
    return deviceGetCount();
  }

  /** The device with this ordinal (one object per ordinal). */
  static get(ordinal = 0): Device {
    const cached = Device.#byOrdinal.get(ordinal);
    if (cached) return cached;
    const count = Device.count();
    if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= count) {
      throw new InvalidArgumentError(
        count === 0 ? 'No CUDA device is available' : `Device ordinal ${ordinal} is out of range: this machine has ${count} CUDA device${count === 1 ? '' : 's'}`,
      );
    }
    const device = new Device(ordinal, deviceGet(ordinal));
    Device.#byOrdinal.set(ordinal, device);
    return device;
  }

  /** The device of the calling thread's current context, else device 0. */
  static current(): Device {
    initDriver();
    if (ctxGetCurrent() === 0n) return Device.get(0);
    const handle = ctxGetDevice();
    for (let ordinal = 0, count = Device.count(); ordinal < count; ordinal++) {
      if (Device.get(ordinal).handle === handle) return Device.get(ordinal);
    }
    return Device.get(0);
  }

  readonly #attributes = new Map<number, number>();
  #name: string | undefined;
  #uuid: string | undefined;
  #pciBusId: string | undefined;
  #totalMemory: number | undefined;

  private constructor(
    /** The device's ordinal (0-based, as CUDA_VISIBLE_DEVICES renumbers them). */
    readonly ordinal: number,
    /** The driver's CUdevice for this ordinal. */
    readonly handle: number,
  ) {}

  /** One CUdevice_attribute, read once and cached. */
  attribute(attribute: DeviceAttribute): number {
    let value = this.#attributes.get(attribute);
    if (value === undefined) {
      value = deviceGetAttribute(attribute, this.handle);
      this.#attributes.set(attribute, value);
    }
    return value;
  }

  /** The product name, e.g. "NVIDIA H100 80GB HBM3". */
  get name(): string {
    return (this.#name ??= deviceGetName(this.handle));
  }

  /** The UUID as nvidia-smi prints it: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". */
  get uuid(): string {
    return (this.#uuid ??= formatUuid(deviceGetUuid(this.handle)));
  }

  /** The PCI address, e.g. "0000:18:00.0". */
  get pciBusId(): string {
    return (this.#pciBusId ??= deviceGetPciBusId(this.handle));
  }

  /** Device memory in bytes. */
  get totalMemory(): number {
    return (this.#totalMemory ??= deviceTotalMem(this.handle));
  }

  get computeCapability(): ComputeCapability {
    return {
      major: this.attribute(DeviceAttribute.COMPUTE_CAPABILITY_MAJOR),
      minor: this.attribute(DeviceAttribute.COMPUTE_CAPABILITY_MINOR),
    };
  }

  /** The GPU architecture as compilers name it, e.g. "sm_90". */
  get arch(): string {
    const { major, minor } = this.computeCapability;
    return `sm_${major}${minor}`;
  }

  get multiprocessorCount(): number {
    return this.attribute(DeviceAttribute.MULTIPROCESSOR_COUNT);
  }

  get warpSize(): number {
    return this.attribute(DeviceAttribute.WARP_SIZE);
  }

  get maxThreadsPerBlock(): number {
    return this.attribute(DeviceAttribute.MAX_THREADS_PER_BLOCK);
  }

  get maxThreadsPerMultiprocessor(): number {
    return this.attribute(DeviceAttribute.MAX_THREADS_PER_MULTIPROCESSOR);
  }

  get maxBlockDim(): [number, number, number] {
    return [
      this.attribute(DeviceAttribute.MAX_BLOCK_DIM_X),
      this.attribute(DeviceAttribute.MAX_BLOCK_DIM_Y),
      this.attribute(DeviceAttribute.MAX_BLOCK_DIM_Z),
    ];
  }

  get maxGridDim(): [number, number, number] {
    return [
      this.attribute(DeviceAttribute.MAX_GRID_DIM_X),
      this.attribute(DeviceAttribute.MAX_GRID_DIM_Y),
      this.attribute(DeviceAttribute.MAX_GRID_DIM_Z),
    ];
  }

  /** Shared memory a block gets without opting in (48 KB on current GPUs). */
  get sharedMemoryPerBlock(): number {
    return this.attribute(DeviceAttribute.MAX_SHARED_MEMORY_PER_BLOCK);
  }

  /** Shared memory a block may use after `kernel.setMaxDynamicSharedMemory()` (227 KB on H100). */
  get sharedMemoryPerBlockOptin(): number {
    return this.attribute(DeviceAttribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  }

  get sharedMemoryPerMultiprocessor(): number {
    return this.attribute(DeviceAttribute.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  }

  /** 32-bit registers available to one block. */
  get registersPerBlock(): number {
    return this.attribute(DeviceAttribute.MAX_REGISTERS_PER_BLOCK);
  }

  /** L2 cache size in bytes. */
  get l2CacheSize(): number {
    return this.attribute(DeviceAttribute.L2_CACHE_SIZE);
  }

  get clockRateKHz(): number {
    return this.attribute(DeviceAttribute.CLOCK_RATE);
  }

  get memoryClockRateKHz(): number {
    return this.attribute(DeviceAttribute.MEMORY_CLOCK_RATE);
  }

  /** Global memory bus width in bits. */
  get memoryBusWidth(): number {
    return this.attribute(DeviceAttribute.GLOBAL_MEMORY_BUS_WIDTH);
  }

  /** Tensor cores (mma) exist from compute capability 7.0 (Volta). */
  get supportsTensorCores(): boolean {
    return this.computeCapability.major >= 7;
  }

  /** Native half-precision arithmetic exists from compute capability 5.3. */
  get supportsFp16(): boolean {
    const { major, minor } = this.computeCapability;
    return major > 5 || (major === 5 && minor >= 3);
  }

  /** Native bfloat16 arithmetic exists from compute capability 8.0 (Ampere). */
  get supportsBf16(): boolean {
    return this.computeCapability.major >= 8;
  }

  /** Whether cuLaunchCooperativeKernel (grid-wide synchronisation) is supported. */
  get cooperativeLaunch(): boolean {
    return this.attribute(DeviceAttribute.COOPERATIVE_LAUNCH) !== 0;
  }

  /** Whether thread block clusters can be launched (Hopper and later). */
  get clusterLaunch(): boolean {
    return this.attribute(DeviceAttribute.CLUSTER_LAUNCH) !== 0;
  }

  /** Whether stream-ordered allocation (cuMemAllocAsync) is supported. */
  get memoryPools(): boolean {
    return this.attribute(DeviceAttribute.MEMORY_POOLS_SUPPORTED) !== 0;
  }

  /** Whether the GPU shares memory with the host (Jetson, Grace-coupled parts). */
  get integrated(): boolean {
    return this.attribute(DeviceAttribute.INTEGRATED) !== 0;
  }

  /** Retains the device's primary context; `dispose()` the result to release it. */
  primaryContext(): Context {
    return Context.retainPrimary(this);
  }

  /** Whether this device can map memory of `other` (peer access); false for the device itself. */
  canAccessPeer(other: Device): boolean {
    if (other === this) return false;
    return deviceCanAccessPeer(this.handle, other.handle);
  }

  /** The properties above as one plain object. */
  describe(): DeviceProperties {
    return {
      ordinal: this.ordinal,
      name: this.name,
      uuid: this.uuid,
      pciBusId: this.pciBusId,
      computeCapability: this.computeCapability,
      arch: this.arch,
      totalMemory: this.totalMemory,
      multiprocessorCount: this.multiprocessorCount,
      warpSize: this.warpSize,
      maxThreadsPerBlock: this.maxThreadsPerBlock,
      maxThreadsPerMultiprocessor: this.maxThreadsPerMultiprocessor,
      maxBlockDim: this.maxBlockDim,
      maxGridDim: this.maxGridDim,
      sharedMemoryPerBlock: this.sharedMemoryPerBlock,
      sharedMemoryPerBlockOptin: this.sharedMemoryPerBlockOptin,
      sharedMemoryPerMultiprocessor: this.sharedMemoryPerMultiprocessor,
      registersPerBlock: this.registersPerBlock,
      l2CacheSize: this.l2CacheSize,
      clockRateKHz: this.clockRateKHz,
      memoryClockRateKHz: this.memoryClockRateKHz,
      memoryBusWidth: this.memoryBusWidth,
      supportsTensorCores: this.supportsTensorCores,
      supportsFp16: this.supportsFp16,
      supportsBf16: this.supportsBf16,
      cooperativeLaunch: this.cooperativeLaunch,
      clusterLaunch: this.clusterLaunch,
      memoryPools: this.memoryPools,
      integrated: this.integrated,
    };
  }
}

/** Formats 16 UUID bytes as nvidia-smi does. */
export function formatUuid(bytes: Uint8Array): string {
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
