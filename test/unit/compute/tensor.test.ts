import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { f32ToBf16Bits, f32ToF16Bits } from '../../../src/compute/core/dtype.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { DisposedError } from '../../../src/errors.js';
import { cpuCompute, FLOAT_DTYPES, freshSeed, product, randomValues } from './helpers.js';

let gpu: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
});
afterAll(() => gpu.dispose());

describe('creation and reading back', () => {
  it('holds dtype, shape, size, rank and row-major strides', () => {
    using t = gpu.zeros([2, 3, 4]);
    expect(t.dtype).toBe('f32');
    expect(t.shape).toEqual([2, 3, 4]);
    expect(t.size).toBe(24);
    expect(t.rank).toBe(3);
    expect(t.strides).toEqual([12, 4, 1]);
    expect(t.byteLength).toBe(96);
    expect(Object.isFrozen(t.shape)).toBe(true);
  });

  it('infers dtypes: Int32Array → i32, others → f32, shape → [length]', async () => {
    using a = gpu.tensor(new Int32Array([1, 2, 3]));
    using b = gpu.tensor([1.5, 2.5]);
    using c = gpu.tensor(new Float64Array([0.1]));
    expect([a.dtype, b.dtype, c.dtype]).toEqual(['i32', 'f32', 'f32']);
    expect(a.shape).toEqual([3]);
    expect(Array.from(await c.toArray())).toEqual([Math.fround(0.1)]);
  });

  it.each(['f16', 'bf16'] as const)('stores %s as 16-bit words and reads them back widened or raw', async (dtype) => {
    const values = randomValues(37, freshSeed(), 100);
    const encode = dtype === 'f16' ? f32ToF16Bits : f32ToBf16Bits;
    using t = gpu.tensor(values, [37], dtype);
    const raw = await t.toRawArray();
    expect(raw).toBeInstanceOf(Uint16Array);
    expect(Array.from(raw)).toEqual(values.map(encode));
    using fromBits = gpu.tensor(raw as Uint16Array, [37], dtype);
    expect(Array.from(await fromBits.toArray())).toEqual(Array.from(await t.toArray()));
    expect(t.toArraySync()).toEqual(await t.toArray());
    expect(t.toRawArraySync()).toEqual(raw);
  });

  it('fills with full/zeros/ones, rounding to the dtype', async () => {
    using a = gpu.full([2, 2], 0.1, 'bf16');
    using b = gpu.ones([3], 'i32');
    using c = gpu.full([], -7, 'i32');
    expect(Array.from(await a.toRawArray())).toEqual(new Array(4).fill(f32ToBf16Bits(0.1)));
    expect(Array.from(await b.toArray())).toEqual([1, 1, 1]);
    expect(c.shape).toEqual([]);
    expect(Array.from(await c.toArray())).toEqual([-7]);
  });

  it('supports empty tensors end to end', async () => {
    using e = gpu.tensor([], [5, 0]);
    expect(e.size).toBe(0);
    expect(Array.from(await e.toArray())).toEqual([]);
    using r = e.reshape(0, 7);
    expect(r.shape).toEqual([0, 7]);
    using t = gpu.transpose(e);
    expect(t.shape).toEqual([0, 5]);
    using s = gpu.add(e, 1);
    expect(s.shape).toEqual([5, 0]);
  });

  it('toArray leaves the event loop free and returns a copy', async () => {
    using t = gpu.tensor([1, 2, 3]);
    const pending = t.toArray();
    expect(pending).toBeInstanceOf(Promise);
    const first = await pending;
    first[0] = 99;
    expect(Array.from(await t.toArray())).toEqual([1, 2, 3]);
  });
});

describe('reshape views', () => {
  it('share storage (no copy), infer -1, and keep the storage until the last view is disposed', async () => {
    const before = gpu.memoryStats();
    const t = gpu.tensor([1, 2, 3, 4, 5, 6], [2, 3]);
    const afterCreate = gpu.memoryStats();
    expect(afterCreate.allocations).toBe(before.allocations + 1);
    const v = t.reshape(-1, 2);
    const w = t.reshape([6]);
    expect(v.shape).toEqual([3, 2]);
    expect(gpu.memoryStats().allocations).toBe(afterCreate.allocations);
    t.dispose();
    expect(t.disposed).toBe(true);
    expect(Array.from(await v.toArray())).toEqual([1, 2, 3, 4, 5, 6]);
    v.dispose();
    expect(gpu.memoryStats().allocations).toBe(afterCreate.allocations);
    w.dispose();
    expect(gpu.memoryStats()).toMatchObject({ allocations: before.allocations, inUseBytes: before.inUseBytes });
  });

  it('rejects sizes that do not match, two -1s, and -1 against a zero size', () => {
    using t = gpu.zeros([2, 3]);
    expect(() => t.reshape(4, 2)).toThrow(/cannot reshape Tensor\(f32 \[2, 3\]\) \(6 elements\) to \[4, 2\]/);
    expect(() => t.reshape(-1, -1)).toThrow(/only one dim may be -1/);
    expect(() => t.reshape(4, -1)).toThrow(/cannot reshape/);
    expect(() => t.reshape(2, 1.5)).toThrow(/invalid dim 1.5/);
    using e = gpu.zeros([0, 3]);
    expect(() => e.reshape(0, -1)).toThrow(/cannot reshape/);
  });
});

