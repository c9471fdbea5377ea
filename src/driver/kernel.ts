import { DisposedError, InvalidArgumentError } from '../errors.js';
import { BoundArgs } from '../ffi/bound-args.js';
import { ArgPack, isArgType, slotSize, type ArgType, type DevicePointerLike, type KernelArg } from '../ffi/kernel-args.js';
import type { Context } from './context.js';
import type { ContextCore } from './context-core.js';
import type { Device } from './device.js';
import { FunctionAttribute, LaunchAttributeId } from './generated/enums.js';
import { resolveClusterDims, resolveLaunchDims, type DeviceLaunchLimits, type Dim3, type KernelLaunchLimits } from './launch-config.js';
import { funcGetAttribute, funcGetParams, funcSetAttribute, type ParamInfo } from './raw/function.js';
import type { CUfunction, CUstream } from './raw/handles.js';
import { launchCooperativeKernel, launchKernel, launchKernelEx, type LaunchAttribute, type LaunchConfig } from './raw/launch.js';
import {
  occupancyAvailableDynamicSMemPerBlock,
  occupancyMaxActiveBlocksPerMultiprocessor,
  occupancyMaxPotentialBlockSize,
} from './raw/occupancy.js';
import type { Stream } from './stream.js';

/** A kernel's compiled properties (CU_FUNC_ATTRIBUTE_*). */
export interface KernelAttributes {
  readonly maxThreadsPerBlock: number;
  readonly numRegisters: number;
  /** Static `__shared__` bytes. */
  readonly sharedSizeBytes: number;
  /** Local (spill / stack) bytes per thread. */
  readonly localSizeBytes: number;
  readonly constSizeBytes: number;
  /** The PTX virtual architecture the kernel was compiled from, as major*10+minor (e.g. 80). */
  readonly ptxVersion: number;
  /** SASS architecture it runs as, e.g. 90 for sm_90. */
  readonly binaryVersion: number;
  /** Dynamic shared memory allowed per block now (raise with setMaxDynamicSharedMemory). */
  readonly maxDynamicSharedSizeBytes: number;
}

/** How to launch: shape, dynamic shared memory, stream, launch kind. */
export interface LaunchOptions {
  /** Blocks per grid: `n` or `[x, y?, z?]`. */
  grid: Dim3;
  /** Threads per block: `n` or `[x, y?, z?]`. */
  block: Dim3;
  /** Dynamic shared memory per block in bytes (default 0). Above 48 KB needs setMaxDynamicSharedMemory. */
  sharedMemBytes?: number;
  /** The stream to queue on (default: the legacy default stream). */
  stream?: Stream;
  /** Launch cooperatively, so the grid may synchronise as a whole (cuLaunchCooperativeKernel). */
  cooperative?: boolean;
  /** Thread-block cluster shape (sm_90+), through cuLaunchKernelEx. */
  clusterDim?: Dim3;
}

/**
 * A value for a slot of a declared signature: numbers for numeric slots, a bigint or DeviceBuffer
 * for `ptr`, a CUtensorMap's 128 bytes for `tensorMap`.
 */
export type BoundValue = number | bigint | DevicePointerLike | Uint8Array;

/** A launcher for a declared signature, from {@link Kernel.bind}. */
export type BoundKernel = (config: LaunchOptions, ...values: BoundValue[]) => void;

/** Occupancy calculations for one kernel. */
export interface KernelOccupancy {
  /** Blocks of `blockSize` threads that fit on one SM at once. */
  maxActiveBlocksPerMultiprocessor(blockSize: number, dynamicSmemBytes?: number): number;
  /** The block size with the best occupancy, and the smallest grid that fills the device with it. */
  maxPotentialBlockSize(dynamicSmemBytes?: number, blockSizeLimit?: number): { minGridSize: number; blockSize: number };
  /** Dynamic shared memory each block can still get with `numBlocks` blocks of `blockSize` per SM. */
  availableDynamicSharedMemory(numBlocks: number, blockSize: number): number;
}

const dims = new Uint32Array(6); // grid xyz, block xyz, as resolveLaunchDims writes them
const clusterDims = new Uint32Array(3);
/** Where a kernel's checked shape keeps its dynamic shared memory, and its cluster xyz. */
const SHARED = 6;
const CLUSTER = 7;

/** Whether `dim` has the three extents at `at` of a checked shape, read as resolveLaunchDims reads it. */
function isShape(dim: Dim3, shape: Float64Array, at: number): boolean {
  if (typeof dim === 'number') return dim === shape[at] && shape[at + 1] === 1 && shape[at + 2] === 1;
  return Array.isArray(dim) && dim.length <= 3 && dim[0] === shape[at] && (dim[1] ?? 1) === shape[at + 1] && (dim[2] ?? 1) === shape[at + 2];
}

