import { resolveLaunchDims, type DeviceLaunchLimits, type Dim3, type KernelLaunchLimits } from '../driver/launch-config.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import { BoundArgs } from '../ffi/bound-args.js';
import { ArgPack, isScalarType, type ArgType, type DevicePointerLike, type KernelArg, type ScalarType } from '../ffi/kernel-args.js';
import type { HipDevice } from './device.js';
import { HipFunctionAttribute } from './generated/enums.js';
import type { HipFunctionHandle } from './raw/handles.js';
import {
  funcGetAttribute,
  moduleLaunchKernel,
  occupancyMaxActiveBlocksPerMultiprocessor,
  occupancyMaxPotentialBlockSize,
} from './raw/module.js';
import type { HipStream } from './stream.js';

/** How to launch a {@link HipKernel}. */
export interface HipLaunchOptions {
  grid: Dim3;
  block: Dim3;
  /** Dynamic shared (LDS) memory per block in bytes; default 0. */
  sharedMemBytes?: number;
  /** The stream; default the null stream of the module's device. */
  stream?: HipStream;
}

/** A value for a slot of a declared signature: numbers, or a bigint / buffer for `ptr`. */
export type HipBoundValue = number | bigint | DevicePointerLike;

/** A launcher for a declared signature, from {@link HipKernel.bind}. */
export type HipBoundKernel = (config: HipLaunchOptions, ...values: HipBoundValue[]) => void;

/** A kernel's compiled properties (HIP_FUNC_ATTRIBUTE_*). */
export interface HipKernelAttributes {
  readonly maxThreadsPerBlock: number;
  readonly numRegisters: number;
  readonly sharedSizeBytes: number;
  readonly localSizeBytes: number;
}

const dims = new Uint32Array(6);

/**
 * The module a kernel lives in, as far as this file uses it. module.ts, which
 * creates kernels and so imports this file, merges its HipModule class into this
 * interface (declaration merging): `kernel.module` is a full HipModule without an
 * import cycle between the two files.
 */
export interface HipKernelModule {
  readonly device: HipDevice;
  readonly disposed: boolean;
}

/**
 * A kernel of a loaded {@link HipModule}: launches are checked against the
 * device's and the kernel's limits before HIP sees them, and arguments are
 * packed into memory the kernel reuses (the same ArgPack as CUDA's).
 */
export class HipKernel {
  readonly #handle: HipFunctionHandle;
  readonly #pack = new ArgPack(64);
  #attributes: HipKernelAttributes | undefined;
  #deviceLimits: DeviceLaunchLimits | undefined;

  /** @internal Use `module.getFunction(name)`. */
  constructor(
    readonly module: HipKernelModule,
    handle: HipFunctionHandle,
    readonly name: string,
  ) {
    this.#handle = handle;
  }

  get handle(): HipFunctionHandle {
    if (this.module.disposed) throw new DisposedError(`The module of kernel ${this.name}`);
    return this.#handle;
  }

  get attributes(): HipKernelAttributes {
    if (!this.#attributes) {
      const fn = this.#enter();
      const read = (attribute: HipFunctionAttribute) => funcGetAttribute(fn, attribute);
      this.#attributes = {
        maxThreadsPerBlock: read(HipFunctionAttribute.MaxThreadsPerBlock),
        numRegisters: read(HipFunctionAttribute.NumRegs),
        sharedSizeBytes: read(HipFunctionAttribute.SharedSizeBytes),
        localSizeBytes: read(HipFunctionAttribute.LocalSizeBytes),
      };
    }
    return this.#attributes;
  }

  /** The block size with the best occupancy (at most `blockSizeLimit`, 0 = none) and the grid that fills the device. */
  maxPotentialBlockSize(dynamicSmemBytes = 0, blockSizeLimit = 0): { minGridSize: number; blockSize: number } {
    return occupancyMaxPotentialBlockSize(this.#enter(), dynamicSmemBytes, blockSizeLimit);
  }

  /** Blocks of `blockSize` threads resident on one compute unit at once. */
  maxActiveBlocksPerMultiprocessor(blockSize: number, dynamicSmemBytes = 0): number {
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new InvalidArgumentError(`${this.name}: block size ${blockSize} is not a positive integer`);
    return occupancyMaxActiveBlocksPerMultiprocessor(this.#enter(), blockSize, dynamicSmemBytes);
  }

  /** Queues the kernel with typed arguments (i32(), f32(), ptr(), a buffer...). */
  launch(config: HipLaunchOptions, args: readonly KernelArg[]): void {
    const fn = this.#prepare(config);
    this.#submit(fn, config, this.#pack.pack(args, undefined, this.name));
  }

  /** A launcher taking bare values checked against `signature` (the fast path for repeated launches). */
  bind(signature: readonly ArgType[]): HipBoundKernel {
    const slots: ScalarType[] = [];
    signature.forEach((type, i) => {
      // HIP has no tensor maps: a `tensorMap` slot is refused with the unknown types.
      if (!isScalarType(type)) throw new InvalidArgumentError(`${this.name}.bind: slot ${i} has type ${String(type)}; HIP kernels take i32 u32 i64 u64 f32 f64 ptr`);
      slots.push(type);
    });
    const args = new BoundArgs(slots);
    return (config, ...values) => {
      const fn = this.#prepare(config);
      this.#submit(fn, config, args.write(values, this.name));
    };
  }

  #prepare(config: HipLaunchOptions): HipFunctionHandle {
    const fn = this.#enter();
    const { maxThreadsPerBlock, sharedSizeBytes } = this.attributes;
    const device = this.#device();
    const limits: KernelLaunchLimits = {
      name: this.name,
      maxThreadsPerBlock,
      sharedSizeBytes,
      maxDynamicSharedSizeBytes: device.sharedMemoryPerBlockOptin - sharedSizeBytes,
    };
    resolveLaunchDims(config.grid, config.block, config.sharedMemBytes ?? 0, device, limits, dims);
    return fn;
  }

  #submit(fn: HipFunctionHandle, config: HipLaunchOptions, params: bigint): void {
    let stream = 0n;
    if (config.stream !== undefined) {
      if (config.stream.device !== this.module.device) {
        throw new InvalidArgumentError(`${this.name}: the stream is on another device than the kernel's module`);
      }
      stream = config.stream.handle;
    }
    moduleLaunchKernel(fn, dims[0]!, dims[1]!, dims[2]!, dims[3]!, dims[4]!, dims[5]!, config.sharedMemBytes ?? 0, stream, params);
  }

  #device(): DeviceLaunchLimits {
    if (!this.#deviceLimits) {
      const device = this.module.device;
      this.#deviceLimits = {
        maxBlockDim: device.maxBlockDim,
        maxGridDim: device.maxGridDim,
        maxThreadsPerBlock: device.maxThreadsPerBlock,
        // HIP has no opt-in: the per-block limit is the whole story.
        sharedMemoryPerBlockOptin: device.sharedMemoryPerBlock,
      };
    }
    return this.#deviceLimits;
  }

  #enter(): HipFunctionHandle {
    if (this.module.disposed) throw new DisposedError(`The module of kernel ${this.name}`);
    this.module.device.makeCurrent();
    return this.#handle;
  }
}
