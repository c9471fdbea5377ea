import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { cpuCompute, thrown } from './helpers.js';

let gpu: GpuCompute;
let other: GpuCompute;
beforeAll(async () => {
  gpu = await cpuCompute();
  other = await cpuCompute();
});
afterAll(() => {
  gpu.dispose();
  other.dispose();
});

describe('shape errors', () => {
  it('refuses shapes that do not broadcast, naming both shapes and the dim', () => {
    using a = gpu.zeros([7, 13]);
    using b = gpu.zeros([7, 12]);
    const err = thrown(() => gpu.add(a, b));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toBe('add: shapes [7, 13] and [7, 12] do not broadcast (dim -1 is 13 vs 12)');
    using c = gpu.zeros([3, 1]);
    using d = gpu.zeros([2, 4]);
    expect(() => gpu.mul(c, d)).toThrow('mul: shapes [3, 1] and [2, 4] do not broadcast (dim -2 is 3 vs 2)');
  });

  it('refuses broadcasts that stay above six dims after merging', () => {
    using a = gpu.zeros([2, 1, 2, 1, 2, 1, 2]);
    using b = gpu.zeros([2, 1, 2, 1, 2, 1]);
    expect(() => gpu.add(a, b)).toThrow(/needs 7 dims after merging contiguous ones; at most 6/);
  });

  it('requires equal shapes for vectorAdd and activationGrad', () => {
    using a = gpu.zeros([4]);
    using b = gpu.zeros([1]);
    expect(() => gpu.vectorAdd(a, b)).toThrow('vectorAdd: shapes [4] and [1] differ (use add() to broadcast)');
    expect(() => gpu.activationGrad('relu', a, b)).toThrow(/x \[4\] and dy \[1\] must have the same shape/);
  });

  it('checks layerNorm parameter shapes and transpose rank', () => {
    using x = gpu.zeros([2, 3]);
    using g = gpu.ones([2]);
    expect(() => gpu.layerNorm(x, g)).toThrow('layerNorm: gamma must have shape [3] (the last dim of x [2, 3]), got [2]');
    using v = gpu.zeros([5]);
    expect(() => gpu.transpose(v)).toThrow(/needs a tensor of rank ≥ 2/);
  });

  it('validates shapes and data sizes at creation', () => {
    expect(() => gpu.zeros([2, -1])).toThrow(/invalid dim -1/);
    expect(() => gpu.zeros([2.5])).toThrow(/invalid dim 2.5/);
    expect(() => gpu.zeros('3' as unknown as number[])).toThrow(/shape must be an array/);
    expect(() => gpu.tensor([1, 2, 3], [2, 2])).toThrow('tensor: 3 values do not fill shape [2, 2] (4 elements)');
    expect(() => gpu.tensor(new Uint16Array(2) as never)).toThrow(/pass a dtype with a Uint16Array/);
    expect(() => gpu.tensor([1.5], [1], 'i32')).toThrow(/value 1.5 at index 0 is not an i32 value/);
    expect(() => gpu.tensor([1], [1], 'f64' as never)).toThrow(/unknown dtype f64/);
  });
});

describe('dtype errors', () => {
  it('refuses mixed dtypes with a hint to cast (no silent promotion)', () => {
    using a = gpu.zeros([3]);
    using b = gpu.zeros([3], 'f16');
    const err = thrown(() => gpu.add(a, b));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toBe('add: dtype mismatch (f32 vs f16); there is no implicit promotion, cast one operand with gpu.cast(x, dtype)');
    using g = gpu.ones([3], 'bf16');
    expect(() => gpu.layerNorm(a, g)).toThrow(/dtype mismatch \(f32 vs bf16\)/);
    expect(() => gpu.activationGrad('tanh', a, b)).toThrow(/dtype mismatch/);
  });

  it('refuses i32 for float-only ops, and allows the integer ones', () => {
    using i = gpu.ones([2, 2], 'i32');
    const floatOnly: [string, () => Tensor][] = [
      ['exp', () => gpu.exp(i)],
      ['relu', () => gpu.relu(i)],
      ['softmax', () => gpu.softmax(i)],
      ['layerNorm', () => gpu.layerNorm(i)],
      ['mean', () => gpu.mean(i)],
      ['dropout', () => gpu.dropout(i, 0.5, 1)],
    ];
    for (const [name, run] of floatOnly) {
      expect(run, name).toThrow(`${name}: x must be a float tensor (f32, f16 or bf16), got Tensor(i32 [2, 2]); cast it first, e.g. gpu.cast(x, 'f32')`);
    }
    expect(() => gpu.div(i, i)).toThrow("div: not defined for i32 tensors; cast to a float dtype first, e.g. gpu.cast(x, 'f32')");
    expect(() => gpu.rand([2], { dtype: 'i32' })).toThrow(/dtype must be f32, f16 or bf16/);
    for (const run of [() => gpu.add(i, i), () => gpu.neg(i), () => gpu.sum(i), () => gpu.argmax(i), () => gpu.transpose(i), () => gpu.copy(i)]) {
      run().dispose();
    }
  });

  it('refuses non-integer scalars for i32 tensors', () => {
    using i = gpu.ones([2], 'i32');
    expect(() => gpu.add(i, 0.5)).toThrow('add: 0.5 is not an i32 value (an integer in [-2^31, 2^31))');
    expect(() => gpu.full([2], 2 ** 31, 'i32')).toThrow(/is not an i32 value/);
    expect(() => gpu.add(1, 2)).toThrow('add: at least one operand must be a Tensor');
  });
});

