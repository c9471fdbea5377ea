/**
 * Every collective on two GPUs through NCCL, checked against sums computed on the host from the
 * inputs: the GpuCompute Communicator (ncclCommInitAll) for each call, dtype and reduction, groups
 * of many calls, send/recv both ways, and an all-reduce on a side stream overlapping compute;
 * and the safe tier's NcclCommunicator on DeviceBuffers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Communicator } from '../../../src/compute/communicator.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { Device } from '../../../src/driver/device.js';
import { DeviceBuffer } from '../../../src/driver/device-buffer.js';
import { Stream } from '../../../src/driver/stream.js';
import { NcclCommunicator } from '../../../src/nccl/communicator.js';
import { ncclGroup } from '../../../src/nccl/group.js';
import { skipReason } from './multi-gpu.js';

const skip = skipReason(2, true);

/** Tolerance of a sum of two values rounded to `dtype`. */
const TOL = { f32: 1e-6, f16: 2e-3, bf16: 1.6e-2, i32: 0 } as const;

function close(got: ArrayLike<number>, want: ArrayLike<number>, tol: number): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (Math.abs(g - w) > tol * Math.max(1, Math.abs(w))) expect.fail(`element ${i}: ${g} where ${w} was expected (tolerance ${tol})`);
  }
}

describe.skipIf(skip !== '')(`collectives on two GPUs through NCCL ${skip}`, () => {
  let gpus: GpuCompute[];
  let comm: Communicator;
  beforeAll(async () => {
    gpus = [await GpuCompute.create({ backend: 'cuda', device: 0, logLevel: 'silent' }), await GpuCompute.create({ backend: 'cuda', device: 1, logLevel: 'silent' })];
    comm = await Communicator.create(gpus);
  });
  afterAll(() => {
    comm.dispose();
    for (const g of gpus) g.dispose();
  });

  const inputs = (shape: number[], dtype: 'f32' | 'f16' | 'bf16' | 'i32', seed: number): Tensor[] =>
    gpus.map((g, r) =>
      dtype === 'i32'
        ? g.tensor(Int32Array.from({ length: shape.reduce((a, d) => a * d, 1) }, (_, i) => ((i * 31 + r * 17 + seed) % 201) - 100), shape)
        : g.randn(shape, { seed: seed + r, dtype }),
    );

  it('uses NCCL, rank i on device i', () => {
    expect(comm.transport).toBe('nccl');
    expect(comm.ranks).toEqual([0, 1]);
  });

  for (const dtype of ['f32', 'f16', 'bf16', 'i32'] as const) {
    it(`allReduce of ${dtype}, every reduction, against host sums`, () => {
      const xs = inputs([257, 33], dtype, 1);
      const [a, b] = xs.map((x) => Array.from(x.toArraySync()));
      const ops = dtype === 'i32' ? (['sum', 'prod', 'max', 'min'] as const) : (['sum', 'prod', 'max', 'min', 'avg'] as const);
      for (const op of ops) {
        const want = a!.map((v, i) => {
          const w = b![i]!;
          return op === 'sum' ? v + w : op === 'prod' ? v * w : op === 'max' ? Math.max(v, w) : op === 'min' ? Math.min(v, w) : (v + w) / 2;
        });
        const ys = comm.allReduce(xs, { op });
        for (const y of ys) close(y.toArraySync(), want, TOL[dtype]);
        ys.forEach((y) => y.dispose());
      }
      xs.forEach((x) => x.dispose());
    });
  }

  it('broadcast from each root, reduce to each root, allGather, reduceScatter', () => {
    const xs = inputs([1000], 'f32', 5);
    const hosts = xs.map((x) => Array.from(x.toArraySync()));
    for (const root of [0, 1]) {
      const ys = comm.broadcast(xs, { root });
      for (const y of ys) expect(Array.from(y.toArraySync())).toEqual(hosts[root]);
      ys.forEach((y) => y.dispose());
      const rs = comm.reduce(xs, { root });
      expect(rs[1 - root]).toBeUndefined();
      close(rs[root]!.toArraySync(), hosts[0]!.map((v, i) => v + hosts[1]![i]!), TOL.f32);
      rs[root]!.dispose();
    }
    const gs = comm.allGather(xs);
    for (const g of gs) {
      expect(g.shape).toEqual([2, 1000]);
      expect(Array.from(g.toArraySync())).toEqual([...hosts[0]!, ...hosts[1]!]);
    }
    const ss = comm.reduceScatter(xs);
    ss.forEach((s, r) => {
      expect(s.shape).toEqual([500]);
      close(s.toArraySync(), hosts[0]!.map((v, i) => v + hosts[1]![i]!).slice(500 * r, 500 * (r + 1)), TOL.f32);
    });
    [...xs, ...gs, ...ss].forEach((t) => t.dispose());
  });

  it('a group of many all-reduces (a bucket of gradients) and sends both ways', () => {
    const grads = Array.from({ length: 20 }, (_, k) => inputs([k + 1, 64], 'f32', 100 + k));
    const sums = comm.group(() => grads.map((pair) => comm.allReduce(pair, { op: 'avg', out: pair })));
    for (const [a, b] of sums) expect(a!.toArraySync()).toEqual(b!.toArraySync());
    const xs = inputs([77], 'f32', 9);
    const intos = gpus.map((g) => g.zeros([77]));
    comm.group(() => {
      comm.send(xs[0]!, { peer: 1 });
      comm.recv(intos[1]!, { peer: 0 });
      comm.send(xs[1]!, { peer: 0 });
      comm.recv(intos[0]!, { peer: 1 });
    });
    expect(intos[1]!.toArraySync()).toEqual(xs[0]!.toArraySync());
    expect(intos[0]!.toArraySync()).toEqual(xs[1]!.toArraySync());
    [...grads.flat(), ...xs, ...intos].forEach((t) => t.dispose());
  });

  it('an all-reduce on a side stream overlaps compute on the main one, and later ops see its result', async () => {
    const side = gpus.map((g) => g.createStream());
    const main = gpus.map((g) => g.currentStream());
    const xs = gpus.map((g, r) => g.full([1 << 22], r + 1));
    const work = gpus.map((g) => g.randn([2048, 2048], { seed: 4 }));
    gpus.forEach((g, r) => g.setStream(side[r]!));
    comm.allReduce(xs, { out: xs });
    gpus.forEach((g, r) => g.setStream(main[r]!));
    const products = gpus.map((g, r) => g.matmul(work[r]!, work[r]!));
    const after = gpus.map((g, r) => g.add(xs[r]!, 1));
    for (const t of after) {
      const v = await t.toArray();
      expect(v[0]).toBe(4);
      expect(v[v.length - 1]).toBe(4);
    }
    [...xs, ...work, ...products, ...after].forEach((t) => t.dispose());
  });
});

