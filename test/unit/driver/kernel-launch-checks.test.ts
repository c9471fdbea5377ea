/**
 * Kernel launches check their shape before the driver sees it, also when a launch repeats the
 * last shape checked (which skips the checks): on a fake module and a fake cuLaunchKernel.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cuda } from '../../../src/driver/bindings.js';
import koffi from 'koffi';
import { FunctionAttribute, LaunchAttributeId } from '../../../src/driver/generated/enums.js';
import { Kernel, type KernelModule } from '../../../src/driver/kernel.js';
import { InvalidArgumentError } from '../../../src/errors.js';

/** The dims of each launch the fake driver received: gx gy gz bx by bz (and for cuLaunchKernelEx the cluster xyz, then 1 if cooperative). */
const launches: number[][] = [];

beforeAll(() => {
  Object.defineProperty(cuda, 'cuLaunchKernel', {
    value: (_fn: bigint, gx: number, gy: number, gz: number, bx: number, by: number, bz: number) => {
      launches.push([gx, gy, gz, bx, by, bz]);
      return 0;
    },
  });
  Object.defineProperty(cuda, 'cuFuncGetAttribute', {
    value: (out: Int32Array, attribute: number) => {
      out[0] = attribute === FunctionAttribute.MAX_THREADS_PER_BLOCK ? 256 : attribute === FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES ? 48 * 1024 : 0;
      return 0;
    },
  });
  Object.defineProperty(cuda, 'cuLaunchKernelEx', {
    value: (config: bigint) => {
      const u32 = koffi.decode(config, 'uint32_t', 13) as number[];
      const attributes = koffi.decode(config + 40n, 'uint64_t') as number | bigint;
      const dims = [...u32.slice(0, 6)];
      for (let i = 0; i < u32[12]!; i++) {
        const at = BigInt(attributes) + BigInt(i * 72);
        const [id, , x, y, z] = koffi.decode(at, 'uint32_t', 5) as number[];
        if (id === LaunchAttributeId.CLUSTER_DIMENSION) dims.push(x!, y!, z!);
        if (id === LaunchAttributeId.COOPERATIVE) dims.push(x!);
      }
      launches.push(dims);
      return 0;
    },
  });
  // CUDA_ERROR_NOT_SUPPORTED: no parameter information, so arguments go unchecked by size.
  Object.defineProperty(cuda, 'cuFuncGetParamInfo', { value: () => 801 });
});

const device = { maxBlockDim: [1024, 1024, 64], maxGridDim: [2 ** 31 - 1, 65535, 65535], maxThreadsPerBlock: 1024, sharedMemoryPerBlockOptin: 227 * 1024 };
const module = { context: { device }, disposed: false, core: { enter() {} } } as unknown as KernelModule;

describe('Kernel launch checks', () => {
  it('passes each launch its own dims, a repeated shape included', () => {
    const a = new Kernel(module, 1n, 'a').bind(['ptr', 'u32']);
    const b = new Kernel(module, 2n, 'b').bind(['ptr']);
    launches.length = 0;
    a({ grid: 4, block: 64 }, 16n, 5);
    b({ grid: [2, 3], block: [8, 8] }, 16n);
    a({ grid: 4, block: 64 }, 16n, 5);
    expect(launches).toEqual([
      [4, 1, 1, 64, 1, 1],
      [2, 3, 1, 8, 8, 1],
      [4, 1, 1, 64, 1, 1],
    ]);
  });

  it('refuses a bad shape every time, before and after a good launch of the same kernel', () => {
    const a = new Kernel(module, 3n, 'a').bind(['ptr']);
    launches.length = 0;
    for (const bad of [{ grid: 0, block: 64 }, { grid: NaN, block: NaN }, { grid: 4, block: 512 }, { grid: 4, block: 64, sharedMemBytes: -1 }]) {
      expect(() => a(bad, 16n)).toThrow(InvalidArgumentError);
      a({ grid: 4, block: 64 }, 16n);
      expect(() => a(bad, 16n)).toThrow(InvalidArgumentError);
    }
    expect(launches).toHaveLength(4);
  });

  it('checks array shapes too: a repeated one launches, a changed or malformed one is checked again', () => {
    const a = new Kernel(module, 4n, 'a').bind(['ptr']);
    launches.length = 0;
    a({ grid: [2, 3], block: [8, 8] }, 16n);
    a({ grid: [2, 3, 1], block: [8, 8] }, 16n);
    a({ grid: 2, block: 64 }, 16n);
    for (const bad of [{ grid: [2, 3, 1, 1], block: [8, 8] }, { grid: [2, 3], block: [8, 8, 8] }, { grid: 2, block: [64, 1, 1], sharedMemBytes: 0.5 }]) {
      a({ grid: [2, 3], block: [8, 8] }, 16n);
      expect(() => a(bad as never, 16n)).toThrow(InvalidArgumentError);
    }
    expect(launches).toEqual([
      [2, 3, 1, 8, 8, 1],
      [2, 3, 1, 8, 8, 1],
      [2, 1, 1, 64, 1, 1],
      [2, 3, 1, 8, 8, 1],
      [2, 3, 1, 8, 8, 1],
      [2, 3, 1, 8, 8, 1],
    ]);
  });

  it('checks a cluster against the grid it launches with, a repeated one included', () => {
    const a = new Kernel(module, 5n, 'a').bind(['ptr']);
    launches.length = 0;
    a({ grid: 4, block: 64, clusterDim: [2, 1, 1] }, 16n);
    a({ grid: 4, block: 64, clusterDim: [2, 1, 1] }, 16n);
    expect(() => a({ grid: 6, block: 64, clusterDim: [4, 1, 1] }, 16n)).toThrow(/clusterDim\.x = 4 does not divide grid\.x = 6/);
    a({ grid: 6, block: 64, clusterDim: 3 }, 16n);
    a({ grid: 6, block: 64, clusterDim: 3, cooperative: true }, 16n);
    expect(() => a({ grid: 8, block: 64, clusterDim: 3 }, 16n)).toThrow(/clusterDim\.x = 3 does not divide grid\.x = 8/);
    a({ grid: 6, block: 64, clusterDim: 3 }, 16n);
    expect(launches).toEqual([
      [4, 1, 1, 64, 1, 1, 2, 1, 1],
      [4, 1, 1, 64, 1, 1, 2, 1, 1],
      [6, 1, 1, 64, 1, 1, 3, 1, 1],
      [6, 1, 1, 64, 1, 1, 3, 1, 1, 1],
      [6, 1, 1, 64, 1, 1, 3, 1, 1],
    ]);
  });
});
