/**
 * DataParallel on the host transport over 2 and 3 CPU GpuComputes in one process: after each
 * backward every replica holds, bit for bit, the same gradients, equal to f32 rounding to one
 * GpuCompute's over the whole batch (an MLP and a GRU); AdamW steps keep the replicas identical
 * and on the single run's path; buckets of one parameter, of all and in between give the same
 * gradients; gradients accumulate over two backwards; each bucket's all-reduce is queued on the
 * side streams while the last replica's backward still has work to queue; parameters without a
 * gradient are skipped alike; a gradient the backward still reads is reduced from a copy; where
 * other processes drive ranks (a stand-in transport plays them), the parameters become rank 0's;
 * and what it refuses, and what a failure leaves (no gradient changed, nothing allocated), at each
 * allocation and all-reduce group in turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CollectiveTransport } from '../../../src/compute/backend/collectives.js';
import { Communicator } from '../../../src/compute/communicator.js';
import { DataParallel } from '../../../src/compute/data-parallel.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Session } from '../../../src/compute/tensor/session.js';
import { Tensor } from '../../../src/compute/tensor/tensor.js';
import { CaptureError, DisposedError, InvalidArgumentError, OutOfMemoryError } from '../../../src/errors.js';
import { freshSeed, relError } from './helpers.js';
import {
  gradOf,
  GRU,
  host,
  makeBatch,
  MLP,
  mismatches,
  MODELS,
  pair,
  parallelBackward,
  rankLosses,
  singleBackward,
  trainBoth,
} from './data-parallel-cases.js';

const cpu = () => GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 });

let gpus: GpuCompute[];
let ref: GpuCompute;
/** Communicators over the first 2 and all 3 GpuComputes. */
const comms = new Map<number, Communicator>();

beforeAll(async () => {
  gpus = await Promise.all([0, 1, 2].map(cpu));
  ref = await cpu();
  for (const n of [2, 3]) comms.set(n, await Communicator.create(gpus.slice(0, n)));
});
afterAll(() => {
  for (const c of comms.values()) c.dispose();
  for (const g of [...gpus, ref]) g.dispose();
});

const usage = () => gpus.map((g) => g.memoryStats().inUseBytes);

for (const n of [2, 3]) {
  describe(`${n} ranks`, () => {
    for (const model of MODELS) {
      it(`${model.name}: every replica gets the gradient of the mean loss over the global batch`, () => {
        const seed = freshSeed();
        const p = pair(comms.get(n)!, gpus[0]!, ref, model, seed);
        const batch = makeBatch(model, 4 * n, seed + 7);
        parallelBackward(gpus.slice(0, n), p.dp, model, batch);
        singleBackward(ref, model, p.refParams, batch);
        expect(mismatches(n, p.dp, p.refParams, gradOf), `seed ${seed}`).toEqual([]);
        p.dispose();
      });

      it(`${model.name}: AdamW steps keep the replicas identical and on the single run's path`, () => {
        const seed = freshSeed();
        const p = pair(comms.get(n)!, gpus[0]!, ref, model, seed);
        trainBoth(gpus.slice(0, n), ref, model, p, 4, seed);
        expect(mismatches(n, p.dp, p.refParams, host), `after 4 steps (seed ${seed})`).toEqual([]);
        p.dispose();
      });
    }
  });
}

