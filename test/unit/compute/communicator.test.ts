/**
 * The Communicator's meaning, on the host transport over CPU GpuComputes (no GPU, no NCCL): every
 * collective and point-to-point call against values computed here, groups, in-place results,
 * and each refusal before anything is allocated or moved. The NCCL transport is checked against
 * the same sums on GPUs (test/gpu/multi/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Communicator } from '../../../src/compute/communicator.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { NcclUniqueId } from '../../../src/nccl/unique-id.js';

let gpus: GpuCompute[];
let comm: Communicator;

beforeAll(async () => {
  gpus = await Promise.all([0, 1, 2].map(() => GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 })));
  comm = await Communicator.create(gpus);
});
afterAll(() => {
  comm.dispose();
  for (const g of gpus) g.dispose();
});

/** Rank r's tensor: [r + 1, r + 2, ...] scaled, of `shape`. */
function perRank(shape: number[], f: (rank: number, i: number) => number, dtype: 'f32' | 'f16' | 'bf16' | 'i32' = 'f32'): Tensor[] {
  const n = shape.reduce((a, d) => a * d, 1);
  return gpus.map((g, r) => (dtype === 'i32' ? g.tensor(Int32Array.from({ length: n }, (_, i) => f(r, i)), shape) : g.tensor(Array.from({ length: n }, (_, i) => f(r, i)), shape, dtype)));
}

const values = (t: Tensor | undefined) => Array.from(t!.toArraySync());
const disposeAll = (...lists: (Tensor | undefined)[][]) => lists.flat().forEach((t) => t?.dispose());
const inUse = () => gpus.map((g) => g.memoryStats().inUseBytes);