/** A kept cuLaunchKernelEx configuration: its stream is set per launch. */
interface ExConfig extends LaunchConfig {
  stream: CUstream;
  readonly cooperative: boolean;
}

/**
 * The module a kernel lives in, as far as this file uses it. module.ts, which
 * creates kernels and so imports this file, merges its Module class into this
 * interface (declaration merging): `kernel.module` is a full Module without an
 * import cycle between the two files.
 */
export interface KernelModule {
  readonly context: Context;
  readonly disposed: boolean;
  /** @internal */
  readonly core: ContextCore;
}

/**
 * A kernel of a loaded module. Launches are validated before the driver sees
 * them (shape, shared memory, and argument count and sizes where the driver
 * reports the kernel's parameters) and pack their arguments into memory the
 * kernel reuses, so a launch allocates nothing beyond its arguments.
 */
export class Kernel {
  readonly #handle: CUfunction;
  #attributes: KernelAttributes | undefined;
  #limits: KernelLaunchLimits | undefined;
  #deviceLimits: DeviceLaunchLimits | undefined;
  #params: readonly ParamInfo[] | undefined | null = null; // null: not asked yet
  #paramSizes: readonly number[] | undefined;
  #pack: ArgPack | undefined;
  /**
   * The launch shape checked last: grid xyz, block xyz, its dynamic shared memory, then the
   * cluster xyz checked with it. A launch repeating it skips the checks; its shared memory (its
   * cluster) is NaN, equal to no value, until the check passes and after the kernel's limits (the
   * grid) change.
   */
  readonly #shape = new Float64Array(10).fill(NaN);
  /** The cuLaunchKernelEx configuration of the checked shape and cluster, once a launch asked for it. */
  #exConfig: ExConfig | undefined;
  /** Whether the shape checked last is 1-D (grid and block y = z = 1): a launch of number extents compares two. */
  #flat = false;

  /** Occupancy calculations for this kernel. */
  readonly occupancy: KernelOccupancy;

