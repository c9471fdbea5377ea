/**
 * Error paths: every bad call gives the same error class and message on the backend under test
 * as on the CPU backend (device names aside), leaves the bytes in use as they were, and a call
 * that runs out of pool memory throws OutOfMemoryError and leaks nothing. An op the backend
 * leaves out may refuse before validating its arguments: there, its UnsupportedOperationError
 * (with the registration's reason) is the expected error too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { GpuError, OutOfMemoryError, UnsupportedOperationError } from '../../../src/errors.js';
import type { ConformanceContext } from '../context.js';
import { missingOp, OP_NEEDS, type NeedingOp } from '../optional-ops.js';

/** Small valid inputs of every kind the cases need, on one GpuCompute. */
function fixture(g: GpuCompute) {
  const dead = g.zeros([2, 3]);
  dead.dispose();
  const nan = g.ones([3, 3]);
  const f = {
    x: g.ones([2, 3]),
    half: g.ones([2, 3], 'f16'),
    ints: g.ones([2, 2], 'i32'),
    row3: g.ones([3]),
    halfRow3: g.ones([3], 'f16'),
    a: g.ones([3, 4]),
    b: g.ones([4, 5]),
    batchA: g.ones([2, 3, 4]),
    batchB: g.ones([3, 4, 5]),
    high: g.zeros([2, 1, 2, 1, 2, 1, 2]),
    low: g.zeros([2, 1, 2, 1, 2, 1]),
    empty: g.zeros([4, 0]),
    scalar: g.zeros([]),
    q: g.ones([1, 2, 3, 4]),
    k: g.ones([1, 1, 5, 4]),
    kHalf: g.ones([1, 1, 5, 4], 'f16'),
    kThreeHeads: g.ones([1, 3, 5, 4]),
    lengths: g.tensor(Int32Array.from([5]), [1]),
    wIh: g.ones([6, 3]),
    wHh: g.ones([6, 2]),
    seq: g.ones([2, 4, 3]),
    seqHalf: g.ones([2, 4, 3], 'f16'),
    seqNarrow: g.ones([2, 4, 2]),
    h0: g.ones([2, 2]),
    nan: g.mul(nan, NaN),
    dead,
  };
  nan.dispose();
  return f;
}

type Fixture = ReturnType<typeof fixture>;

/** A bad call: its name, the public ops it calls (that may refuse first where left out), and the call on `g` with its inputs `f` and another GpuCompute's `o`. */
type ErrorCase = [name: string, ops: NeedingOp[], call: (g: GpuCompute, f: Fixture, o: Fixture) => unknown];

const layer = (f: Fixture) => ({ wIh: f.wIh, wHh: f.wHh });