describe('replicas', () => {
  it('the first rank keeps the given tensors; the others get copies that require grad where the originals do', () => {
    using a = gpus[0]!.tensor([1, 2, 3]).requiresGrad_();
    using frozen = gpus[0]!.tensor([4, 5]);
    const before = usage();
    const dp = new DataParallel(comms.get(3)!, [a, frozen]);
    expect(dp.ranks).toEqual([0, 1, 2]);
    expect(dp.parameters(0)).toEqual([a, frozen]);
    expect(dp.parameters(0)[0]).toBe(a);
    for (const r of [1, 2]) {
      const [ra, rf] = dp.parameters(r) as [Tensor, Tensor];
      expect(ra.owner).toBe(gpus[r]!.session);
      expect(host(ra)).toEqual([1, 2, 3]);
      expect([ra.requiresGrad, rf.requiresGrad]).toEqual([true, false]);
      expect(host(rf)).toEqual([4, 5]);
    }
    // A scope does not take the copies: they are the DataParallel's.
    gpus[1]!.scope(() => undefined);
    expect(dp.parameters(1)[0]!.disposed).toBe(false);
    dp.dispose();
    expect(dp.disposed).toBe(true);
    dp.dispose();
    expect(a.disposed, 'the first rank keeps its own').toBe(false);
    expect(usage(), 'the copies are freed').toEqual(before);
  });

  it('buckets fill from the last parameter: one per parameter at 1 byte, one for all when huge, by size in between; the gradients are the same', () => {
    const seed = freshSeed();
    const batch = makeBatch(MLP, 6, seed + 3);
    // MLP parameter bytes, in order: 160, 32, 192, 24, 72, 12; a bucket closes once it holds 100.
    const layouts: [number, number[][]][] = [
      [1, [[5], [4], [3], [2], [1], [0]]],
      [2 ** 40, [[5, 4, 3, 2, 1, 0]]],
      [100, [[5, 4, 3], [2], [1, 0]]],
    ];
    const results: number[][][] = [];
    for (const [bucketBytes, buckets] of layouts) {
      const p = pair(comms.get(3)!, gpus[0]!, ref, MLP, seed, { bucketBytes });
      expect(p.dp.buckets).toEqual(buckets);
      parallelBackward(gpus, p.dp, MLP, batch);
      results.push(p.dp.parameters(2).map((t) => host(t.grad)));
      p.dispose();
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    const dflt = pair(comms.get(2)!, gpus[0]!, ref, MLP, seed);
    expect(dflt.dp.buckets, 'the default, 25 MiB: one bucket here').toEqual([[5, 4, 3, 2, 1, 0]]);
    dflt.dispose();
  });

  it('gradients accumulate over two backwards before a step', () => {
    const seed = freshSeed();
    const p = pair(comms.get(3)!, gpus[0]!, ref, GRU, seed, { bucketBytes: 64 });
    for (const k of [0, 1]) {
      const batch = makeBatch(GRU, 9, seed + 10 * k);
      parallelBackward(gpus, p.dp, GRU, batch);
      singleBackward(ref, GRU, p.refParams, batch);
    }
    expect(mismatches(3, p.dp, p.refParams, gradOf), `two backwards (seed ${seed})`).toEqual([]);
    p.dispose();
  });

  it('each bucket is all-reduced on the side streams while the last replica still has backward work to queue', () => {
    const seed = freshSeed();
    const comm = comms.get(2)!;
    const p = pair(comm, gpus[0]!, ref, MLP, seed, { bucketBytes: 1 });
    const losses = rankLosses(gpus.slice(0, 2), p.dp, MLP, makeBatch(MLP, 8, seed));
    const main = gpus.map((g) => g.currentStream());
    const last = gpus[1]!.backend as unknown as { matmul: (...args: unknown[]) => unknown };
    const matmul = last.matmul;
    let matmuls = 0;
    last.matmul = (...args: unknown[]) => {
      matmuls++;
      return matmul.apply(gpus[1]!.backend, args);
    };
    const allReduce = comm.allReduce.bind(comm) as (x: Tensor[], o: unknown) => Tensor[];
    const calls: { matmuls: number; onSide: boolean[] }[] = [];
    comm.allReduce = ((x: Tensor[], o: unknown) => {
      calls.push({ matmuls, onSide: gpus.slice(0, 2).map((g, r) => g.currentStream() !== main[r]) });
      return allReduce(x, o);
    }) as typeof comm.allReduce;
    try {
      p.dp.backward(losses);
    } finally {
      delete (comm as { allReduce?: unknown }).allReduce;
      last.matmul = matmul;
    }
    expect(calls, 'one all-reduce per parameter').toHaveLength(6);
    expect(calls.every((c) => c.onSide.every(Boolean)), 'queued on the side streams').toBe(true);
    expect(calls[0]!.matmuls, 'the first bucket before the last replica has queued its matmuls').toBeLessThan(matmuls);
    expect(gpus.map((g) => g.currentStream()), 'the main streams are current again').toEqual(main);
    for (const l of losses) l.dispose();
    p.dispose();
  });

  it('a parameter no loss reaches gets no gradient on any rank; one that only some reach gets zeros from the others', () => {
    const comm = comms.get(2)!;
    using w = gpus[0]!.tensor([1, 2]).requiresGrad_();
    using unused = gpus[0]!.tensor([3]).requiresGrad_();
    using some = gpus[0]!.tensor([5, 6]).requiresGrad_();
    using dp = new DataParallel(comm, [w, unused, some], { bucketBytes: 1 });
    const [l0, l1] = [0, 1].map((r) => {
      const [rw, , rs] = dp.parameters(r) as [Tensor, Tensor, Tensor];
      const g = gpus[r]!;
      // rank 0: sum(w²)·1 + sum(some); rank 1: sum(w²)·2
      return g.scope(() => (r === 0 ? g.add(g.sum(g.mul(rw, rw)), g.sum(rs)) : g.mul(g.sum(g.mul(rw, rw)), 2)));
    }) as [Tensor, Tensor];
    dp.backward([l0, l1]);
    for (const r of [0, 1]) {
      const [rw, ru, rs] = dp.parameters(r) as [Tensor, Tensor, Tensor];
      expect(host(rw.grad), `rank ${r}: (2w + 4w) / 2`).toEqual([3, 6]);
      expect(ru.grad, `rank ${r}: unused`).toBeUndefined();
      expect(host(rs.grad), `rank ${r}: (1 + 0) / 2`).toEqual([0.5, 0.5]);
    }
    l0.dispose();
    l1.dispose();
  });

  it('a gradient whose storage the rest of the backward still reads is all-reduced from a copy', () => {
    const comm = comms.get(2)!;
    const xs = [[0.5, -1, 2, 0.25], [1.5, 0.5, -0.75, -2]];
    // add(w, tanh(v·x)) gives its output gradient to w and, as a view, to tanh's backward, which
    // runs after w's all-reduce is queued (w's bucket is first): it must read its own rank's values.
    const model = (g: GpuCompute, v: Tensor, w: Tensor, x: number[]) => {
      const y = g.add(w, g.tanh(g.mul(v, g.tensor(x))));
      return g.sum(g.mul(y, y));
    };
    using v = gpus[0]!.tensor([0.3, -0.2, 0.1, 0.4]).requiresGrad_();
    using w = gpus[0]!.tensor([0.5, 0.6, -0.7, 0.8]).requiresGrad_();
    using dp = new DataParallel(comm, [v, w], { bucketBytes: 1 });
    const losses = [0, 1].map((r) => gpus[r]!.scope(() => model(gpus[r]!, dp.parameters(r)[0]!, dp.parameters(r)[1]!, xs[r]!)));
    dp.backward(losses);
    using rv = ref.tensor(host(v)).requiresGrad_();
    using rw = ref.tensor(host(w)).requiresGrad_();
    ref.scope(() => ref.div(ref.add(model(ref, rv, rw, xs[0]!), model(ref, rv, rw, xs[1]!)), 2).backward());
    for (const r of [0, 1]) {
      const [pv, pw] = dp.parameters(r) as [Tensor, Tensor];
      expect(relError(host(pv.grad), host(rv.grad)), `rank ${r}: v`).toBeLessThan(1e-6);
      expect(relError(host(pw.grad), host(rw.grad)), `rank ${r}: w`).toBeLessThan(1e-6);
    }
    for (const l of losses) l.dispose();
  });

  it('a leaf that is not a parameter gets its own rank’s gradient', () => {
    const comm = comms.get(2)!;
    using w = gpus[0]!.tensor([2]).requiresGrad_();
    using dp = new DataParallel(comm, [w]);
    const inputs = [gpus[0]!.tensor([3]).requiresGrad_(), gpus[1]!.tensor([5]).requiresGrad_()];
    const losses = [0, 1].map((r) => gpus[r]!.scope(() => gpus[r]!.sum(gpus[r]!.mul(dp.parameters(r)[0]!, inputs[r]!))));
    dp.backward(losses);
    expect(host(dp.parameters(1)[0]!.grad), 'the parameter: (3 + 5) / 2').toEqual([4]);
    expect(inputs.map((x) => host(x.grad)), 'the inputs: their own').toEqual([[2], [2]]);
    for (const t of [...inputs, ...losses]) t.dispose();
  });

  it('one rank: the loss may be a bare tensor and parameters() needs no rank', async () => {
    const solo = await Communicator.create([gpus[2]!]);
    using w = gpus[2]!.tensor([1, -1]).requiresGrad_();
    using dp = new DataParallel(solo, [w]);
    expect(dp.parameters()).toEqual([w]);
    const loss = gpus[2]!.scope(() => gpus[2]!.sum(gpus[2]!.mul(w, w)));
    dp.backward(loss);
    expect(host(w.grad)).toEqual([2, -2]);
    loss.dispose();
    solo.dispose();
  });
});

describe('where other processes drive ranks', () => {
  /**
   * This process as rank 1 of 2 over gpus[2], the other rank played by a stand-in transport: its
   * broadcasts from rank 0 deliver `rootValues`, and its all-reduces average with a rank that
   * contributes zeros.
   */
  function joined(rootValues: Float32Array[]): { comm: Communicator; calls: string[] } {
    const backend = gpus[2]!.backend;
    const calls: string[] = [];
    let broadcasts = 0;
    const transport: CollectiveTransport = {
      kind: 'host',
      size: 2,
      ranks: [1],
      run(list) {
        for (const c of list) {
          calls.push(c.kind);
          if (c.kind === 'broadcast') {
            backend.write(c.recv!.buffer, rootValues[broadcasts++]!, c.recv!.offset * 4);
          } else {
            const mine = new Float32Array(c.count);
            backend.read(c.send!.buffer, mine, c.send!.offset * 4);
            backend.write(c.recv!.buffer, mine.map((v) => v / 2), c.recv!.offset * 4);
          }
        }
      },
      dispose() {},
      abort() {},
    };
    const make = Communicator as unknown as new (sessions: readonly Session[], transport: CollectiveTransport) => Communicator;
    return { comm: new make([gpus[2]!.session], transport), calls };
  }

  it('the parameters become rank 0’s in place, a graph recorded before refuses its backward, and the backward all-reduces in buckets', () => {
    const { comm, calls } = joined([Float32Array.from([7, 8]), Float32Array.from([9])]);
    using w = gpus[2]!.tensor([1, 2]).requiresGrad_();
    using b = gpus[2]!.tensor([3]).requiresGrad_();
    using stale = gpus[2]!.scope(() => gpus[2]!.sum(gpus[2]!.mul(w, w)));
    using dp = new DataParallel(comm, [w, b], { bucketBytes: 1 });
    expect(calls).toEqual(['broadcast', 'broadcast']);
    expect(dp.ranks).toEqual([1]);
    expect(dp.parameters()).toEqual([w, b]);
    expect(dp.parameters(1)).toEqual([w, b]);
    expect(() => dp.parameters(0)).toThrow(/^DataParallel.parameters: rank 0 is not one this process drives \(ranks 1\)/);
    expect([host(w), host(b)]).toEqual([[7, 8], [9]]);
    expect(() => dp.backward(stale)).toThrow(/^backward: a Tensor\(f32 \[2\]\) that mul saved for its gradient was modified in place/);
    const loss = gpus[2]!.scope(() => gpus[2]!.add(gpus[2]!.sum(gpus[2]!.mul(w, w)), gpus[2]!.sum(b)));
    dp.backward(loss);
    expect(calls.slice(2)).toEqual(['allReduce', 'allReduce']);
    expect([host(w.grad), host(b.grad)], 'averaged with a rank of zeros').toEqual([[7, 8], [0.5]]);
    loss.dispose();
    comm.dispose();
  });
});

describe('refusals', () => {
  it('the constructor: communicator, parameters and options, allocating nothing', () => {
    const comm = comms.get(2)!;
    using a = gpus[0]!.tensor([1, 2]).requiresGrad_();
    using elsewhere = gpus[1]!.tensor([1]).requiresGrad_();
    using i32 = gpus[0]!.tensor(Int32Array.from([1]));
    using derived = gpus[0]!.scope(() => gpus[0]!.mul(a, 2));
    const gone = gpus[0]!.tensor([1]);
    gone.dispose();
    const before = usage();
    const cases: [() => unknown, new (...args: never[]) => Error, RegExp][] = [
      [() => new DataParallel({} as never, [a]), InvalidArgumentError, /^DataParallel: comm must be a Communicator, got Object/],
      [() => new DataParallel(comm, [] as never), InvalidArgumentError, /^DataParallel: params must be a non-empty array of tensors, got \[\]/],
      [() => new DataParallel(comm, a as never), InvalidArgumentError, /^DataParallel: params must be a non-empty array of tensors/],
      [() => new DataParallel(comm, [a, 3] as never), InvalidArgumentError, /^DataParallel: params\[1\] must be a Tensor, got 3/],
      [() => new DataParallel(comm, [elsewhere]), InvalidArgumentError, /^DataParallel: params\[0\] Tensor\(f32 \[1\]\) is not on the GpuCompute of rank 0, the first rank this process drives/],
      [() => new DataParallel(comm, [i32]), InvalidArgumentError, /^DataParallel: params\[0\] must be a float tensor/],
      [() => new DataParallel(comm, [derived]), InvalidArgumentError, /^DataParallel: params\[0\] Tensor\(f32 \[2\]\) is the result of a recorded op, not a leaf/],
      [() => new DataParallel(comm, [a, a]), InvalidArgumentError, /^DataParallel: params\[1\] Tensor\(f32 \[2\]\) is given twice/],
      [() => new DataParallel(comm, [gone]), DisposedError, /^DataParallel: params\[0\] Tensor\(f32 \[1\]\) has been disposed/],
      [() => new DataParallel(comm, [a], { bucketBytes: 0 }), InvalidArgumentError, /^DataParallel: bucketBytes must be an integer ≥ 1, got 0/],
      [() => new DataParallel(comm, [a], { bucketBytes: 1.5 }), InvalidArgumentError, /^DataParallel: bucketBytes must be an integer ≥ 1, got 1.5/],
      [() => new DataParallel(comm, [a], { bucketSize: 1 } as never), InvalidArgumentError, /^DataParallel: unknown option bucketSize/],
    ];
    for (const [fn, type, message] of cases) {
      expect(fn, String(message)).toThrow(type);
      expect(fn, String(message)).toThrow(message);
    }
    expect(usage()).toEqual(before);
  });

  it('a disposed communicator, before and after construction', async () => {
    const comm = await Communicator.create(gpus.slice(0, 2));
    using a = gpus[0]!.tensor([1]).requiresGrad_();
    const dp = new DataParallel(comm, [a]);
    comm.dispose();
    expect(() => new DataParallel(comm, [a])).toThrow(DisposedError);
    expect(() => new DataParallel(comm, [a])).toThrow(/^DataParallel: the Communicator has been disposed/);
    expect(() => dp.parameters(0)).toThrow(/^DataParallel.parameters: the Communicator has been disposed/);
    expect(() => dp.backward([a, a])).toThrow(/^DataParallel.backward: the Communicator has been disposed/);
    dp.dispose();
    expect(() => dp.parameters(0)).toThrow(/^DataParallel.parameters: the DataParallel has been disposed/);
  });

  it('a disposed GpuCompute of a rank', async () => {
    const pair2 = await Promise.all([cpu(), cpu()]);
    const comm = await Communicator.create(pair2);
    const a = pair2[0]!.tensor([1]).requiresGrad_();
    const dp = new DataParallel(comm, [a]);
    pair2[1]!.dispose();
    expect(() => dp.parameters(0)).toThrow(/^DataParallel.parameters: the GpuCompute of rank 1 has been disposed/);
    expect(() => dp.backward([a, a])).toThrow(DisposedError);
    dp.dispose();
    comm.dispose();
    pair2[0]!.dispose();
  });

  it('parameters(rank): a rank this process drives', () => {
    using a = gpus[0]!.tensor([1]).requiresGrad_();
    using dp = new DataParallel(comms.get(2)!, [a]);
    expect(() => dp.parameters()).toThrow(/^DataParallel.parameters: rank is required: this process drives ranks 0, 1/);
    expect(() => dp.parameters(2)).toThrow(/^DataParallel.parameters: rank must be an integer in \[0, 1\], got 2/);
    expect(() => dp.parameters('0' as never)).toThrow(InvalidArgumentError);
    const list = dp.parameters(1);
    list.pop();
    expect(dp.parameters(1), 'a copy of the list').toHaveLength(1);
  });

  it('backward: one scalar loss per rank, on its GpuCompute, requiring grad; nothing allocated, no gradient touched', () => {
    const comm = comms.get(2)!;
    using a = gpus[0]!.tensor([1, 2]).requiresGrad_();
    using dp = new DataParallel(comm, [a]);
    const [p0, p1] = [dp.parameters(0)[0]!, dp.parameters(1)[0]!];
    const [l0, l1] = [gpus[0]!.scope(() => gpus[0]!.sum(gpus[0]!.mul(p0, p0))), gpus[1]!.scope(() => gpus[1]!.sum(gpus[1]!.mul(p1, p1)))] as [Tensor, Tensor];
    using wide = gpus[1]!.scope(() => gpus[1]!.mul(p1, 2));
    using constant = gpus[1]!.tensor([1]);
    using indices = gpus[1]!.tensor(Int32Array.from([1]));
    const gone = gpus[1]!.tensor([1]);
    gone.dispose();
    const before = usage();
    const cases: [unknown, new (...args: never[]) => Error, RegExp][] = [
      [l0, InvalidArgumentError, /^DataParallel.backward: losses must be an array of 2 tensors, one per rank this process drives \(ranks 0, 1\), got Tensor/],
      [[l0], InvalidArgumentError, /^DataParallel.backward: losses must be an array of 2 tensors/],
      [[l0, l1, l1], InvalidArgumentError, /^DataParallel.backward: losses must be an array of 2 tensors/],
      [[l1, l0], InvalidArgumentError, /^DataParallel.backward: losses\[0\] Tensor\(f32 \[\]\) is not on the GpuCompute of rank 0; losses go in rank order/],
      [[l0, 'x'], InvalidArgumentError, /^DataParallel.backward: losses\[1\] must be a Tensor, got the string "x"/],
      [[l0, wide], InvalidArgumentError, /^DataParallel.backward: losses\[1\] Tensor\(f32 \[2\]\) is not a one-element tensor/],
      [[l0, constant], InvalidArgumentError, /^DataParallel.backward: losses\[1\] Tensor\(f32 \[1\]\) does not require grad/],
      [[l0, indices], InvalidArgumentError, /^DataParallel.backward: losses\[1\] must be a float tensor/],
      [[l0, gone], DisposedError, /^DataParallel.backward: losses\[1\] Tensor\(f32 \[1\]\) has been disposed/],
    ];
    for (const [losses, type, message] of cases) {
      expect(() => dp.backward(losses as never), String(message)).toThrow(type);
      expect(() => dp.backward(losses as never), String(message)).toThrow(message);
    }
    expect(usage()).toEqual(before);
    expect([p0.grad, p1.grad]).toEqual([undefined, undefined]);
    dp.parameters(1)[0]!.dispose();
    expect(() => dp.backward([l0, l1])).toThrow(/^DataParallel.backward: the replica of params\[0\] on rank 1 has been disposed/);
    l0.dispose();
    l1.dispose();
  });

  it('backward inside a captured function is refused', () => {
    const comm = comms.get(2)!;
    using a = gpus[0]!.tensor([1]).requiresGrad_();
    using dp = new DataParallel(comm, [a]);
    const losses = [0, 1].map((r) => gpus[r]!.scope(() => gpus[r]!.sum(gpus[r]!.mul(dp.parameters(r)[0]!, 3))));
    using x = gpus[1]!.tensor([1]);
    using captured = gpus[1]!.capture((t: Tensor) => {
      dp.backward(losses);
      return gpus[1]!.copy(t);
    }, [x]);
    expect(() => captured(x)).toThrow(CaptureError);
    for (const l of losses) l.dispose();
  });
});

describe('a failed backward changes no gradient and leaves nothing allocated', () => {
  /** Accumulated gradients on every replica, then a second backward made to fail by `arm`. */
  function expectAtomic(arm: (index: number) => () => void, label: string): number {
    const seed = 77;
    const comm = comms.get(2)!;
    const p = pair(comm, gpus[0]!, ref, MLP, seed, { bucketBytes: 100 });
    parallelBackward(gpus.slice(0, 2), p.dp, MLP, makeBatch(MLP, 4, seed));
    const before = [0, 1].map((r) => p.dp.parameters(r).map((t) => host(t.grad)));
    const base = usage();
    const batch = makeBatch(MLP, 4, seed + 1);
    let failures = 0;
    for (let index = 0; ; index++) {
      const losses = rankLosses(gpus.slice(0, 2), p.dp, MLP, batch);
      const disarm = arm(index);
      let error: unknown;
      try {
        p.dp.backward(losses);
      } catch (err) {
        error = err;
      } finally {
        disarm();
        for (const l of losses) l.dispose();
      }
      if (error === undefined) break;
      failures++;
      expect(usage(), `${label} ${index}: nothing left allocated (${String(error)})`).toEqual(base);
      expect([0, 1].map((r) => p.dp.parameters(r).map((t) => host(t.grad))), `${label} ${index}: no gradient changed`).toEqual(before);
    }
    p.dispose();
    return failures;
  }

  it('at each allocation in turn, over both ranks', () => {
    const failures = expectAtomic((index) => {
      let count = 0;
      const restore = gpus.slice(0, 2).map((g) => {
        const backend = g.backend as unknown as { alloc: (bytes: number) => unknown };
        const alloc = backend.alloc;
        backend.alloc = (bytes: number) => {
          if (count++ === index) throw new OutOfMemoryError({ requestedBytes: bytes, inUseBytes: 0 });
          return alloc.call(g.backend, bytes);
        };
        return () => {
          backend.alloc = alloc;
        };
      });
      return () => restore.forEach((r) => r());
    }, 'allocation');
    expect(failures, 'the backward allocates').toBeGreaterThan(10);
  });

  it('at each all-reduce group in turn', () => {
    const comm = comms.get(2)!;
    const failures = expectAtomic((index) => {
      let count = 0;
      const group = comm.group.bind(comm);
      comm.group = (<T>(fn: () => T): T => {
        if (count++ === index) throw new Error('injected');
        return group(fn);
      }) as typeof comm.group;
      return () => delete (comm as { group?: unknown }).group;
    }, 'group');
    expect(failures, 'one per bucket').toBe(3);
  });

  it('when the last replica’s graph was already used, after the first replica’s backward ran', () => {
    const comm = comms.get(2)!;
    const p = pair(comm, gpus[0]!, ref, MLP, 5);
    const base = usage();
    const losses = rankLosses(gpus.slice(0, 2), p.dp, MLP, makeBatch(MLP, 4, 5));
    losses[1]!.backward();
    const used = host(p.dp.parameters(1)[0]!.grad);
    expect(() => p.dp.backward(losses)).toThrow(/^backward: the graph through \w+ was already used by a backward/);
    expect(p.dp.parameters(0)[0]!.grad).toBeUndefined();
    expect(host(p.dp.parameters(1)[0]!.grad)).toEqual(used);
    for (const l of losses) l.dispose();
    for (const t of p.dp.parameters(1)) t.zeroGrad();
    expect(usage()).toEqual(base);
    p.dispose();
  });
});
