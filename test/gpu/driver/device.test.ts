import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context, cu, Device, DeviceAttribute, Stream } from '../../../src/driver/index.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { gpuAvailable } from '../gpu-available.js';

describe.skipIf(!gpuAvailable)('Device and Context on a real GPU', () => {
  let device: Device;
  let ctx: Context;

  beforeAll(() => {
    device = Device.get(0);
    ctx = device.primaryContext();
  });

  afterAll(() => ctx?.dispose());

  it('reports sane properties', () => {
    const props = device.describe();
    console.log('device 0:', JSON.stringify(props));
    expect(Device.count()).toBeGreaterThanOrEqual(1);
    expect(Device.get(0)).toBe(device);
    expect(device.name.length).toBeGreaterThan(0);
    expect(device.uuid).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(device.pciBusId).toMatch(/^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9]$/i);
    expect(device.totalMemory).toBeGreaterThan(2 ** 30);
    const { major, minor } = device.computeCapability;
    expect(major).toBeGreaterThanOrEqual(5);
    expect(device.arch).toBe(`sm_${major}${minor}`);
    expect(device.warpSize).toBe(32);
    expect(device.maxThreadsPerBlock).toBe(1024);
    expect(device.maxBlockDim).toEqual([1024, 1024, 64]);
    expect(device.maxGridDim).toEqual([2 ** 31 - 1, 65535, 65535]);
    expect(device.multiprocessorCount).toBeGreaterThan(0);
    expect(device.sharedMemoryPerBlock).toBe(48 * 1024);
    expect(device.sharedMemoryPerBlockOptin).toBeGreaterThanOrEqual(device.sharedMemoryPerBlock);
    expect(device.sharedMemoryPerMultiprocessor).toBeGreaterThanOrEqual(device.sharedMemoryPerBlockOptin);
    expect(device.l2CacheSize).toBeGreaterThan(0);
    expect(device.memoryBusWidth).toBeGreaterThan(0);
    expect(device.supportsTensorCores).toBe(major >= 7);
    expect(device.supportsBf16).toBe(major >= 8);
    expect(device.attribute(DeviceAttribute.WARP_SIZE)).toBe(32);
    expect(device.attribute(DeviceAttribute.MULTIPROCESSOR_COUNT)).toBe(device.multiprocessorCount);
    expect(props.arch).toBe(device.arch);
  });

  it('refuses an ordinal that does not exist', () => {
    expect(() => Device.get(Device.count())).toThrow(InvalidArgumentError);
    expect(() => Device.get(-1)).toThrow(InvalidArgumentError);
  });

  it('finds the current device and binds the context only when needed', () => {
    ctx.makeCurrent();
    expect(Device.current()).toBe(device);
    expect(cu.ctxGetCurrent()).toBe(ctx.handle);
    // Unbound through the raw tier: the next safe-tier call must bind it again.
    cu.ctxSetCurrent(0n);
    expect(ctx.memoryInfo().total).toBeGreaterThan(0);
    expect(cu.ctxGetCurrent()).toBe(ctx.handle);
  });

  it('reports memory information consistent with the device', () => {
    const { free, total } = ctx.memoryInfo();
    expect(free).toBeGreaterThan(0);
    expect(free).toBeLessThanOrEqual(total);
    expect(Math.abs(total - device.totalMemory) / device.totalMemory).toBeLessThan(0.01);
  });

  it('retains the primary context once per Context object and releases on dispose', () => {
    const second = device.primaryContext();
    expect(second.handle).toBe(ctx.handle);
    expect(cu.devicePrimaryCtxGetState(device.handle).active).toBe(true);
    second.dispose();
    second.dispose(); // idempotent
    expect(() => second.handle).toThrow(DisposedError);
    expect(() => second.synchronize()).toThrow(DisposedError);
    expect(ctx.memoryInfo().total).toBeGreaterThan(0);
  });

  it('lets a stream outlive the Context object it was created from', () => {
    const short = device.primaryContext();
    const stream = Stream.create(short);
    short.dispose();
    stream.synchronize();
    expect(stream.query()).toBe(true);
    stream.dispose();
  });

  it('answers peer queries', () => {
    expect(device.canAccessPeer(device)).toBe(false);
    for (let ordinal = 1; ordinal < Device.count(); ordinal++) {
      expect(typeof device.canAccessPeer(Device.get(ordinal))).toBe('boolean');
    }
  });

  it('exposes the raw tier with checked results', () => {
    expect(cu.driverGetVersion()).toBeGreaterThanOrEqual(12000);
    expect(cu.deviceGetCount()).toBe(Device.count());
    expect(cu.deviceGetName(device.handle)).toBe(device.name);
    const { least, greatest } = cu.ctxGetStreamPriorityRange();
    expect(greatest).toBeLessThanOrEqual(least);
    expect(() => cu.deviceGetAttribute(DeviceAttribute.WARP_SIZE, 9999)).toThrow(/cuDeviceGetAttribute failed with CUDA_ERROR_INVALID_DEVICE/);
  });
});