describe('device and lifetime errors', () => {
  it('refuses tensors of another GpuCompute', () => {
    using a = gpu.zeros([2]);
    using b = other.zeros([2]);
    const err = thrown(() => gpu.add(a, b));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toMatch(/^add: b Tensor\(f32 \[2\]\) belongs to another GpuCompute \(cpu:0 .*\), not this one \(cpu:0 .*\); copy it over with gpu\.tensor/);
    expect(() => a.mul(b)).toThrow(/belongs to another GpuCompute/);
    expect(() => other.relu(a)).toThrow(/x Tensor\(f32 \[2\]\) belongs to another GpuCompute/);
  });

  it('refuses disposed tensors before any backend call', () => {
    const a = gpu.zeros([2]);
    a.dispose();
    using b = gpu.zeros([2]);
    const err = thrown(() => gpu.add(b, a));
    expect(err).toBeInstanceOf(DisposedError);
    expect(err.message).toBe('add: b Tensor(f32 [2]) has been disposed');
    expect(() => gpu.sum(a)).toThrow(DisposedError);
  });

  it('refuses things that are not tensors', () => {
    expect(() => gpu.relu({} as Tensor)).toThrow('relu: x must be a Tensor, got Object');
    expect(() => gpu.add(null as unknown as Tensor, 1)).toThrow(/a must be a Tensor, got null/);
  });
});

describe('axis and option errors', () => {
  it('refuses axes out of range, listing the valid range', () => {
    using x = gpu.zeros([2, 3]);
    expect(() => gpu.sum(x, 2)).toThrow('sum: axis 2 is out of range for a tensor of rank 2 (valid: -2..1)');
    expect(() => gpu.max(x, -3)).toThrow(/axis -3 is out of range/);
    expect(() => gpu.argmax(x, { axis: 0.5 })).toThrow(/axis must be an integer/);
    using s = gpu.zeros([]);
    expect(() => gpu.mean(s, 0)).toThrow(/axis 0 is out of range for a tensor of rank 0/);
  });

  it('validates op options', () => {
    using x = gpu.zeros([2, 3]);
    expect(() => gpu.dropout(x, 1.5, 1)).toThrow('dropout: p must be in [0, 1], got 1.5');
    expect(() => gpu.dropout(x, 0.5, -1)).toThrow(/seed must be an integer in \[0, 2\^53\)/);
    expect(() => gpu.rand([2], { low: 1, high: 1 })).toThrow(/high \(1\) must be greater than low \(1\)/);
    expect(() => gpu.randn([2], { std: -1 })).toThrow(/std must be ≥ 0/);
    expect(() => gpu.gelu(x, { approximate: 'fast' as never })).toThrow(/approximate must be 'none' or 'tanh'/);
    expect(() => gpu.activationGrad('swish' as never, x, x)).toThrow(/unknown activation swish/);
    expect(() => gpu.leakyRelu(x, NaN)).toThrow(/slope must be a finite number/);
    expect(() => gpu.layerNorm(x, undefined, undefined, -1)).toThrow(/eps must be ≥ 0/);
    expect(() => gpu.cast(x, 'u8' as never)).toThrow(/unknown dtype u8/);
  });
});
