import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ArgPack,
  Context,
  cu,
  CudaError,
  Device,
  DeviceBuffer,
  f32,
  f64,
  i32,
  i64,
  Module,
  u32,
  u64,
  type KernelArg,
} from '../../../src/driver/index.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { gpuAvailable } from '../gpu-available.js';
import { mismatches, randomFloats, TEST_KERNELS_PTX } from './test-kernels.js';

const BLOCK = 256;

describe.skipIf(!gpuAvailable)('Module and Kernel on a real GPU', () => {
  let device: Device;
  let ctx: Context;
  let module: Module;

  beforeAll(() => {
    device = Device.get(0);
    ctx = device.primaryContext();
    module = Module.load(ctx, TEST_KERNELS_PTX);
  });

  afterAll(() => {
    module?.dispose();
    ctx?.dispose();
  });

  /** Uploads fresh random a and b, returning them with device copies and an output buffer. */
  function vectors(n: number) {
    const a = randomFloats(n);
    const b = randomFloats(n);
    const da = DeviceBuffer.alloc(ctx, n * 4);
    const db = DeviceBuffer.alloc(ctx, n * 4);
    const dc = DeviceBuffer.alloc(ctx, n * 4);
    da.copyFromHost(a);
    db.copyFromHost(b);
    dc.fill(Number.NaN, { dtype: 'f32' });
    const expected = a.map((x, i) => Math.fround(x + b[i]!));
    const dispose = () => [da, db, dc].forEach((buffer) => buffer.dispose());
    return { a, b, da, db, dc, expected, dispose };
  }

  function expectExact(buffer: DeviceBuffer, expected: Float32Array): void {
    const actual = new Float32Array(expected.length);
    buffer.copyToHost(actual);
    expect(mismatches(actual, expected)).toEqual({ count: 0, first: -1 });
  }

  it('runs vector_add end to end on fresh random inputs, checked exactly', () => {
    const n = (1 << 20) + 37;
    const { da, db, dc, expected, dispose } = vectors(n);
    const kernel = module.getFunction('vector_add');
    kernel.launch({ grid: Math.ceil(n / BLOCK), block: BLOCK }, [da, db, dc, u32(n)]);
    expectExact(dc, expected);
    expect(expected.some((x) => x !== 0)).toBe(true);
    dispose();
  });

  it('passes every scalar type with its exact bits, and knows the parameter layout', () => {
    const kernel = module.getFunction('args_probe');
    expect(kernel.params).toEqual([
      { offset: 0, size: 4 },
      { offset: 4, size: 4 },
      { offset: 8, size: 8 },
      { offset: 16, size: 8 },
      { offset: 24, size: 4 },
      { offset: 32, size: 8 },
      { offset: 40, size: 8 },
    ]);
    const out = DeviceBuffer.alloc(ctx, 40);
    const c = -(2n ** 62n) - 5n;
    const d = 2n ** 64n - 2n;
    kernel.launch({ grid: 1, block: 1 }, [i32(-123456789), u32(4_000_000_000), i64(c), u64(d), f32(Math.PI), f64(Math.E), out]);
    const bytes = new Uint8Array(40);
    out.copyToHost(bytes);
    const view = new DataView(bytes.buffer);
    expect(view.getInt32(0, true)).toBe(-123456789);
    expect(view.getUint32(4, true)).toBe(4_000_000_000);
    expect(view.getBigInt64(8, true)).toBe(c);
    expect(view.getBigUint64(16, true)).toBe(d);
    expect(view.getFloat32(24, true)).toBe(Math.fround(Math.PI));
    expect(view.getFloat64(32, true)).toBe(Math.E);
    out.dispose();
  });

  it('launches through a bound signature, refusing a number where a pointer goes', () => {
    const n = 100_003;
    const { da, db, dc, expected, dispose } = vectors(n);
    const kernel = module.getFunction('vector_add');
    const add = kernel.bind(['ptr', 'ptr', 'ptr', 'u32']);
    add({ grid: Math.ceil(n / BLOCK), block: BLOCK }, da, db.ptr, dc, n);
    expectExact(dc, expected);
    expect(() => add({ grid: 1, block: BLOCK }, da, db, 4096, n)).toThrow(InvalidArgumentError);
    expect(() => add({ grid: 1, block: BLOCK }, da, db, dc)).toThrow(/bound to 4 arguments, got 3/);
    expect(() => kernel.bind(['ptr', 'ptr', 'u32'])).toThrow(/takes 4 arguments, the signature declares 3/);
    expect(() => kernel.bind(['ptr', 'ptr', 'ptr', 'u64'])).toThrow(/slot 3 is u64 \(8 bytes\) but the kernel's parameter 3 is 4 bytes/);
    dispose();
  });

  it('reads kernel attributes', () => {
    const attributes = module.getFunction('vector_add').attributes;
    const { major, minor } = device.computeCapability;
    expect(attributes.maxThreadsPerBlock).toBe(1024);
    expect(attributes.numRegisters).toBeGreaterThan(0);
    expect(attributes.sharedSizeBytes).toBe(0);
    expect(attributes.localSizeBytes).toBe(0);
    expect(attributes.binaryVersion).toBe(major * 10 + minor);
    expect(attributes.ptxVersion).toBeGreaterThan(0);
    expect(attributes.ptxVersion).toBeLessThanOrEqual(attributes.binaryVersion);
    console.log('vector_add attributes:', JSON.stringify(attributes));
    expect(attributes.maxDynamicSharedSizeBytes).toBe(48 * 1024);
  });

  it('reads and writes module globals', () => {
    const counter = module.getGlobal('counter');
    expect(counter.byteLength).toBe(4);
    expect(counter.isView).toBe(true);
    counter.fill(0, { dtype: 'u32' });
    module.getFunction('bump').launch({ grid: 13, block: 128 }, []);
    const value = new Uint32Array(1);
    counter.copyToHost(value);
    expect(value[0]).toBe(13 * 128);
  });

  it('names a missing kernel and says why it may be missing', () => {
    expect(() => module.getFunction('vectorAdd')).toThrow(CudaError);
    expect(() => module.getFunction('vectorAdd')).toThrow(/CUDA_ERROR_NOT_FOUND[\s\S]*extern "C"/);
  });

  it("reports the JIT's error log for PTX it cannot compile", () => {
    const broken = '.version 7.8\n.target sm_80\n.address_size 64\n.visible .entry broken()\n{\n  frobnicate.u32 %r1;\n  ret;\n}\n';
    let error: unknown;
    try {
      Module.load(ctx, broken);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CudaError);
    expect((error as CudaError).errorName).toBe('CUDA_ERROR_INVALID_PTX');
    expect((error as CudaError).message).toContain('JIT error log');
    expect((error as CudaError).message).toMatch(/line 6/);
    expect(ctx.unusable).toBe(false);
  });

  it('loads CUBIN and fatbin images', ({ skip }) => {
    const bin = join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'bin');
    if (!existsSync(join(bin, 'ptxas'))) skip();
    const dir = mkdtempSync(join(tmpdir(), 'gpucompute-cubin-'));
    try {
      writeFileSync(join(dir, 'k.ptx'), TEST_KERNELS_PTX);
      execFileSync(join(bin, 'ptxas'), [`-arch=${device.arch}`, '-o', join(dir, 'k.cubin'), join(dir, 'k.ptx')]);
      const images: [string, Uint8Array][] = [['cubin', readFileSync(join(dir, 'k.cubin'))]];
      if (existsSync(join(bin, 'fatbinary'))) {
        const sm = device.arch.slice(3);
        execFileSync(join(bin, 'fatbinary'), [
          `--create=${join(dir, 'k.fatbin')}`,
          `--image3=kind=elf,sm=${sm},file=${join(dir, 'k.cubin')}`,
          `--image3=kind=ptx,sm=80,file=${join(dir, 'k.ptx')}`,
        ]);
        images.push(['fatbin', readFileSync(join(dir, 'k.fatbin'))]);
      }
      for (const [, image] of images) {
        const loaded = Module.load(ctx, new Uint8Array(image));
        const n = 4099;
        const { da, db, dc, expected, dispose } = vectors(n);
        loaded.getFunction('vector_add').launch({ grid: Math.ceil(n / BLOCK), block: BLOCK }, [da, db, dc, u32(n)]);
        expectExact(dc, expected);
        dispose();
        loaded.dispose();
      }
      console.log(`loaded ${images.map(([kind]) => kind).join(' and ')} images`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses dynamic shared memory above 48 KB after opting in', () => {
    const kernel = module.getFunction('smem_reverse');
    const perBlock = (100 * 1024) / 4;
    const blocks = 8;
    const input = randomFloats(perBlock * blocks);
    const din = DeviceBuffer.alloc(ctx, input.byteLength);
    const dout = DeviceBuffer.alloc(ctx, input.byteLength);
    din.copyFromHost(input);
    dout.fill(0, { dtype: 'u32' });
    const config = { grid: blocks, block: BLOCK, sharedMemBytes: perBlock * 4 };
    const args: KernelArg[] = [din, dout, u32(perBlock)];
    expect(() => kernel.launch(config, args)).toThrow(/call kernel\.setMaxDynamicSharedMemory\(102400\) first/);
    kernel.setMaxDynamicSharedMemory(perBlock * 4);
    expect(kernel.attributes.maxDynamicSharedSizeBytes).toBe(perBlock * 4);
    kernel.launch(config, args);
    const expected = new Float32Array(input.length);
    for (let b = 0; b < blocks; b++) {
      for (let i = 0; i < perBlock; i++) expected[b * perBlock + i] = input[b * perBlock + perBlock - 1 - i]!;
    }
    expectExact(dout, expected);
    const optin = device.sharedMemoryPerBlockOptin;
    expect(() => kernel.setMaxDynamicSharedMemory(optin + 1)).toThrow(InvalidArgumentError);
    expect(() => kernel.launch({ ...config, sharedMemBytes: optin + 1024 }, args)).toThrow(/exceed what the device allows a block/);
    din.dispose();
    dout.dispose();
  });

  it('computes occupancy', () => {
    const add = module.getFunction('vector_add');
    const perSm = add.occupancy.maxActiveBlocksPerMultiprocessor(BLOCK);
    expect(perSm).toBeGreaterThanOrEqual(1);
    expect(perSm).toBeLessThanOrEqual(device.maxThreadsPerMultiprocessor / BLOCK);
    const best = add.occupancy.maxPotentialBlockSize();
    expect(best.blockSize % 32).toBe(0);
    expect(best.blockSize).toBeLessThanOrEqual(1024);
    expect(best.minGridSize).toBeGreaterThanOrEqual(device.multiprocessorCount);
    expect(add.occupancy.maxPotentialBlockSize(0, 128).blockSize).toBeLessThanOrEqual(128);

    const reverse = module.getFunction('smem_reverse');
    reverse.setMaxDynamicSharedMemory(100 * 1024);
    const big = reverse.occupancy.maxActiveBlocksPerMultiprocessor(BLOCK, 100 * 1024);
    expect(big).toBeGreaterThanOrEqual(1);
    expect(big).toBeLessThanOrEqual(Math.floor(device.sharedMemoryPerMultiprocessor / (100 * 1024)));
    expect(reverse.occupancy.availableDynamicSharedMemory(1, BLOCK)).toBeGreaterThanOrEqual(100 * 1024);
    expect(() => add.occupancy.maxActiveBlocksPerMultiprocessor(0)).toThrow(InvalidArgumentError);
    expect(() => add.occupancy.maxActiveBlocksPerMultiprocessor(BLOCK, -1)).toThrow(InvalidArgumentError);
    console.log(`occupancy: vector_add ${perSm} blocks/SM at ${BLOCK}, best block ${best.blockSize} grid ${best.minGridSize}; smem_reverse(100 KB) ${big} blocks/SM`);
  });

  it('launches cooperatively and in thread-block clusters', ({ skip }) => {
    if (!device.cooperativeLaunch) skip();
    const kernel = module.getFunction('vector_add');
    const grid = device.multiprocessorCount * kernel.occupancy.maxActiveBlocksPerMultiprocessor(BLOCK);
    const n = grid * BLOCK;
    const cooperative = vectors(n);
    kernel.launch({ grid, block: BLOCK, cooperative: true }, [cooperative.da, cooperative.db, cooperative.dc, u32(n)]);
    expectExact(cooperative.dc, cooperative.expected);
    cooperative.dispose();

    if (!device.clusterLaunch) return;
    const clustered = vectors(64 * BLOCK);
    const args = [clustered.da, clustered.db, clustered.dc, u32(64 * BLOCK)];
    kernel.launch({ grid: 64, block: BLOCK, clusterDim: 2 }, args);
    expectExact(clustered.dc, clustered.expected);
    clustered.dc.fill(0, { dtype: 'u32' });
    kernel.launch({ grid: [32, 2], block: BLOCK, clusterDim: [4, 2, 1] }, [clustered.da, clustered.db, clustered.dc, u32(32 * BLOCK)]);
    expectExact(clustered.dc.view(0, 32 * BLOCK * 4), clustered.expected.subarray(0, 32 * BLOCK));
    expect(() => kernel.launch({ grid: 64, block: BLOCK, clusterDim: 3 }, args)).toThrow(/clusterDim\.x = 3 does not divide grid\.x = 64/);
    clustered.dispose();
  });

  it('refuses bad launches and copies before the driver sees them', () => {
    const n = 1000;
    const { da, db, dc, expected, dispose } = vectors(n);
    const kernel = module.getFunction('vector_add');
    const ok = { grid: Math.ceil(n / BLOCK), block: BLOCK };
    const cases: [() => void, RegExp][] = [
      [() => kernel.launch({ grid: 1, block: 2048 }, [da, db, dc, u32(n)]), /block\.x = 2048 exceeds the device's maximum of 1024/],
      [() => kernel.launch({ grid: 1, block: [64, 32] }, [da, db, dc, u32(n)]), /2048 threads exceeds the device's 1024/],
      [() => kernel.launch({ grid: [1, 70000], block: BLOCK }, [da, db, dc, u32(n)]), /grid\.y = 70000 exceeds/],
      [() => kernel.launch({ grid: 0, block: BLOCK }, [da, db, dc, u32(n)]), /grid\.x = 0/],
      [() => kernel.launch({ ...ok, sharedMemBytes: 64 * 1024 }, [da, db, dc, u32(n)]), /setMaxDynamicSharedMemory/],
      [() => kernel.launch(ok, [da, db, dc]), /vector_add takes 4 arguments, got 3/],
      [() => kernel.launch(ok, [da, db, dc, u32(n), u32(n)]), /takes 4 arguments, got 5/],
      [() => kernel.launch(ok, [da, db, dc, u64(n)]), /argument 3 is u64\(1000\) \(8 bytes\) but the kernel's parameter 3 is 4 bytes/],
      [() => kernel.launch(ok, [da, db, dc, n as unknown as KernelArg]), /argument 3 is a bare number/],
      [() => kernel.launch(ok, [da, db, i32(5), u32(n)]), /argument 2 is i32\(5\) \(4 bytes\)/],
      [() => da.copyFromHost(new Float64Array(n)), /sizes differ \(8000 bytes vs the buffer's 4000\)/],
      [() => da.copyToHost(new Float32Array(n + 1)), /sizes differ/],
      [() => da.copyFromHost(new Float32Array(10), { byteOffset: 3990 }), /run past the end/],
      [() => da.view(3000, 2000), /runs past the end/],
      [() => da.fill(256, { dtype: 'u8' }), /256 is not a u8/],
    ];
    for (const [attempt, message] of cases) {
      expect(attempt).toThrow(InvalidArgumentError);
      expect(attempt).toThrow(message);
    }
    expect(ctx.unusable).toBe(false);
    kernel.launch(ok, [da, db, dc, u32(n)]);
    expectExact(dc, expected);
    dispose();
  });

  it('measures the host cost of launches (and checks the work was done)', () => {
    const bump = module.getFunction('bump');
    const counter = module.getGlobal('counter');
    const n = 4096;
    const { da, db, dc, expected, dispose } = vectors(n);
    const add = module.getFunction('vector_add');
    const bound = add.bind(['ptr', 'ptr', 'ptr', 'u32']);
    const rawPack = new ArgPack(4);
    const rawParams = rawPack.pack([da, db, dc, u32(n)], undefined, 'vector_add');
    const grid = n / BLOCK;
    const BATCH = 256;
    const ROUNDS = 40;
    const median = (xs: number[]) => xs.sort((p, q) => p - q)[xs.length >> 1]!;
    const time = (launchOne: () => void): number => {
      const perLaunch: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const start = process.hrtime.bigint();
        for (let i = 0; i < BATCH; i++) launchOne();
        perLaunch.push(Number(process.hrtime.bigint() - start) / 1000 / BATCH);
        ctx.synchronize();
      }
      return median(perLaunch);
    };
    counter.fill(0, { dtype: 'u32' });
    const bumpFn = bump.handle;
    const results = {
      emptyRaw: time(() => cu.launchKernel(bumpFn, 1, 1, 1, 1, 1, 1, 0, 0n, 0n)),
      emptySafe: time(() => bump.launch({ grid: 1, block: 1 }, [])),
      args4Raw: time(() => cu.launchKernel(add.handle, grid, 1, 1, BLOCK, 1, 1, 0, 0n, rawParams)),
      args4Safe: time(() => add.launch({ grid, block: BLOCK }, [da, db, dc, u32(n)])),
      args4Bound: time(() => bound({ grid, block: BLOCK }, da, db, dc, n)),
    };
    console.log('launch host cost, median µs per launch:', JSON.stringify(results, (_k, v: unknown) => (typeof v === 'number' ? +v.toFixed(3) : v)));
    const count = new Uint32Array(1);
    counter.copyToHost(count);
    expect(count[0]).toBe(2 * ROUNDS * BATCH);
    expectExact(dc, expected);
    dispose();
  });

  it("refuses a disposed module's kernels and globals", () => {
    const doomed = Module.load(ctx, TEST_KERNELS_PTX);
    const kernel = doomed.getFunction('bump');
    const global = doomed.getGlobal('counter');
    doomed.dispose();
    expect(() => kernel.launch({ grid: 1, block: 1 }, [])).toThrow(DisposedError);
    expect(() => global.ptr).toThrow(DisposedError);
    expect(() => doomed.getFunction('bump')).toThrow(DisposedError);
    expect(global.disposed).toBe(true);
  });
});
