/**
 * How many thread-block clusters of a kernel can be resident on the device at once
 * (`cuOccupancyMaxActiveClusters`, CUDA 12.0+), bound through the driver library loader.
 * The persistent Hopper matmul sizes its grid with it: a cluster needs all its CTAs on SMs
 * of one GPC, so the count is not simply SMs ÷ cluster size.
 */
import { check } from '../../driver/cuda-error.js';
import { openLibcuda } from '../../driver/library.js';
import type { CUfunction } from '../../driver/raw/handles.js';
import { lazyFunctions } from '../../ffi/lazy-functions.js';

const driver = lazyFunctions(openLibcuda, {
  cuOccupancyMaxActiveClusters: 'int cuOccupancyMaxActiveClusters(_Out_ int *numClusters, void *fn, const void *config)',
});

/**
 * CUlaunchConfig on 64-bit hosts: grid x/y/z, block x/y/z, shared bytes (u32 each), 4 bytes
 * of padding, stream (pointer), attributes (pointer), attribute count (u32) and padding.
 */
const LAUNCH_CONFIG_BYTES = 56;
const config = new DataView(new ArrayBuffer(LAUNCH_CONFIG_BYTES));
const count = new Int32Array(1);

/**
 * Clusters of `fn` (whose cluster shape is compiled in with `__cluster_dims__`) that fit on
 * the device at once with `blockSize` threads and `sharedMemBytes` of dynamic shared memory
 * per CTA. `gridBlocks` is a grid the cluster shape divides (the driver checks it).
 */
export function maxActiveClusters(fn: CUfunction, gridBlocks: number, blockSize: number, sharedMemBytes: number): number {
  config.setUint32(0, gridBlocks, true);
  config.setUint32(4, 1, true);
  config.setUint32(8, 1, true);
  config.setUint32(12, blockSize, true);
  config.setUint32(16, 1, true);
  config.setUint32(20, 1, true);
  config.setUint32(24, sharedMemBytes, true);
  // Stream, attributes and their count stay zero: the cluster shape comes from the kernel.
  check(driver.cuOccupancyMaxActiveClusters(count, fn, new Uint8Array(config.buffer)), 'cuOccupancyMaxActiveClusters');
  return count[0]!;
}