describe('dispose and memory stats', () => {
  it('counts bytes in use, peak and live allocations, and frees on dispose (twice is harmless)', () => {
    const local = gpu.memoryStats();
    const a = gpu.zeros([1000]);
    const b = gpu.zeros([500], 'f16');
    const stats = gpu.memoryStats();
    expect(stats.inUseBytes - local.inUseBytes).toBe(4000 + 1000);
    expect(stats.allocations - local.allocations).toBe(2);
    expect(stats.peakBytes).toBeGreaterThanOrEqual(stats.inUseBytes);
    a.dispose();
    a.dispose();
    b[Symbol.dispose]();
    expect(gpu.memoryStats().inUseBytes).toBe(local.inUseBytes);
    // The pool keeps what was freed for reuse.
    expect(gpu.memoryStats().cachedBytes - stats.cachedBytes).toBeGreaterThanOrEqual(4000 + 1000);
    expect(gpu.memoryStats().peakBytes).toBe(stats.peakBytes);
  });

  it('frees temporaries of scalar operands', () => {
    using x = gpu.zeros([4]);
    const before = gpu.memoryStats().allocations;
    using y = gpu.add(x, 3);
    expect(gpu.memoryStats().allocations).toBe(before + 1);
  });

  it('throws DisposedError on use after dispose, with the tensor in the message', async () => {
    const t = gpu.zeros([2]);
    t.dispose();
    expect(() => t.view).toThrow(DisposedError);
    expect(() => t.toArraySync()).toThrow(/Tensor\(f32 \[2\]\) has been disposed/);
    await expect(t.toArray()).rejects.toBeInstanceOf(DisposedError);
    expect(() => gpu.relu(t)).toThrow(DisposedError);
    expect(() => t.reshape(2)).toThrow(DisposedError);
  });

  it('makes every tensor unusable once its GpuCompute is disposed', async () => {
    const other = await cpuCompute();
    const t = other.ones([3]);
    other.dispose();
    expect(t.disposed).toBe(true);
    expect(() => t.toArraySync()).toThrow(/the GpuCompute holding Tensor\(f32 \[3\]\) has been disposed/);
    expect(() => other.zeros([1])).toThrow(DisposedError);
    t.dispose();
  });
});

describe('transpose and cast', () => {
  it.each([
    [[7, 13]],
    [[3, 4, 5]],
    [[2, 1, 5]],
    [[2, 2, 33, 65]],
  ])('transposes the last two dims of %j exactly in every dtype', async (shape) => {
    const seed = freshSeed();
    const values = randomValues(product(shape), seed, 20).map((v) => Math.round(v) || 0); // integers exact in every dtype, no -0
    const [rows, cols] = shape.slice(-2) as [number, number];
    const batch = product(shape) / (rows * cols);
    const expected: number[] = [];
    for (let m = 0; m < batch; m++) for (let c = 0; c < cols; c++) for (let r = 0; r < rows; r++) expected.push(values[m * rows * cols + r * cols + c]!);
    for (const dtype of [...FLOAT_DTYPES, 'i32'] as const) {
      using x = gpu.tensor(values, shape, dtype);
      using y = x.transpose();
      expect(y.shape).toEqual([...shape.slice(0, -2), cols, rows]);
      expect(Array.from(await y.toArray()), dtype).toEqual(expected);
    }
  });

  it.each([[[1, 6]], [[6, 1]], [[3, 1, 4]], [[2, 5, 1]]])('transposes %j, a unit dim swapped, as a view over the same storage', async (shape) => {
    const values = randomValues(product(shape), freshSeed(), 20);
    const x = gpu.tensor(values, shape);
    const before = gpu.memoryStats().allocations;
    using y = gpu.transpose(x);
    expect(gpu.memoryStats().allocations).toBe(before);
    expect(y.shape).toEqual([...shape.slice(0, -2), shape[shape.length - 1], shape[shape.length - 2]]);
    // The storage outlives x while the view holds it, and the values keep their order.
    x.dispose();
    expect(Array.from(await y.toArray())).toEqual(Array.from(Float32Array.from(values)));
  });

  it('casts float → i32 by truncation with saturation and NaN → 0', async () => {
    using x = gpu.tensor([1.9, -1.9, 0.5, -0.5, 3e9, -3e9, NaN, Infinity, -Infinity, 2147483520]);
    using y = gpu.cast(x, 'i32');
    expect(Array.from(await y.toArray())).toEqual([1, -1, 0, 0, 2147483647, -2147483648, 0, 2147483647, -2147483648, 2147483520]);
  });

  it('casts between float dtypes by rounding once to nearest-even, and i32 → float through f32', async () => {
    const values = randomValues(100, freshSeed(), 1000);
    using x = gpu.tensor(values);
    for (const dtype of ['f16', 'bf16'] as const) {
      using direct = gpu.tensor(values, [100], dtype);
      using cast = x.cast(dtype);
      expect(Array.from(await cast.toRawArray())).toEqual(Array.from(await direct.toRawArray()));
      using back = cast.cast('f32');
      expect(Array.from(await back.toArray())).toEqual(Array.from(await direct.toArray()));
    }
    using ints = gpu.tensor(new Int32Array([16777217, -3, 70000]));
    expect(Array.from(await ints.cast('f32').toArray())).toEqual([16777216, -3, 70000]);
    expect(Array.from(await ints.cast('f16').toArray())).toEqual([Infinity, -3, Infinity]);
    using same = ints.cast('i32');
    expect(Array.from(await same.toArray())).toEqual([16777217, -3, 70000]);
  });

  it('clone copies into new storage', async () => {
    using x = gpu.tensor([1, 2]);
    using y = x.clone();
    x.dispose();
    expect(Array.from(await y.toArray())).toEqual([1, 2]);
  });
});
