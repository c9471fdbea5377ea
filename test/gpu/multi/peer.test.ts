/**
 * Peer access and copies between GPUs: the driver's safe tier (canAccessPeer, enablePeerAccess,
 * DeviceBuffer.copyFrom across devices) and x.to(gpu) between GpuComputes, checked against the
 * values sent. Two CUDA GpuComputes on one device (a copy between two pools, ordered across
 * their streams) and the route through the host need only one GPU; the rest skips below two.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { Device } from '../../../src/driver/device.js';
import { DeviceBuffer } from '../../../src/driver/device-buffer.js';
import { Stream } from '../../../src/driver/stream.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { skipReason } from './multi-gpu.js';

const one = skipReason(1, false);
const two = skipReason(2, false);

describe.skipIf(one !== '')(`copies between GpuComputes on one GPU ${one}`, () => {
  let a: GpuCompute;
  let b: GpuCompute;
  let cpu: GpuCompute;
  beforeAll(async () => {
    a = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    b = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    cpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  });
  afterAll(() => {
    a.dispose();
    b.dispose();
    cpu.dispose();
  });

  it('refuses peer access to the same device, which is no peer', () => {
    const device = Device.get(0);
    expect(device.canAccessPeer(device)).toBe(false);
    using ctx = device.primaryContext();
    using other = device.primaryContext();
    expect(() => ctx.enablePeerAccess(other)).toThrow(InvalidArgumentError);
  });

  it('x.to(another GpuCompute on the device) copies after the work queued on x, on the target stream', async () => {
    for (let round = 0; round < 3; round++) {
      // A long chain on a's stream just before the copy: the copy must wait for its end.
      using x0 = a.randn([2048, 2048], { seed: round });
      using x = a.tanh(a.matmul(x0, x0));
      using y = x.to(b);
      using doubled = b.mul(y, 2);
      const [want, got] = await Promise.all([x.toArray(), doubled.toArray()]);
      expect(got.every((v, i) => v === 2 * want[i]!)).toBe(true);
    }
  });

  it('x.to(the CPU) and back goes through the host, bit for bit, every dtype', () => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      using x = a.randn([3, 5], { seed: 7, dtype });
      using c = x.to(cpu);
      using back = c.to(a);
      expect(c.toRawArraySync()).toEqual(x.toRawArraySync());
      expect(back.toRawArraySync()).toEqual(x.toRawArraySync());
    }
  });
});

describe.skipIf(two !== '')(`peer access and copies between two GPUs ${two}`, () => {
  let d0: Device;
  let d1: Device;
  beforeAll(() => {
    d0 = Device.get(0);
    d1 = Device.get(1);
  });

  it('enables peer access where the devices can reach each other, idempotently, and disables it the same way', () => {
    using c0 = d0.primaryContext();
    using c1 = d1.primaryContext();
    const reach = d0.canAccessPeer(d1);
    expect(d1.canAccessPeer(d0)).toBe(reach);
    if (!reach) return; // PCIe topologies without P2P: copies below go through the host
    c0.enablePeerAccess(c1);
    c0.enablePeerAccess(c1);
    c1.enablePeerAccess(c0);
    c0.disablePeerAccess(c1);
    c0.disablePeerAccess(c1);
    c0.enablePeerAccess(c1);
  });

  it('DeviceBuffer.copyFrom copies across devices, synchronously and on a stream of either side', () => {
    using c0 = d0.primaryContext();
    using c1 = d1.primaryContext();
    const n = 1 << 20;
    const host = Float32Array.from({ length: n }, (_, i) => Math.sin(i));
    using src = DeviceBuffer.alloc(c0, 4 * n);
    using dst = DeviceBuffer.alloc(c1, 4 * n);
    src.copyFromHost(host);
    dst.copyFrom(src);
    const back = new Float32Array(n);
    dst.copyToHost(back);
    expect(back).toEqual(host);
    for (const ctx of [c0, c1]) {
      using stream = Stream.create(ctx, { nonBlocking: true });
      dst.fill(0, { dtype: 'f32' });
      dst.copyFrom(src, { stream, byteLength: 4 * 1000 });
      stream.synchronize();
      dst.copyToHost(back);
      expect(back.subarray(0, 1000)).toEqual(host.subarray(0, 1000));
      expect(back[1000]).toBe(0);
    }
    using elsewhere = DeviceBuffer.alloc(c0, 4 * n);
    using s1 = Stream.create(c1);
    expect(() => elsewhere.copyFrom(src, { stream: s1 })).toThrow(/the stream belongs to another context than the buffer/);
  });

  it('x.to(a GpuCompute on the other device) copies device to device, both ways, ordered after pending work', async () => {
    const g0 = await GpuCompute.create({ backend: 'cuda', device: 0, logLevel: 'silent' });
    const g1 = await GpuCompute.create({ backend: 'cuda', device: 1, logLevel: 'silent' });
    try {
      for (const dtype of ['f32', 'bf16', 'i32'] as const) {
        using x = dtype === 'i32' ? g0.tensor(Int32Array.from({ length: 4096 }, (_, i) => i * 7 - 3)) : g0.randn([64, 64], { seed: 1, dtype });
        using y = x.to(g1);
        using z = y.to(g0);
        expect(y.toRawArraySync()).toEqual(x.toRawArraySync());
        expect(z.toRawArraySync()).toEqual(x.toRawArraySync());
      }
      using big = g0.randn([4096, 4096], { seed: 2 });
      using prod = g0.matmul(big, big);
      using moved = prod.to(g1);
      prod.dispose();
      // The source's buffer is free for g0's next op; that op must not overwrite it before the copy read it.
      using again = g0.randn([4096, 4096], { seed: 3 });
      using check = g0.matmul(big, big);
      expect(await moved.toArray()).toEqual(await check.toArray());
      expect(again.size).toBe(4096 * 4096);
    } finally {
      g0.dispose();
      g1.dispose();
    }
  });
});
