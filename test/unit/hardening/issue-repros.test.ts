/**
 * The hardening issue's reproductions, as it gives them, each with the behaviour it asked for.
 * (The systematic versions are the refusal table and the failure sweep.)
 */
import { describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { InvalidArgumentError, OutOfMemoryError } from '../../../src/errors.js';
import { expectThrowsWithoutLeak } from './leak-check.js';
import { filled, gruLayer, gruLayerInputs } from './op-cases.js';

const cpu = (options: { poolLimitBytes?: number } = {}) => GpuCompute.create({ backend: 'cpu', logLevel: 'silent', ...options });

/** Runs `op` under every pool limit from what the inputs take up to what the op needs, 4 bytes apart. */
async function underEveryLimit(make: (g: GpuCompute) => Record<string, Tensor>, op: (g: GpuCompute, t: Record<string, Tensor>) => unknown): Promise<number> {
  const probe = await cpu();
  const t0 = make(probe);
  const inputs = probe.memoryStats().inUseBytes;
  const result = op(probe, t0);
  const peak = probe.memoryStats().peakBytes;
  probe.dispose();
  let refused = 0;
  for (let limit = inputs; limit < peak; limit += 4) {
    const g = await cpu({ poolLimitBytes: limit });
    const t = make(g);
    const err = expectThrowsWithoutLeak(g, () => op(g, t), `limit ${limit}`);
    expect(err).toBeInstanceOf(OutOfMemoryError);
    refused++;
    g.dispose();
  }
  expect(result).toBeDefined();
  return refused;
}

describe('1. an op that fails partway keeps nothing', () => {
  it('attention with keyLengths under poolLimitBytes 2056 (the issue repro: 2048 in use after, not 2056)', async () => {
    const g = await cpu({ poolLimitBytes: 2056 });
    using q = g.rand([2, 4, 3, 8]),
      k = g.rand([2, 2, 5, 8]),
      v = g.rand([2, 2, 5, 8]);
    expect(() => g.attention(q, k, v, { keyLengths: [3, 5] })).toThrow(OutOfMemoryError);
    expect(g.memoryStats().inUseBytes).toBe(2048);
    g.dispose();
  });

  it('svd({ full: true }), a gruRollout, a 2-layer gru with dropout and returnSequences: false, under every limit', async () => {
    expect(await underEveryLimit((g) => ({ a: filled(g, [6, 5]) }), (g, t) => g.svd(t.a as Tensor<'f32'>, { full: true }))).toBeGreaterThan(0);
    expect(
      await underEveryLimit(
        (g) => ({ state: filled(g, [2, 4]), ...gruLayerInputs(g, 'l0', 4, 5), pw: filled(g, [4, 5]) }),
        (g, t) => g.gruRollout(t.state!, undefined, gruLayer(t, 'l0'), { steps: 3, outputProjection: { weight: t.pw! } }),
      ),
    ).toBeGreaterThan(0);
    expect(
      await underEveryLimit(
        (g) => ({ x: filled(g, [2, 3, 4]), ...gruLayerInputs(g, 'l0', 4, 5), ...gruLayerInputs(g, 'l1', 5, 5) }),
        (g, t) => g.gru(t.x!, undefined, [gruLayer(t, 'l0'), gruLayer(t, 'l1')], { dropout: { p: 0.5 }, returnSequences: false }),
      ),
    ).toBeGreaterThan(0);
  });

  it('gruRollout with steps: 1e9: a typed OutOfMemoryError naming the op, nothing kept', async () => {
    const g = await cpu();
    const t = { state: filled(g, [2, 4]), ...gruLayerInputs(g, 'l0', 4, 5), pw: filled(g, [4, 5]) };
    const err = expectThrowsWithoutLeak(g, () => g.gruRollout(t.state, undefined, gruLayer(t, 'l0'), { steps: 1e9, outputProjection: { weight: t.pw } }), 'steps 1e9');
    expect(err).toBeInstanceOf(OutOfMemoryError);
    // The one-go rollout allocates the projected states [B, steps, S] first.
    expect((err as Error).message).toMatch(/^gruRollout: a f32 tensor of shape \[2, 1000000000, 4\]: Out of device memory: requested 29\.8 GiB/);
    g.dispose();
  });
});

describe('1 (state). a refused random op draws no seed', () => {
  it('leaves the default seed sequence where it was', async () => {
    const fresh = await cpu();
    const expected = fresh.rand([4]).toArraySync();
    fresh.dispose();
    const g = await cpu({ poolLimitBytes: 64 });
    expect(() => g.rand([-1])).toThrow(InvalidArgumentError);
    expect(() => g.randn([100])).toThrow(OutOfMemoryError);
    using x = g.ones([2]);
    expect(() => g.dropout(x, 0.5, -1)).toThrow(InvalidArgumentError);
    using got = g.rand([4]);
    expect(Array.from(got.toArraySync())).toEqual(Array.from(expected));
    g.dispose();
  });
});

describe('3. a string axis', () => {
  it('is refused as a string, never read as options', async () => {
    using g = await cpu();
    using x = g.ones([2, 3]);
    expect(() => g.sum(x, '1' as never)).toThrow(/^sum: the second argument must be an axis \(an integer\) or \{ axis, keepDims \}, got the string "1"$/);
    expect(() => g.sum(x, { axis: '1' } as never)).toThrow(/^sum: axis must be an integer, got the string "1"$/);
  });
});

describe('4. tensor() checks the elements of a plain array', () => {
  it.each([
    [['a', 'b'], /data\[0\] must be a number, got the string "a"/],
    [[1, {}, 3], /data\[1\] must be a number, got Object/],
    [[1, undefined, 3], /data\[1\] must be a number, got undefined/],
    [[1, '2', 3], /data\[1\] must be a number, got the string "2"/],
    [['1', 'x', null, true], /data\[0\] must be a number, got the string "1"/],
    [[1n], /data\[0\] must be a number, got the bigint 1n/],
    [[Symbol('s')], /data\[0\] must be a number, got Symbol\(s\)/],
  ])('%o', async (data, message) => {
    using g = await cpu();
    expect(() => g.tensor(data as never)).toThrow(InvalidArgumentError);
    expect(() => g.tensor(data as never)).toThrow(message);
    expect(g.memoryStats().inUseBytes).toBe(0);
  });
});

describe('5. GRU messages point at the fix', () => {
  it('a wHh of [3H, H+1] is blamed against the H its rows and wIh give', async () => {
    using g = await cpu();
    using x = g.zeros([2, 3, 4]);
    using wIh = g.zeros([12, 4]);
    using wHh = g.zeros([12, 5]);
    expect(() => g.gru(x, undefined, { wIh, wHh })).toThrow('gru: wHh must be [12, 4] (3H, H with H = 4), got [12, 5]');
  });

  it('an f16 wIh beside f32 weights is the one blamed, and the cast suggested is of wIh', async () => {
    using g = await cpu();
    using x = g.zeros([2, 3, 4]);
    using wIh = g.zeros([12, 4], 'f16');
    using wHh = g.zeros([12, 4]);
    using b = g.zeros([12]);
    expect(() => g.gru(x, undefined, { wIh, wHh, bIh: b, bHh: b })).toThrow(
      "gru: dtype mismatch: wIh is f16 but the GRU's other tensors are f32; there is no implicit promotion, cast it with gpu.cast(wIh, 'f32')",
    );
  });
});

describe('8. untyped and mislabelled errors', () => {
  it('sizes no buffer holds: typed, naming the op and the size', async () => {
    using g = await cpu();
    for (const [make, message] of [
      [() => g.zeros([1e6, 1e6]), /^zeros: a f32 tensor of shape \[1000000, 1000000\]: Out of device memory: requested 3\.64 TiB/],
      [() => g.zeros([2 ** 40]), /^zeros: a f32 tensor of shape \[1099511627776\]: Out of device memory: requested 4\.00 TiB/],
      [() => g.rand([1e5, 1e5]), /^rand: a f32 tensor of shape \[100000, 100000\]: Out of device memory: requested 37\.3 GiB/],
      [() => g.zeros([2 ** 31]), /^zeros: a f32 tensor of shape \[2147483648\]: Out of device memory: requested 8\.00 GiB/],
    ] as const) {
      expect(make).toThrow(OutOfMemoryError);
      expect(make).toThrow(message);
    }
    using a = g.zeros([1e5, 1]);
    using b = g.zeros([1, 1e5]);
    expect(() => g.matmul(a, b)).toThrow(/^matmul: a f32 tensor of shape \[100000, 100000\]: Out of device memory/);
    expect(() => g.zeros([2 ** 30, 2 ** 30, 2 ** 30])).toThrow(/^zeros: .* more than any buffer can \(2\^53 bytes\)/);
    expect(g.memoryStats().inUseBytes).toBe(8e5);
  });

  it('null options are refused by name', async () => {
    await expect(GpuCompute.create(null as never)).rejects.toThrow(/^GpuCompute.create: options must be an object .*got null$/);
    using g = await cpu();
    using x = g.zeros([2, 3, 4]);
    using wIh = g.zeros([12, 4]);
    using wHh = g.zeros([12, 4]);
    expect(() => g.gru(x, undefined, { wIh, wHh }, null as never)).toThrow(/^gru: options must be an object .*got null$/);
  });

  it('creation errors name the public op; a string dim reads as a string; gruCell names h; the GRU layer norm takes eps: 0', async () => {
    using g = await cpu();
    expect(() => g.zeros([-1])).toThrow(/^zeros: shape \[-1\] has an invalid dim -1/);
    expect(() => g.ones([2], 'float32' as never)).toThrow(/^ones: unknown dtype float32/);
    expect(() => g.zeros(['3'] as never)).toThrow(/^zeros: shape \["3"\] has an invalid dim the string "3"/);
    using x = g.zeros([2, 4]);
    using h = g.zeros([2, 3]);
    using wIh = g.zeros([12, 4]);
    using wHh = g.zeros([12, 4]);
    expect(() => g.gruCell(x, h, { wIh, wHh })).toThrow(/^gruCell: h must be \[2, 4\] \(batch, hidden\), got \[2, 3\]$/);
    using seq = g.ones([2, 3, 4]);
    using out = g.gru(seq, undefined, { wIh, wHh, layerNorm: { eps: 0 } }).output;
    expect(out.shape).toEqual([2, 3, 4]);
  });
});

describe('9. accepted although wrong', () => {
  it('unknown option keys are refused with the closest valid name', async () => {
    await expect(GpuCompute.create({ backnd: 'cuda' } as never)).rejects.toThrow(
      "GpuCompute.create: unknown option backnd; did you mean 'backend'? (valid options: 'backend', 'device', 'logger', 'logLevel', 'poolLimitBytes', 'threads', 'onProgress')",
    );
    using g = await cpu();
    using x = g.ones([2, 3]);
    expect(() => g.sum(x, { axes: [0] } as never)).toThrow("sum: unknown option axes; did you mean 'axis'? (valid options: 'axis', 'keepDims')");
    expect(() => g.sum(x, { keepDims: 'yes' } as never)).toThrow('sum: keepDims must be a boolean, got the string "yes"');
  });

  it('reshape refuses an extra argument; setStream a stream it did not make; svd a spectrum beyond f32', async () => {
    using g = await cpu();
    using x = g.ones([2, 3]);
    expect(() => (x.reshape as (...dims: unknown[]) => Tensor)([2, 3], 5)).toThrow(/^reshape: takes the dims as one array or as separate numbers, not both/);
    expect(() => g.setStream(null as never)).toThrow(/^setStream: stream must be a stream from createStream\(\), got null/);
    expect(() => g.setStream({ id: 99 })).toThrow(/^setStream: the cpu backend did not create this stream \(id 99\)/);
    const s = g.createStream();
    g.setStream(s);
    expect(g.currentStream()).toBe(s);
    using big = g.full([4, 4], 1e38) as Tensor<'f32'>;
    const before = g.memoryStats();
    expect(() => g.svd(big)).toThrow(/^svd: the largest singular value of a Tensor\(f32 \[4, 4\]\) \(max \|a\| 1\.000e\+38\) is beyond f32's range/);
    expect(() => g.svd(big, { full: true })).toThrow(InvalidArgumentError);
    expect(g.memoryStats().inUseBytes).toBe(before.inUseBytes);
    // Just inside the range, the same matrix decomposes: σ₁ = 4·8e37 = 3.2e38.
    using edge = g.full([4, 4], 8e37) as Tensor<'f32'>;
    const r = g.svd(edge, { rank: 1 });
    expect(r.s.toArraySync()[0]).toBeCloseTo(3.2e38, -36);
    for (const t of [r.u, r.s, r.v]) t.dispose();
  });
});