describe('Communicator over the host transport', () => {
  it('picks the host transport for CPU GpuComputes and numbers the ranks in order', () => {
    expect(comm.transport).toBe('host');
    expect(comm.size).toBe(3);
    expect(comm.ranks).toEqual([0, 1, 2]);
  });

  it('allReduce: sum, prod, max, min and avg, on every rank', () => {
    const xs = perRank([2, 2], (r, i) => (r + 1) * (i + 1));
    const expected = {
      sum: [6, 12, 18, 24],
      prod: [6, 48, 162, 384],
      max: [3, 6, 9, 12],
      min: [1, 2, 3, 4],
      avg: [2, 4, 6, 8],
    };
    for (const [op, want] of Object.entries(expected)) {
      const ys = comm.allReduce(xs, { op: op as never });
      expect(ys).toHaveLength(3);
      for (const y of ys) {
        expect(y.shape).toEqual([2, 2]);
        expect(values(y)).toEqual(want);
      }
      disposeAll(ys);
    }
    disposeAll(xs);
  });

  it('allReduce of i32 wraps modulo 2^32 as NCCL does, and of f16 rounds once', () => {
    const xs = perRank([2], (r, i) => (i === 0 ? 2 ** 31 - 1 : r - 1), 'i32');
    const ys = comm.allReduce(xs);
    expect(values(ys[1])).toEqual([(3 * (2 ** 31 - 1)) | 0, 0]);
    const hs = perRank([1], (r) => [0.1, 0.2, 0.3][r]!, 'f16');
    const sums = comm.allReduce(hs);
    expect(sums[2]!.dtype).toBe('f16');
    expect(values(sums[2])[0]).toBeCloseTo(0.6, 3);
    disposeAll(xs, ys, hs, sums);
  });

  it('allReduce in place with out: x', () => {
    const xs = perRank([3], (r) => r);
    const ys = comm.allReduce(xs, { out: xs });
    expect(ys[0]).toBe(xs[0]);
    for (const x of xs) expect(values(x)).toEqual([3, 3, 3]);
    disposeAll(xs);
  });

  it('broadcast from a root, reduce to a root, allGather and reduceScatter', () => {
    const xs = perRank([2], (r, i) => 10 * r + i);
    const b = comm.broadcast(xs, { root: 1 });
    for (const y of b) expect(values(y)).toEqual([10, 11]);
    const red = comm.reduce(xs, { root: 2, op: 'max' });
    expect(red[0]).toBeUndefined();
    expect(red[1]).toBeUndefined();
    expect(values(red[2])).toEqual([20, 21]);
    const g = comm.allGather(xs);
    for (const y of g) {
      expect(y.shape).toEqual([3, 2]);
      expect(values(y)).toEqual([0, 1, 10, 11, 20, 21]);
    }
    const big = perRank([6, 2], (r, i) => r * 100 + i);
    const rs = comm.reduceScatter(big);
    rs.forEach((y, r) => {
      expect(y.shape).toEqual([2, 2]);
      // block r of the first axis, summed over the ranks: rows 2r and 2r+1
      expect(values(y)).toEqual([0, 1, 2, 3].map((k) => 300 + 3 * (4 * r + k)));
    });
    disposeAll(xs, b, red, g, big, rs);
  });

  it('send and recv pair up inside a group, in a ring', () => {
    const xs = perRank([2], (r) => r + 1);
    const intos = gpus.map((g) => g.zeros([2]));
    comm.group(() => {
      for (let r = 0; r < 3; r++) {
        comm.send(xs[r]!, { peer: (r + 1) % 3 });
        comm.recv(intos[r]!, { peer: (r + 2) % 3 });
      }
    });
    expect(intos.map((t) => values(t)[0])).toEqual([3, 1, 2]);
    disposeAll(xs, intos);
  });

  it('a group runs its calls together, after fn returns, reading every input first', () => {
    const xs = perRank([1], (r) => r + 1);
    const [sums, copies] = comm.group(() => {
      const s = comm.allReduce(xs);
      const c = comm.broadcast(xs, { root: 2, out: xs });
      return [s, c];
    });
    expect(values(sums[0])).toEqual([6]);
    for (const c of copies) expect(values(c)).toEqual([3]);
    disposeAll(sums, xs);
  });

  it('a group whose fn throws disposes the results its calls made, and moves nothing', () => {
    const xs = perRank([4], (r) => r);
    const before = inUse();
    let made: Tensor[] = [];
    expect(() =>
      comm.group(() => {
        made = comm.allReduce(xs);
        throw new Error('stop');
      }),
    ).toThrow('stop');
    expect(made.every((t) => t.disposed)).toBe(true);
    expect(inUse()).toEqual(before);
    expect(values(xs[1])).toEqual([1, 1, 1, 1]);
    disposeAll(xs);
  });

  it('a group that fails to pair its sends disposes its results and leaves the pools as they were', () => {
    const xs = perRank([2], () => 1);
    const before = inUse();
    expect(() =>
      comm.group(() => {
        comm.allGather(xs);
        comm.send(xs[0]!, { peer: 1 });
      }),
    ).toThrow(/rank 0 sends to rank 1 without a matching receive/);
    expect(inUse()).toEqual(before);
    disposeAll(xs);
  });

  it('moves nothing for empty tensors, and still returns results', () => {
    const xs = gpus.map((g) => g.zeros([0, 3]));
    const ys = comm.allReduce(xs);
    expect(ys.map((y) => y.shape)).toEqual([[0, 3], [0, 3], [0, 3]]);
    disposeAll(xs, ys);
  });
});

