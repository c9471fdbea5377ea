import { InvalidArgumentError } from '../errors.js';

/** A grid or block shape: `n` for `[n, 1, 1]`, or up to three extents. */
export type Dim3 = number | readonly [number, number?, number?];

/** The device limits a launch is checked against. */
export interface DeviceLaunchLimits {
  readonly maxBlockDim: readonly [number, number, number];
  readonly maxGridDim: readonly [number, number, number];
  readonly maxThreadsPerBlock: number;
  /** Shared memory one block may use at most, after opting in. */
  readonly sharedMemoryPerBlockOptin: number;
}

/** The kernel limits a launch is checked against (CU_FUNC_ATTRIBUTE_*). */
export interface KernelLaunchLimits {
  readonly name: string;
  /** Threads per block the compiled kernel allows (registers and launch bounds lower it). */
  readonly maxThreadsPerBlock: number;
  /** Static `__shared__` bytes. */
  readonly sharedSizeBytes: number;
  /** Dynamic shared memory currently allowed (48 KB minus static unless raised). */
  readonly maxDynamicSharedSizeBytes: number;
}

const AXES = ['x', 'y', 'z'] as const;

/**
 * Checks a launch's shape and dynamic shared memory against the device's and
 * the kernel's limits, and writes the grid then block extents into `out`
 * (six entries), so the driver is only called with a launch it can accept.
 * Throws InvalidArgumentError naming the limit and, where there is one, the fix.
 */
export function resolveLaunchDims(
  grid: Dim3,
  block: Dim3,
  sharedMemBytes: number,
  device: DeviceLaunchLimits,
  kernel: KernelLaunchLimits,
  out: Uint32Array,
): void {
  readDim(grid, 'grid', device.maxGridDim, kernel.name, out, 0);
  readDim(block, 'block', device.maxBlockDim, kernel.name, out, 3);
  const threads = out[3]! * out[4]! * out[5]!;
  if (threads > device.maxThreadsPerBlock) {
    throw new InvalidArgumentError(
      `${kernel.name}: a block of ${threads} threads exceeds the device's ${device.maxThreadsPerBlock} threads per block`,
    );
  }
  if (threads > kernel.maxThreadsPerBlock) {
    throw new InvalidArgumentError(
      `${kernel.name}: a block of ${threads} threads exceeds the kernel's limit of ${kernel.maxThreadsPerBlock} ` +
        '(set by its register use or __launch_bounds__)',
    );
  }
  if (!Number.isInteger(sharedMemBytes) || sharedMemBytes < 0) {
    throw new InvalidArgumentError(`${kernel.name}: sharedMemBytes ${sharedMemBytes} is not a non-negative integer`);
  }
  if (sharedMemBytes > kernel.maxDynamicSharedSizeBytes) {
    const ceiling = device.sharedMemoryPerBlockOptin - kernel.sharedSizeBytes;
    throw new InvalidArgumentError(
      sharedMemBytes <= ceiling
        ? `${kernel.name}: ${sharedMemBytes} bytes of dynamic shared memory exceed the kernel's current limit of ` +
            `${kernel.maxDynamicSharedSizeBytes}; call kernel.setMaxDynamicSharedMemory(${sharedMemBytes}) first`
        : `${kernel.name}: ${sharedMemBytes} bytes of dynamic shared memory exceed what the device allows a block ` +
            `(${device.sharedMemoryPerBlockOptin} bytes opt-in, ${kernel.sharedSizeBytes} of them static, so at most ${ceiling})`,
    );
  }
}

/**
 * Checks a thread-block cluster shape (Hopper and later): each extent must
 * divide the grid's. Writes the three extents into `out` at `at`.
 */
export function resolveClusterDims(cluster: Dim3, gridDims: ArrayLike<number>, kernelName: string, out: Uint32Array, at: number): void {
  readDim(cluster, 'clusterDim', [Infinity, Infinity, Infinity], kernelName, out, at);
  for (let axis = 0; axis < 3; axis++) {
    if (gridDims[axis]! % out[at + axis]! !== 0) {
      throw new InvalidArgumentError(
        `${kernelName}: clusterDim.${AXES[axis]} = ${out[at + axis]} does not divide grid.${AXES[axis]} = ${gridDims[axis]}`,
      );
    }
  }
}

function readDim(
  dim: Dim3,
  what: string,
  limits: readonly [number, number, number],
  kernelName: string,
  out: Uint32Array,
  at: number,
): void {
  if (typeof dim === 'number') {
    checkExtent(dim, what, 0, limits, kernelName);
    out[at] = dim;
    out[at + 1] = 1;
    out[at + 2] = 1;
    return;
  }
  if (!Array.isArray(dim) || dim.length < 1 || dim.length > 3) {
    throw new InvalidArgumentError(`${kernelName}: ${what} must be a number or an array of 1 to 3 numbers`);
  }
  for (let axis = 0; axis < 3; axis++) {
    const extent = (dim as readonly (number | undefined)[])[axis] ?? 1;
    checkExtent(extent, what, axis, limits, kernelName);
    out[at + axis] = extent;
  }
}

function checkExtent(extent: number, what: string, axis: number, limits: readonly [number, number, number], kernelName: string): void {
  if (!Number.isInteger(extent) || extent < 1) {
    throw new InvalidArgumentError(`${kernelName}: ${what}.${AXES[axis]} = ${extent} is not a positive integer`);
  }
  if (extent > limits[axis]!) {
    throw new InvalidArgumentError(`${kernelName}: ${what}.${AXES[axis]} = ${extent} exceeds the device's maximum of ${limits[axis]}`);
  }
}