const CASES: ErrorCase[] = [
  // dtypes
  ['add of f32 and f16', [], (g, f) => g.add(f.x, f.half)],
  ['matmul of f32 and f16', ['matmul'], (g, f) => g.matmul(f.a, f.half)],
  ['linear with an f16 weight', ['linear'], (g, f) => g.linear(f.x, f.half)],
  ['layerNorm with an f16 gamma', [], (g, f) => g.layerNorm(f.x, f.halfRow3)],
  ['activationGrad of f32 x and f16 dy', ['activationGrad'], (g, f) => g.activationGrad('tanh', f.x, f.half)],
  ['attention with an f16 k', ['attention'], (g, f) => g.attention(f.q, f.kHalf, f.kHalf)],
  ['gru with an f16 x and f32 weights', ['gru'], (g, f) => g.gru(f.seqHalf, undefined, layer(f))],
  ['exp of i32', [], (g, f) => g.exp(f.ints)],
  ['softmax of i32', [], (g, f) => g.softmax(f.ints)],
  ['mean of i32', [], (g, f) => g.mean(f.ints)],
  ['div of i32', [], (g, f) => g.div(f.ints, f.ints)],
  ['matmul of i32', ['matmul'], (g, f) => g.matmul(f.ints, f.ints)],
  ['dropout of i32', ['dropout'], (g, f) => g.dropout(f.ints, 0.5, 1)],
  ['rand in i32', [], (g) => g.rand([2], { dtype: 'i32' as never })],
  ['svd of i32', ['svd'], (g, f) => g.svd(f.ints as never)],
  ['a non-integer scalar with i32', [], (g, f) => g.add(f.ints, 0.5)],
  ['full i32 out of range', [], (g) => g.full([2], 2 ** 31, 'i32')],
  // shapes
  ['add of shapes that do not broadcast', [], (g, f) => g.add(f.x, f.b)],
  ['a broadcast needing 7 dims', [], (g, f) => g.add(f.high, f.low)],
  ['vectorAdd of different shapes', [], (g, f) => g.vectorAdd(f.x, f.row3)],
  ['matmul with different inner dims', ['matmul'], (g, f) => g.matmul(f.x, f.x)],
  ['matmul with batches that do not broadcast', ['matmul'], (g, f) => g.matmul(f.batchA, f.batchB)],
  ['matmul with a misshapen c', ['matmul'], (g, f) => g.matmul(f.a, f.b, { c: f.x })],
  ['matmul with a misshapen bias', ['matmul'], (g, f) => g.matmul(f.a, f.b, { bias: f.row3 })],
  ['matmul of a vector', ['matmul'], (g, f) => g.matmul(f.row3, f.x)],
  ['linear with the wrong input features', ['linear'], (g, f) => g.linear(f.x, f.b)],
  ['activationGrad of different shapes', ['activationGrad'], (g, f) => g.activationGrad('relu', f.x, f.a)],
  ['layerNorm with a misshapen gamma', [], (g, f) => g.layerNorm(f.a, f.row3)],
  ['transpose of a vector', [], (g, f) => g.transpose(f.row3)],
  ['attention with q heads not a multiple of k heads', ['attention'], (g, f) => g.attention(f.q, f.kThreeHeads, f.kThreeHeads)],
  ['attention with v not shaped like k', ['attention'], (g, f) => g.attention(f.q, f.k, f.q)],
  ['attention of a 2-D q', ['attention'], (g, f) => g.attention(f.x, f.k, f.k)],
  ['gru with the wrong input size', ['gru'], (g, f) => g.gru(f.seqNarrow, undefined, layer(f))],
  ['gru with a misshapen h0', ['gru'], (g, f) => g.gru(f.seq, f.x, layer(f))],
  ['tensor with too few values', [], (g) => g.tensor([1, 2, 3], [2, 2])],
  ['zeros with a negative dim', [], (g) => g.zeros([2, -1])],
  ['reshape to another size', [], (_g, f) => f.x.reshape([4])],
  // axes
  ['sum over axis 2 of a matrix', [], (g, f) => g.sum(f.x, 2)],
  ['max over axis -3 of a matrix', [], (g, f) => g.max(f.x, -3)],
  ['argmax over axis 0.5', [], (g, f) => g.argmax(f.x, { axis: 0.5 })],
  ['mean over axis 0 of a scalar', [], (g, f) => g.mean(f.scalar, 0)],
  ['sum with a non-boolean keepDims', [], (g, f) => g.sum(f.x, { axis: 0, keepDims: 1 as never })],
  ['sum with a string axis', [], (g, f) => g.sum(f.x, 'rows' as never)],
  ['max over an empty axis', [], (g, f) => g.max(f.empty, 1)],
  ['argmax over everything of an empty tensor', [], (g, f) => g.argmax(f.empty)],
  // another GpuCompute's tensors
  ['add with another GpuCompute\'s tensor', [], (g, f, o) => g.add(f.x, o.x)],
  ['relu of another GpuCompute\'s tensor', [], (g, _f, o) => g.relu(o.x)],
  ['copy of another GpuCompute\'s tensor', [], (g, _f, o) => g.copy(o.x)],
  ['layerNorm with another GpuCompute\'s gamma', [], (g, f, o) => g.layerNorm(f.x, o.row3)],
  ['matmul with another GpuCompute\'s b', ['matmul'], (g, f, o) => g.matmul(f.a, o.b)],
  ['attention with another GpuCompute\'s key lengths', ['attention'], (g, f, o) => g.attention(f.q, f.k, f.k, { keyLengths: o.lengths })],
  ['gru with another GpuCompute\'s x', ['gru'], (g, f, o) => g.gru(o.seq, undefined, layer(f))],
  // disposed tensors, and things that are not tensors
  ['add of a disposed tensor', [], (g, f) => g.add(f.x, f.dead)],
  ['sum of a disposed tensor', [], (g, f) => g.sum(f.dead)],
  ['reading a disposed tensor', [], (_g, f) => f.dead.toArraySync()],
  ['matmul of a disposed tensor', ['matmul'], (g, f) => g.matmul(f.dead, f.b)],
  ['gru from a disposed h0', ['gru'], (g, f) => g.gru(f.seq, f.dead, layer(f))],
  ['relu of a plain object', [], (g) => g.relu({} as never)],
  ['add of null', [], (g) => g.add(null as never, 1)],
  // option values
  ['dropout with p = 1.5', [], (g, f) => g.dropout(f.x, 1.5, 1)],
  ['dropout with seed -1', ['dropout'], (g, f) => g.dropout(f.x, 0.5, -1)],
  ['rand with high = low', [], (g) => g.rand([2], { low: 1, high: 1 })],
  ['rand with a fractional seed', [], (g) => g.rand([2], { seed: 1.5 })],
  ['randn with std -1', [], (g) => g.randn([2], { std: -1 })],
  ['gelu with an unknown form', [], (g, f) => g.gelu(f.x, { approximate: 'fast' as never })],
  ['activationGrad of an unknown activation', [], (g, f) => g.activationGrad('swish' as never, f.x, f.x)],
  ['leakyRelu with a NaN slope', [], (g, f) => g.leakyRelu(f.x, NaN)],
  ['layerNorm with eps -1', [], (g, f) => g.layerNorm(f.x, undefined, undefined, -1)],
  ['cast to an unknown dtype', [], (g, f) => g.cast(f.x, 'u8' as never)],
  ['matmul with an unknown precision', ['matmul'], (g, f) => g.matmul(f.a, f.b, { precision: 'fast' as never })],
  ['matmul with an unknown engine', ['matmul'], (g, f) => g.matmul(f.a, f.b, { engine: 'magma' as never })],
  ['matmul with an unknown activation', ['matmul'], (g, f) => g.matmul(f.a, f.b, { activation: 'swish' as never })],
  ['matmul with a non-boolean transA', ['matmul'], (g, f) => g.matmul(f.a, f.b, { transA: 1 as never })],
  ['matmul with alpha NaN', ['matmul'], (g, f) => g.matmul(f.a, f.b, { alpha: NaN })],
  ['matmul with beta but no c', ['matmul'], (g, f) => g.matmul(f.a, f.b, { beta: 1 })],
  ['attention with scale NaN', ['attention'], (g, f) => g.attention(f.q, f.k, f.k, { scale: NaN })],
  ['attention with a non-boolean causal', ['attention'], (g, f) => g.attention(f.q, f.k, f.k, { causal: 1 as never })],
  ['attention with key lengths for two batch entries', ['attention'], (g, f) => g.attention(f.q, f.k, f.k, { keyLengths: [1, 2] })],
  ['attention with a key length beyond seqK', ['attention'], (g, f) => g.attention(f.q, f.k, f.k, { keyLengths: [6] })],
  ['attention with f32 key lengths', ['attention'], (g, f) => g.attention(f.q, f.k, f.k, { keyLengths: f.row3 as never })],
  ['svd with rank 0', ['svd'], (g, f) => g.svd(f.a, { rank: 0 })],
  ['svd with a fractional rank', ['svd'], (g, f) => g.svd(f.a, { rank: 2.5 })],
  ['svd with oversample -1', ['svd'], (g, f) => g.svd(f.a, { oversample: -1 })],
  ['svd with a non-boolean full', ['svd'], (g, f) => g.svd(f.a, { full: 'yes' as never })],
  ['svd of a matrix holding NaN', ['svd'], (g, f) => g.svd(f.nan, { rank: 2 })],
  ['svd of a batch of matrices', ['svd'], (g, f) => g.svd(f.batchA)],
  ['gru with an unknown precision', ['gru'], (g, f) => g.gru(f.seq, undefined, layer(f), { precision: 'fast' as never })],
  ['gru with an unknown path', ['gru'], (g, f) => g.gru(f.seq, undefined, layer(f), { path: 'cudnn' as never })],
  ['gru with dropout p = 2', ['gru'], (g, f) => g.gru(f.seq, undefined, layer(f), { dropout: { p: 2 } })],
  ['gru with layer norm eps -1', ['gru'], (g, f) => g.gru(f.seq, undefined, { ...layer(f), layerNorm: { eps: -1 } })],
  ['gru without layers', ['gru'], (g, f) => g.gru(f.seq, undefined, [])],
  ['gruRollout of 0 steps', ['gruRollout'], (g, f) => g.gruRollout(f.x, undefined, layer(f), { steps: 0, outputProjection: { weight: f.a } })],
];