describe('Communicator refusals', () => {
  it('refuses bad x before allocating: a bare tensor for three ranks, a tensor of the wrong rank, shapes that differ', () => {
    const xs = perRank([2], () => 1);
    const odd = gpus[2]!.zeros([3]);
    const before = inUse();
    expect(() => comm.allReduce(xs[0]!)).toThrow(/^allReduce: x must be an array of 3 tensors, one per rank this process drives \(ranks 0, 1, 2\), got Tensor/);
    expect(() => comm.allReduce([xs[1]!, xs[0]!, xs[2]!])).toThrow(/^allReduce: x\[0\] Tensor\(f32 \[2\]\) belongs to another GpuCompute/);
    expect(() => comm.allReduce([xs[0]!, xs[1]!, odd])).toThrow('allReduce: x[2] Tensor(f32 [3]) differs from x[0] Tensor(f32 [2]); every rank gives the same shape and dtype');
    expect(() => comm.allGather([xs[0]!, xs[1]!])).toThrow(/^allGather: x must be an array of 3 tensors/);
    expect(inUse()).toEqual(before);
    disposeAll(xs, [odd]);
  });

  it('refuses bad options with the op named: an unknown op, avg of i32, a root outside the ranks, a misspelt key, out of another shape', () => {
    const xs = perRank([2], () => 1);
    const is = perRank([2], () => 1, 'i32');
    const outs = gpus.map((g) => g.zeros([3]));
    expect(() => comm.allReduce(xs, { op: 'mean' as never })).toThrow(/^allReduce: op must be 'sum', 'prod', 'max', 'min' or 'avg', got the string "mean"/);
    expect(() => comm.allReduce(is, { op: 'avg' })).toThrow("allReduce: op 'avg' needs a float tensor, got i32");
    expect(() => comm.broadcast(xs, { root: 3 })).toThrow(/^broadcast: root must be an integer in \[0, 2\], got 3/);
    expect(() => comm.reduce(xs, { rot: 1 } as never)).toThrow(/^reduce: unknown option rot; did you mean 'root'\?/);
    expect(() => comm.allReduce(xs, { out: outs })).toThrow('allReduce: out Tensor(f32 [3]) must be f32 [2] like x');
    expect(() => comm.reduceScatter(xs)).toThrow('reduceScatter: x Tensor(f32 [2]) must have a first axis divisible by the 3 ranks');
    disposeAll(xs, is, outs);
  });

  it('refuses send and recv outside a group where it drives several ranks, and a tensor of no rank', async () => {
    const xs = perRank([2], () => 1);
    expect(() => comm.send(xs[0]!, { peer: 1 })).toThrow(/^send: this communicator drives 3 ranks from this process; make its sends and receives inside comm.group/);
    expect(() => comm.recv(xs[0]!, { peer: 9 })).toThrow(/^recv: peer must be an integer in \[0, 2\], got 9/);
    expect(() => comm.send(xs[0]!, {} as never)).toThrow('send: peer is required (a rank in [0, 2])');
    const stranger = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 });
    using t = stranger.zeros([2]);
    expect(() => comm.send(t, { peer: 0 })).toThrow("send: x Tensor(f32 [2]) belongs to a GpuCompute that is none of this communicator's ranks");
    stranger.dispose();
    disposeAll(xs);
  });

  it('refuses every call once disposed, and disposing twice is fine', async () => {
    const local = await Communicator.create([gpus[0]!]);
    using x = gpus[0]!.ones([2]);
    using y = local.allReduce(x);
    expect(values(y)).toEqual([1, 1]);
    local.dispose();
    local.dispose();
    expect(local.disposed).toBe(true);
    expect(() => local.allReduce(x)).toThrow(DisposedError);
    expect(() => local.group(() => 1)).toThrow(/^group: the Communicator has been disposed/);
  });

  it('refuses what create and join cannot take', async () => {
    await expect(Communicator.create([])).rejects.toThrow(/^Communicator.create: gpus must be a non-empty array of GpuCompute, got \[\]/);
    await expect(Communicator.create([gpus[0]!, gpus[0]!])).rejects.toThrow('Communicator.create: gpus[1] is gpus[0] again; each rank is a GpuCompute of its own');
    await expect(Communicator.create([gpus[0]!, 'cuda:1' as never])).rejects.toThrow(/^Communicator.create: gpus\[1\]: target must be a GpuCompute/);
    await expect(Communicator.create(gpus, { transport: 'nccl' })).rejects.toThrow(/^Communicator.create: transport 'nccl' needs CUDA GpuComputes; gpus\[0\] is cpu:0 .*\(use transport 'host'\)/);
    await expect(Communicator.create(gpus, { transport: 'gloo' as never })).rejects.toThrow(InvalidArgumentError);
    const id = NcclUniqueId.fromBytes(new Uint8Array(128));
    await expect(Communicator.join(gpus[0]!, { id, rank: 0, size: 2 })).rejects.toThrow(/^Communicator.join: NCCL needs a CUDA GpuCompute, got cpu:0/);
    await expect(Communicator.join(gpus[0]!, { id: 'abc' as never, rank: 0, size: 2 })).rejects.toThrow(/^Communicator.join: id must be an NcclUniqueId/);
    await expect(Communicator.join(gpus[0]!, { id, rank: 2, size: 2 })).rejects.toThrow(/^Communicator.join: rank must be an integer in \[0, 1\], got 2/);
  });

  it('refuses a promise-returning group fn, ending the group', () => {
    expect(() => comm.group(async () => 1)).toThrow(/^group: fn returned a promise/);
    using x = gpus[0]!.ones([1]);
    const xs = [x, gpus[1]!.ones([1]), gpus[2]!.ones([1])];
    const ys = comm.allReduce(xs);
    expect(values(ys[0])).toEqual([3]);
    disposeAll(xs, ys);
  });
});
