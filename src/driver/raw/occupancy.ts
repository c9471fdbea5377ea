import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import type { CUfunction } from './handles.js';
import { packLaunchConfig, type LaunchConfig } from './launch.js';
import { out } from './out-params.js';

/** cuOccupancyMaxActiveBlocksPerMultiprocessor: resident blocks per SM at this block size and dynamic shared memory. */
export function occupancyMaxActiveBlocksPerMultiprocessor(fn: CUfunction, blockSize: number, dynamicSmemBytes: number): number {
  check(
    cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(out.i32, fn, blockSize, dynamicSmemBytes),
    'cuOccupancyMaxActiveBlocksPerMultiprocessor',
  );
  return out.i32[0]!;
}

/**
 * cuOccupancyMaxPotentialBlockSize with a constant dynamic shared memory size:
 * the block size that maximises occupancy, and the smallest grid that fills
 * the device at that size. `blockSizeLimit` 0 means no limit.
 */
export function occupancyMaxPotentialBlockSize(
  fn: CUfunction,
  dynamicSmemBytes: number,
  blockSizeLimit: number,
): { minGridSize: number; blockSize: number } {
  check(
    cuda.cuOccupancyMaxPotentialBlockSize(out.i32, out.i32b, fn, null, dynamicSmemBytes, blockSizeLimit),
    'cuOccupancyMaxPotentialBlockSize',
  );
  return { minGridSize: out.i32[0]!, blockSize: out.i32b[0]! };
}

/** cuOccupancyAvailableDynamicSMemPerBlock: dynamic shared memory left per block with `numBlocks` of `blockSize` per SM. */
export function occupancyAvailableDynamicSMemPerBlock(fn: CUfunction, numBlocks: number, blockSize: number): number {
  check(
    cuda.cuOccupancyAvailableDynamicSMemPerBlock(out.u64, fn, numBlocks, blockSize),
    'cuOccupancyAvailableDynamicSMemPerBlock',
  );
  return Number(out.u64[0]!);
}

/**
 * cuOccupancyMaxActiveClusters (CUDA 12.0+): clusters of `fn` resident on the device at once for
 * this launch shape. The cluster shape comes from the config's attributes, or from the kernel's
 * `__cluster_dims__`; the grid must be a multiple of it. Not SMs ÷ cluster size: a cluster needs
 * all its blocks on SMs of one GPC.
 */
export function occupancyMaxActiveClusters(fn: CUfunction, config: LaunchConfig): number {
  check(cuda.cuOccupancyMaxActiveClusters(out.i32, fn, packLaunchConfig(config)), 'cuOccupancyMaxActiveClusters');
  return out.i32[0]!;
}
