/**
 * NCCL on one GPU: a communicator of one rank through every binding (ncclCommInitAll and
 * ncclGetUniqueId + ncclCommInitRank, each collective and dtype, send/recv to itself in a group,
 * the queries, destroy and abort), the error paths (NCCL's own refusals as NcclError with its
 * message, the safe tier's checks before NCCL), and the GpuCompute Communicator on NCCL giving
 * what the host transport gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Communicator } from '../../../src/compute/communicator.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { Device } from '../../../src/driver/device.js';
import { DeviceBuffer } from '../../../src/driver/device-buffer.js';
import { Stream } from '../../../src/driver/stream.js';
import type { Context } from '../../../src/driver/context.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { NcclCommunicator } from '../../../src/nccl/communicator.js';
import { ncclGroup } from '../../../src/nccl/group.js';
import { NcclError } from '../../../src/nccl/nccl-error.js';
import * as raw from '../../../src/nccl/raw/index.js';
import { NcclUniqueId } from '../../../src/nccl/unique-id.js';
import { ncclVersion } from '../../../src/nccl/version.js';
import { skipReason } from './multi-gpu.js';

const skip = skipReason(1, true);

describe.skipIf(skip !== '')(`NCCL with one rank on one GPU ${skip}`, () => {
  let device: Device;
  let ctx: Context;
  let stream: Stream;

  beforeAll(() => {
    device = Device.get(0);
    ctx = device.primaryContext();
    stream = Stream.create(ctx, { nonBlocking: true });
  });
  afterAll(() => {
    stream.dispose();
    ctx.dispose();
  });

  const f32 = (values: number[]) => {
    const b = DeviceBuffer.alloc(ctx, 4 * values.length);
    b.copyFromHost(Float32Array.from(values));
    return b;
  };
  const read = (b: DeviceBuffer, n = b.byteLength / 4) => {
    const out = new Float32Array(n);
    stream.synchronize();
    b.copyToHost(out, { byteOffset: 0 });
    return Array.from(out);
  };

  it('reports its version and keeps NVLink multicast off', () => {
    const v = ncclVersion();
    expect(v.major).toBe(2);
    expect(v.minor).toBeGreaterThanOrEqual(10);
    expect(process.env.NCCL_NVLS_ENABLE).toBe('0');
  });

  it('ncclCommInitAll of one device: every collective of one rank is the identity, queued on a stream', () => {
    const [comm] = NcclCommunicator.initAll([device]);
    try {
      expect(comm!.rank).toBe(0);
      expect(comm!.size).toBe(1);
      expect(comm!.query()).toEqual({ size: 1, rank: 0, device: 0 });
      using a = f32([1, 2, 3, 4]);
      using b = f32([0, 0, 0, 0]);
      for (const op of ['sum', 'prod', 'max', 'min', 'avg'] as const) {
        b.fill(0, { dtype: 'f32' });
        comm!.allReduce(a, b, { dtype: 'f32', op, stream });
        expect(read(b)).toEqual([1, 2, 3, 4]);
      }
      b.fill(0, { dtype: 'f32' });
      comm!.broadcast(a, b, { dtype: 'f32', root: 0, stream });
      expect(read(b)).toEqual([1, 2, 3, 4]);
      b.fill(0, { dtype: 'f32' });
      comm!.reduce(a, b, { dtype: 'f32', root: 0, op: 'max', stream });
      expect(read(b)).toEqual([1, 2, 3, 4]);
      b.fill(0, { dtype: 'f32' });
      comm!.allGather(a, b, { dtype: 'f32', stream });
      expect(read(b)).toEqual([1, 2, 3, 4]);
      b.fill(0, { dtype: 'f32' });
      comm!.reduceScatter(a, b, { dtype: 'f32', stream, count: 2 });
      expect(read(b)).toEqual([1, 2, 0, 0]);
      b.fill(0, { dtype: 'f32' });
      comm!.allReduce(a, a, { dtype: 'f32', stream, count: 2 });
      expect(read(a)).toEqual([1, 2, 3, 4]);
      expect(comm!.asyncError()).toBeUndefined();
    } finally {
      comm!.dispose();
    }
    expect(comm!.disposed).toBe(true);
    comm!.dispose();
  });

  it('other dtypes: i32, f16 bits, bf16 bits, u8 and f64 move unchanged', () => {
    const [comm] = NcclCommunicator.initAll([device]);
    try {
      for (const [dtype, bytes] of [['i32', 4], ['f16', 2], ['bf16', 2], ['u8', 1], ['f64', 8], ['i64', 8]] as const) {
        const n = 64;
        const host = Uint8Array.from({ length: n * bytes }, (_, i) => (i * 37 + 11) & 0x7f);
        using a = DeviceBuffer.alloc(ctx, host.byteLength);
        using b = DeviceBuffer.alloc(ctx, host.byteLength);
        a.copyFromHost(host);
        comm!.broadcast(a, b, { dtype, root: 0, stream });
        stream.synchronize();
        const back = new Uint8Array(host.byteLength);
        b.copyToHost(back);
        expect(back, dtype).toEqual(host);
      }
    } finally {
      comm!.dispose();
    }
  });

  it('ncclGetUniqueId + ncclCommInitRank with one rank; send and recv to itself inside a group', () => {
    const id = NcclUniqueId.create();
    const comm = NcclCommunicator.initRank(device, { id: NcclUniqueId.fromBase64(id.toBase64()), rank: 0, size: 1 });
    try {
      using a = f32([5, 6, 7]);
      using b = f32([0, 0, 0]);
      ncclGroup(() => {
        comm.send(a, { dtype: 'f32', peer: 0, stream });
        comm.recv(b, { dtype: 'f32', peer: 0, stream });
      });
      expect(read(b)).toEqual([5, 6, 7]);
    } finally {
      comm.abort();
    }
    expect(comm.disposed).toBe(true);
    expect(() => comm.handle).toThrow(DisposedError);
  });

  it("turns NCCL's own refusals into NcclError with its message, and checks what it can before NCCL", () => {
    const [comm] = NcclCommunicator.initAll([device]);
    try {
      using a = f32([1, 2]);
      let error: unknown;
      try {
        raw.allReduce(a.ptr, a.ptr, 2, 99, 0, comm!.handle, 0n);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(NcclError);
      expect((error as NcclError).resultName).toBe('ncclInvalidArgument');
      expect((error as NcclError).message).toMatch(/^ncclAllReduce failed with ncclInvalidArgument \(4\): /);
      expect(() => raw.commInitAll([0, 0])).toThrow(NcclError);
      expect(() => comm!.allReduce(a, a, { dtype: 'f32', count: 3 })).toThrow(new InvalidArgumentError('NcclCommunicator.allReduce: send holds 8 bytes, the call needs 12'));
      expect(() => comm!.broadcast(a, a, { dtype: 'f32', root: 1 })).toThrow('NcclCommunicator.broadcast: root must be a rank in [0, 0], got 1');
      expect(() => comm!.allReduce(a, a, { dtype: 'f128' as never })).toThrow(/unknown dtype f128/);
      expect(() => comm!.allReduce(a, a, { dtype: 'f32', op: 'mean' as never })).toThrow(/unknown op mean/);
      expect(() => NcclCommunicator.initAll([device, device])).toThrow(/device 0 is listed twice/);
    } finally {
      comm!.dispose();
    }
  });
});

describe.skipIf(skip !== '')(`Communicator on NCCL with one CUDA GpuCompute ${skip}`, () => {
  let gpu: GpuCompute;
  beforeAll(async () => {
    gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
  });
  afterAll(() => gpu.dispose());

  it('gives what the host transport gives, for every call and dtype', async () => {
    using nccl = await Communicator.create([gpu]);
    using host = await Communicator.create([gpu], { transport: 'host' });
    expect(nccl.transport).toBe('nccl');
    for (const dtype of ['f32', 'f16', 'bf16', 'i32'] as const) {
      using x = dtype === 'i32' ? gpu.tensor(Int32Array.from({ length: 24 }, (_, i) => i - 7), [4, 6]) : gpu.randn([4, 6], { seed: 3, dtype });
      const calls = [
        (c: Communicator) => c.allReduce(x, { op: dtype === 'i32' ? 'prod' : 'avg' }),
        (c: Communicator) => c.broadcast(x),
        (c: Communicator) => c.reduce(x, { op: 'max' })!,
        (c: Communicator) => c.allGather(x),
        (c: Communicator) => c.reduceScatter(x, { op: 'min' }),
      ];
      for (const call of calls) {
        using a = call(nccl);
        using b = call(host);
        expect(a.shape).toEqual(b.shape);
        expect(a.toRawArraySync()).toEqual(b.toRawArraySync());
      }
    }
  });

  it('joins a communicator of one rank by id, and runs an in-place all-reduce on a side stream', async () => {
    const comm = await Communicator.join(gpu, { id: NcclUniqueId.create(), rank: 0, size: 1 });
    try {
      using x = gpu.full([1 << 20], 2);
      const main = gpu.currentStream();
      const side = gpu.createStream();
      gpu.setStream(side);
      comm.allReduce(x, { out: x });
      gpu.setStream(main);
      using y = gpu.mul(x, 3);
      const values = await y.toArray();
      expect(values[0]).toBe(6);
      expect(values[values.length - 1]).toBe(6);
      using r = gpu.zeros([3]);
      using s = gpu.tensor([1, 2, 3]);
      comm.group(() => {
        comm.send(s, { peer: 0 });
        comm.recv(r, { peer: 0 });
      });
      expect(Array.from(r.toArraySync())).toEqual([1, 2, 3]);
    } finally {
      comm.dispose();
    }
  });

  it('refuses two ranks on one device, and a collective recorded in a graph', async () => {
    const other = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    try {
      await expect(Communicator.create([gpu, other])).rejects.toThrow(/are both CUDA device 0; NCCL takes each device once/);
      const host = await Communicator.create([gpu, other], { transport: 'host' });
      using a = gpu.ones([4]);
      using b = other.ones([4]);
      const [s] = host.allReduce([a, b]);
      expect(Array.from(s!.toArraySync())).toEqual([2, 2, 2, 2]);
      s!.dispose();
      host.dispose();
      const comm = await Communicator.create([gpu]);
      using x = gpu.ones([4]);
      expect(() => gpu.capture((t) => comm.allReduce(t), [x])).toThrow(/collectives cannot be recorded in a graph/);
      comm.dispose();
    } finally {
      other.dispose();
    }
  });
});
