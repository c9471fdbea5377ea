import { describe, expect, it } from 'vitest';
import {
  resolveClusterDims,
  resolveLaunchDims,
  type DeviceLaunchLimits,
  type KernelLaunchLimits,
} from '../../../src/driver/launch-config.js';
import { InvalidArgumentError } from '../../../src/errors.js';

// The limits an H100 reports.
const h100: DeviceLaunchLimits = {
  maxBlockDim: [1024, 1024, 64],
  maxGridDim: [2147483647, 65535, 65535],
  maxThreadsPerBlock: 1024,
  sharedMemoryPerBlockOptin: 232448,
};

const kernel: KernelLaunchLimits = {
  name: 'saxpy',
  maxThreadsPerBlock: 1024,
  sharedSizeBytes: 0,
  maxDynamicSharedSizeBytes: 49152,
};

function resolve(grid: unknown, block: unknown, smem = 0, k: KernelLaunchLimits = kernel): number[] {
  const out = new Uint32Array(6);
  resolveLaunchDims(grid as never, block as never, smem, h100, k, out);
  return [...out];
}

describe('resolveLaunchDims', () => {
  it('fills missing extents with 1', () => {
    expect(resolve(80, 256)).toEqual([80, 1, 1, 256, 1, 1]);
    expect(resolve([4, 3], [16, 16])).toEqual([4, 3, 1, 16, 16, 1]);
    expect(resolve([2, 3, 4], [8, 8, 4])).toEqual([2, 3, 4, 8, 8, 4]);
    expect(resolve([7], [32])).toEqual([7, 1, 1, 32, 1, 1]);
  });

  it('accepts the largest legal shapes', () => {
    expect(resolve([2147483647, 65535, 65535], [1024])).toEqual([2147483647, 65535, 65535, 1024, 1, 1]);
    expect(resolve(1, [1, 1, 64])).toEqual([1, 1, 1, 1, 1, 64]);
  });

  it.each([
    [0, 32, /grid\.x = 0 is not a positive integer/],
    [1.5, 32, /grid\.x = 1\.5/],
    [-3, 32, /grid\.x = -3/],
    [[1, 0], 32, /grid\.y = 0/],
    [[1, 65536], 32, /grid\.y = 65536 exceeds the device's maximum of 65535/],
    [1, 0, /block\.x = 0/],
    [1, [1, 1, 65], /block\.z = 65 exceeds the device's maximum of 64/],
    [1, [], /block must be a number or an array of 1 to 3 numbers/],
    [1, [1, 1, 1, 1], /block must be/],
    [1, 'many', /block must be/],
  ])('refuses grid %j block %j', (grid, block, message) => {
    expect(() => resolve(grid, block)).toThrow(InvalidArgumentError);
    expect(() => resolve(grid, block)).toThrow(message);
  });

  it("refuses more threads than the device's block limit", () => {
    expect(() => resolve(1, [64, 32])).toThrow(/a block of 2048 threads exceeds the device's 1024 threads per block/);
  });

  it("refuses more threads than the kernel's own limit, saying why it is lower", () => {
    const heavy = { ...kernel, maxThreadsPerBlock: 256 };
    expect(() => resolve(1, 512, 0, heavy)).toThrow(/exceeds the kernel's limit of 256 .*__launch_bounds__/);
    expect(resolve(1, 256, 0, heavy)).toEqual([1, 1, 1, 256, 1, 1]);
  });

  it('refuses dynamic shared memory above the current limit and says how to raise it', () => {
    expect(resolve(1, 32, 49152)).toEqual([1, 1, 1, 32, 1, 1]);
    expect(() => resolve(1, 32, 100 * 1024)).toThrow(/call kernel\.setMaxDynamicSharedMemory\(102400\) first/);
  });

  it('accepts dynamic shared memory up to a raised limit', () => {
    const raised = { ...kernel, maxDynamicSharedSizeBytes: 200 * 1024 };
    expect(resolve(1, 32, 200 * 1024, raised)).toEqual([1, 1, 1, 32, 1, 1]);
  });

  it("refuses dynamic shared memory beyond the device's opt-in limit, counting static memory", () => {
    const withStatic = { ...kernel, sharedSizeBytes: 16384, maxDynamicSharedSizeBytes: 1000 };
    expect(() => resolve(1, 32, 232448, withStatic)).toThrow(/232448 bytes opt-in, 16384 of them static, so at most 216064/);
  });

  it.each([-1, 0.5, Number.NaN])('refuses sharedMemBytes %s', (smem) => {
    expect(() => resolve(1, 32, smem)).toThrow(/sharedMemBytes .* is not a non-negative integer/);
  });
});

describe('resolveClusterDims', () => {
  it('accepts clusters that divide the grid', () => {
    const out = new Uint32Array(9);
    out.set([8, 4, 1], 0);
    resolveClusterDims([2, 2], out, 'k', out, 6);
    expect([...out.subarray(6)]).toEqual([2, 2, 1]);
    resolveClusterDims(4, out, 'k', out, 6);
    expect([...out.subarray(6)]).toEqual([4, 1, 1]);
  });

  it('refuses a cluster that does not divide the grid', () => {
    const out = new Uint32Array(9);
    out.set([6, 1, 1], 0);
    expect(() => resolveClusterDims(4, out, 'k', out, 6)).toThrow(/clusterDim\.x = 4 does not divide grid\.x = 6/);
  });
});