describe.skipIf(skip !== '')(`NcclCommunicator on two GPUs, DeviceBuffers ${skip}`, () => {
  it('ncclCommInitAll of two devices: allReduce, allGather and reduceScatter in one group', () => {
    const devices = [Device.get(0), Device.get(1)];
    const comms = NcclCommunicator.initAll(devices);
    const streams = comms.map((c) => Stream.create(c.context, { nonBlocking: true }));
    try {
      const n = 1024;
      const host = comms.map((_, r) => Float32Array.from({ length: n }, (_, i) => r * 1000 + i));
      const send = comms.map((c, r) => {
        const b = DeviceBuffer.alloc(c.context, 4 * n);
        b.copyFromHost(host[r]!);
        return b;
      });
      const sum = comms.map((c) => DeviceBuffer.alloc(c.context, 4 * n));
      const gathered = comms.map((c) => DeviceBuffer.alloc(c.context, 8 * n));
      const scattered = comms.map((c) => DeviceBuffer.alloc(c.context, 2 * n));
      ncclGroup(() => {
        comms.forEach((c, r) => {
          c.allReduce(send[r]!, sum[r]!, { dtype: 'f32', stream: streams[r]! });
          c.allGather(send[r]!, gathered[r]!, { dtype: 'f32', stream: streams[r]! });
          c.reduceScatter(send[r]!, scattered[r]!, { dtype: 'f32', stream: streams[r]! });
        });
      });
      streams.forEach((s) => s.synchronize());
      const want = host[0]!.map((v, i) => v + host[1]![i]!);
      comms.forEach((_, r) => {
        const s = new Float32Array(n);
        sum[r]!.copyToHost(s);
        expect(s).toEqual(want);
        const g = new Float32Array(2 * n);
        gathered[r]!.copyToHost(g);
        expect(Array.from(g)).toEqual([...host[0]!, ...host[1]!]);
        const sc = new Float32Array(n / 2);
        scattered[r]!.copyToHost(sc);
        expect(sc).toEqual(want.subarray((r * n) / 2, ((r + 1) * n) / 2));
      });
      expect(() => comms[0]!.allReduce(send[1]!, sum[0]!, { dtype: 'f32' })).toThrow('NcclCommunicator.allReduce: send is memory of device 1, this rank is on device 0');
      expect(() => comms[0]!.allReduce(send[0]!, sum[0]!, { dtype: 'f32', stream: streams[1]! })).toThrow(/the stream belongs to device 1, this rank is on device 0/);
      [...send, ...sum, ...gathered, ...scattered].forEach((b) => b.dispose());
    } finally {
      streams.forEach((s) => s.dispose());
      comms.forEach((c) => c.dispose());
    }
  });
});