/** The error `call` throws (undefined when it returns). */
function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** The error `call` throws on `g`, and the bytes in use it leaves beyond what it found. */
function outcome(g: GpuCompute, call: () => unknown): { error: unknown; leaked: number } {
  const before = g.memoryStats().inUseBytes;
  const error = thrown(call);
  return { error, leaked: g.memoryStats().inUseBytes - before };
}

/** `e`'s class and message, with the devices' names in the message (which differ between backends) replaced. */
function describeError(e: unknown, devices: readonly GpuCompute[]): string {
  if (!(e instanceof GpuError)) return `not a GpuError: ${String(e)}`;
  let message = e.message;
  for (const d of devices) {
    const info = d.backend.info();
    message = message.replaceAll(`${info.backend}:${info.ordinal} ${info.deviceName}`, '<device>');
  }
  return `${e.constructor.name}: ${message}`;
}

export function describeErrors(ctx: ConformanceContext): void {
  describe('error paths', () => {
    let other: GpuCompute;
    let mine: Fixture;
    let theirs: Fixture;
    let cpuFixture: Fixture | undefined;
    beforeAll(async () => {
      other = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
      mine = fixture(ctx.gpu);
      theirs = fixture(other);
      cpuFixture = ctx.cpu && fixture(ctx.cpu);
    });
    afterAll(() => {
      for (const f of [mine, theirs, cpuFixture]) for (const t of Object.values(f ?? {}) as Tensor[]) t.dispose();
      other?.dispose();
    });

    for (const [name, ops, call] of CASES) {
      it(name, () => {
        const got = outcome(ctx.gpu, () => call(ctx.gpu, mine, theirs));
        expect(got.error, `${name}: throws a GpuError`).toBeInstanceOf(GpuError);
        expect(got.leaked, `${name}: bytes in use after the error`).toBe(0);
        if (!ctx.cpu) return;
        const want = outcome(ctx.cpu, () => call(ctx.cpu!, cpuFixture!, theirs));
        const accepted = [describeError(want.error, [ctx.cpu, other])];
        const missing = ops.map((op) => missingOp(ctx.registration, OP_NEEDS[op])).find((m) => m !== undefined);
        if (missing) accepted.push(describeError(new UnsupportedOperationError(ops[0]!, ctx.registration.kind, missing.reason), []));
        expect(accepted, `${name}: the CPU backend's error (or the op's refusal where the backend leaves it out)`).toContain(describeError(got.error, [ctx.gpu, other]));
      });
    }

    it('a disposed GpuCompute refuses every call with DisposedError, as the CPU backend does', async () => {
      const calls = (g: GpuCompute) => {
        const t = g.zeros([2]);
        const m = g.ones([2, 2]);
        g.dispose();
        return [() => g.add(t, t), () => g.zeros([2]), () => g.memoryStats(), () => g.info, () => t.toArraySync(), () => t.reshape([2]), () => g.matmul(m, m), () => g.svd(m)];
      };
      const got = calls(await ctx.openAnother()).map((call) => describeError(thrown(call), []));
      const want = calls(await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' })).map((call) => describeError(thrown(call), []));
      expect(got).toEqual(want);
      expect(got.every((e) => e.startsWith('DisposedError: ')), got.join('\n')).toBe(true);
    });

    describe('an op that runs out of pool memory throws OutOfMemoryError and leaks nothing', () => {
      const MiB = 2 ** 20;
      let limited: GpuCompute;
      beforeAll(async () => {
        limited = await ctx.openAnother({ poolLimitBytes: 4 * MiB });
      });
      afterAll(() => limited?.dispose());

      // Each first input takes 2 MiB (3 for the number operands), so the op's first large allocation goes past the limit after any smaller ones.
      const cases: [name: string, op: NeedingOp | undefined, inputs: (g: GpuCompute) => Tensor[], call: (g: GpuCompute, t: Tensor[]) => unknown][] = [
        // 3 MiB: the output alone overflows where the number is a kernel argument (no small allocation first).
        ['add with a JS number on the right', undefined, (g) => [g.zeros([(3 * MiB) / 4])], (g, [x]) => g.add(x!, 1)],
        ['sub from a JS number on the left', undefined, (g) => [g.zeros([(3 * MiB) / 4])], (g, [x]) => g.sub(1, x!)],
        ['attention with key lengths as an array', 'attention', (g) => [g.zeros([1, 1, MiB / 32, 16]), g.zeros([1, 1, 4, 16])], (g, [q, k]) => g.attention(q!, k!, k!, { keyLengths: [4] })],
        ['gru with zero initial states', 'gru', (g) => [g.zeros([1, MiB / 8, 4]), g.zeros([6, 4]), g.zeros([6, 2])], (g, [x, wIh, wHh]) => g.gru(x!, undefined, { wIh: wIh!, wHh: wHh! })],
        ['svd full, whose u and s are made before v', 'svd', (g) => [g.ones([8, MiB / 16])], (g, [a]) => g.svd(a as Tensor<'f32'>, { full: true })],
      ];
      for (const [name, op, inputs, call] of cases) {
        it(name, () => {
          const tensors = inputs(limited);
          try {
            const { error, leaked } = outcome(limited, () => call(limited, tensors));
            const refused = op !== undefined && missingOp(ctx.registration, OP_NEEDS[op]) !== undefined;
            expect(error, `${name}: the error`).toBeInstanceOf(refused ? UnsupportedOperationError : OutOfMemoryError);
            expect(leaked, `${name}: bytes in use after the error`).toBe(0);
          } finally {
            for (const t of tensors) t.dispose();
            // Each case starts from an empty pool: a cached block of one case's size must not crowd the next.
            limited.trim();
          }
        });
      }

      it('and the GpuCompute goes on', () => {
        using small = limited.ones([3]);
        using sum = limited.add(small, 1);
        expect(Array.from(sum.toArraySync())).toEqual([2, 2, 2]);
      });
    });
  });
}