  /** @internal Use `module.getFunction(name)`. */
  constructor(
    /** The module the kernel lives in (kept alive by the kernel). */
    readonly module: KernelModule,
    handle: CUfunction,
    /** The name it was looked up by. */
    readonly name: string,
  ) {
    this.#handle = handle;
    this.occupancy = {
      maxActiveBlocksPerMultiprocessor: (blockSize, dynamicSmemBytes = 0) => {
        this.#checkOccupancyInput(blockSize, dynamicSmemBytes);
        return occupancyMaxActiveBlocksPerMultiprocessor(this.#enter(), blockSize, dynamicSmemBytes);
      },
      maxPotentialBlockSize: (dynamicSmemBytes = 0, blockSizeLimit = 0) => {
        this.#checkOccupancyInput(blockSizeLimit === 0 ? 1 : blockSizeLimit, dynamicSmemBytes);
        return occupancyMaxPotentialBlockSize(this.#enter(), dynamicSmemBytes, blockSizeLimit);
      },
      availableDynamicSharedMemory: (numBlocks, blockSize) => {
        this.#checkOccupancyInput(blockSize, 0);
        if (!Number.isInteger(numBlocks) || numBlocks < 1) {
          throw new InvalidArgumentError(`${this.name}: numBlocks ${numBlocks} is not a positive integer`);
        }
        return occupancyAvailableDynamicSMemPerBlock(this.#enter(), numBlocks, blockSize);
      },
    };
  }

  /** The CUfunction handle (raw tier). */
  get handle(): CUfunction {
    if (this.module.disposed) throw this.#disposedError();
    return this.#handle;
  }

  /** The kernel's compiled properties (read once; the dynamic shared memory limit follows setMaxDynamicSharedMemory). */
  get attributes(): KernelAttributes {
    if (!this.#attributes) {
      const fn = this.#enter();
      const read = (attribute: FunctionAttribute) => funcGetAttribute(fn, attribute);
      this.#attributes = {
        maxThreadsPerBlock: read(FunctionAttribute.MAX_THREADS_PER_BLOCK),
        numRegisters: read(FunctionAttribute.NUM_REGS),
        sharedSizeBytes: read(FunctionAttribute.SHARED_SIZE_BYTES),
        localSizeBytes: read(FunctionAttribute.LOCAL_SIZE_BYTES),
        constSizeBytes: read(FunctionAttribute.CONST_SIZE_BYTES),
        ptxVersion: read(FunctionAttribute.PTX_VERSION),
        binaryVersion: read(FunctionAttribute.BINARY_VERSION),
        maxDynamicSharedSizeBytes: read(FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES),
      };
    }
    return this.#attributes;
  }

  /**
   * The kernel's parameters (offset and size of each) as the driver reports
   * them (CUDA 12.4+); undefined where it cannot, and then argument counts and
   * sizes are not checked before launch.
   */
  get params(): readonly ParamInfo[] | undefined {
    this.#loadParams();
    return this.#params ?? undefined;
  }

  /**
   * Allows `bytes` of dynamic shared memory per block, which launches above
   * 48 KB need (up to the device's opt-in limit minus the kernel's static
   * shared memory).
   */
  setMaxDynamicSharedMemory(bytes: number): void {
    const attributes = this.attributes;
    const ceiling = this.#device().sharedMemoryPerBlockOptin - attributes.sharedSizeBytes;
    if (!Number.isInteger(bytes) || bytes < 0 || bytes > ceiling) {
      throw new InvalidArgumentError(
        `${this.name}: setMaxDynamicSharedMemory(${bytes}) must be an integer from 0 to ${ceiling} ` +
          `(the device's ${this.#device().sharedMemoryPerBlockOptin}-byte opt-in limit minus ${attributes.sharedSizeBytes} static bytes)`,
      );
    }
    funcSetAttribute(this.#enter(), FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
    this.#attributes = { ...attributes, maxDynamicSharedSizeBytes: bytes };
    this.#limits = undefined;
    this.#shape[SHARED] = NaN;
  }

  /**
   * Queues the kernel. Arguments are typed (i32(), f32(), ptr()..., or a
   * DeviceBuffer); bad shapes, shared memory or arguments throw
   * InvalidArgumentError before the driver is called.
   */
  launch(config: LaunchOptions, args: readonly KernelArg[]): void {
    const fn = this.#prepare(config);
    this.#loadParams();
    const params = this.#argPack().pack(args, this.#paramSizes, this.name);
    this.#submit(fn, config, params);
  }

  /**
   * A launcher for a declared signature: it takes bare values, checked
   * against the declared slot types (a number in a `ptr` slot throws), which
   * is the fastest way to launch the same kernel many times.
   *
   * @example
   * const add = kernel.bind(['ptr', 'ptr', 'ptr', 'u32']);
   * add({ grid, block }, a, b, c, n);
   */
  bind(signature: readonly ArgType[]): BoundKernel {
    const slots = [...signature];
    slots.forEach((type, i) => {
      if (!isArgType(type)) {
        throw new InvalidArgumentError(`${this.name}.bind: slot ${i} has unknown type ${String(type)}; use i32 u32 i64 u64 f32 f64 ptr tensorMap`);
      }
    });
    const params = this.params;
    if (params !== undefined) {
      if (params.length !== slots.length) {
        throw new InvalidArgumentError(`${this.name} takes ${params.length} arguments, the signature declares ${slots.length}`);
      }
      slots.forEach((type, i) => {
        if (slotSize(type) !== params[i]!.size) {
          throw new InvalidArgumentError(
            `${this.name}.bind: slot ${i} is ${type} (${slotSize(type)} bytes) but the kernel's parameter ${i} is ${params[i]!.size} bytes`,
          );
        }
      });
    }
    const args = new BoundArgs(slots);
    return (config, ...values) => {
      const fn = this.#prepare(config);
      this.#submit(fn, config, args.write(values, this.name));
    };
  }

  /**
   * Makes the context current and checks the launch shape, unless it repeats the shape checked
   * last; leaves it in #shape and returns the function handle. Runs on every launch: it makes as
   * few calls as it can, which cost more than their bodies before V8 optimises them.
   */
  #prepare(config: LaunchOptions): CUfunction {
    const module = this.module;
    if (module.disposed) throw this.#disposedError();
    module.core.enter();
    const { grid, block } = config;
    const shared = config.sharedMemBytes ?? 0;
    const shape = this.#shape;
    const checked =
      typeof grid === 'number' && typeof block === 'number'
        ? this.#flat && grid === shape[0] && block === shape[3]
        : isShape(grid, shape, 0) && isShape(block, shape, 3);
    if (!checked || shared !== shape[SHARED]) {
      shape[SHARED] = NaN; // not a checked shape until the checks below pass
      shape[CLUSTER] = NaN; // a cluster is checked against the grid
      this.#limits ??= this.#launchLimits();
      resolveLaunchDims(grid, block, shared, this.#device(), this.#limits, dims);
      shape.set(dims);
      shape[SHARED] = shared;
      this.#flat = dims[1] === 1 && dims[2] === 1 && dims[4] === 1 && dims[5] === 1;
    }
    return this.#handle;
  }

  #loadParams(): void {
    if (this.#params !== null) return;
    try {
      this.#params = funcGetParams(this.#enter());
    } catch {
      // Parameter information only feeds validation: without it launches go unchecked, not refused.
      this.#params = undefined;
    }
    this.#paramSizes = this.#params?.map((p) => p.size);
  }

  /** Queues the launch #prepare checked. */
  #submit(fn: CUfunction, config: LaunchOptions, params: bigint): void {
    const { stream } = config;
    let handle: CUstream = 0n;
    if (stream !== undefined) {
      if (stream.core !== this.module.core) {
        throw new InvalidArgumentError(`${this.name}: the stream belongs to another context than the kernel's module`);
      }
      handle = stream.handle;
    }
    const shape = this.#shape;
    const shared = shape[SHARED]!;
    if (config.clusterDim !== undefined) {
      launchKernelEx(this.#clusterConfig(config.clusterDim, !!config.cooperative, handle), fn, params);
    } else if (config.cooperative) {
      launchCooperativeKernel(fn, shape[0]!, shape[1]!, shape[2]!, shape[3]!, shape[4]!, shape[5]!, shared, handle, params);
    } else {
      launchKernel(fn, shape[0]!, shape[1]!, shape[2]!, shape[3]!, shape[4]!, shape[5]!, shared, handle, params);
    }
  }

  /**
   * The cuLaunchKernelEx configuration of the checked shape with `cluster` (checked against its
   * grid unless it repeats the cluster checked last) on `stream`: kept while the shape, cluster
   * and launch kind repeat, so a launch builds no attribute list. A new shape has cleared the
   * cluster checked last, and so drops the kept configuration.
   */
  #clusterConfig(cluster: Dim3, cooperative: boolean, stream: CUstream): LaunchConfig {
    const shape = this.#shape;
    let config = this.#exConfig;
    if (config === undefined || !isShape(cluster, shape, CLUSTER) || config.cooperative !== cooperative) {
      shape[CLUSTER] = NaN;
      resolveClusterDims(cluster, shape, this.name, clusterDims, 0);
      shape.set(clusterDims, CLUSTER);
      const attributes: LaunchAttribute[] = [
        { id: LaunchAttributeId.CLUSTER_DIMENSION, value: [clusterDims[0]!, clusterDims[1]!, clusterDims[2]!] },
      ];
      if (cooperative) attributes.push({ id: LaunchAttributeId.COOPERATIVE, value: 1 });
      config = {
        grid: [shape[0]!, shape[1]!, shape[2]!],
        block: [shape[3]!, shape[4]!, shape[5]!],
        sharedMemBytes: shape[SHARED]!,
        stream,
        attributes,
        cooperative,
      };
      this.#exConfig = config;
    }
    config.stream = stream;
    return config;
  }

  #argPack(): ArgPack {
    return (this.#pack ??= new ArgPack(Math.max(this.#params?.length ?? 64, 1)));
  }

  #launchLimits(): KernelLaunchLimits {
    const { maxThreadsPerBlock, sharedSizeBytes, maxDynamicSharedSizeBytes } = this.attributes;
    return { name: this.name, maxThreadsPerBlock, sharedSizeBytes, maxDynamicSharedSizeBytes };
  }

  #device(): DeviceLaunchLimits {
    if (!this.#deviceLimits) {
      const device: Device = this.module.context.device;
      this.#deviceLimits = {
        maxBlockDim: device.maxBlockDim,
        maxGridDim: device.maxGridDim,
        maxThreadsPerBlock: device.maxThreadsPerBlock,
        sharedMemoryPerBlockOptin: device.sharedMemoryPerBlockOptin,
      };
    }
    return this.#deviceLimits;
  }

  #checkOccupancyInput(blockSize: number, dynamicSmemBytes: number): void {
    if (!Number.isInteger(blockSize) || blockSize < 1 || blockSize > this.#device().maxThreadsPerBlock) {
      throw new InvalidArgumentError(
        `${this.name}: block size ${blockSize} is not an integer from 1 to ${this.#device().maxThreadsPerBlock}`,
      );
    }
    if (!Number.isInteger(dynamicSmemBytes) || dynamicSmemBytes < 0) {
      throw new InvalidArgumentError(`${this.name}: dynamic shared memory ${dynamicSmemBytes} is not a non-negative integer`);
    }
  }

  #enter(): CUfunction {
    if (this.module.disposed) throw this.#disposedError();
    this.module.core.enter();
    return this.#handle;
  }

  #disposedError(): DisposedError {
    return new DisposedError(`The module of kernel ${this.name}`);
  }
}
