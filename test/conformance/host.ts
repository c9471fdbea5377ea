/**
 * Tensors as the host sees them: the exact values a tensor of a dtype holds (inputs rounded as the
 * backend stores them, so references start from the same numbers) and what an output read back holds.
 */
import type { DType } from '../../src/compute/core/dtype.js';
import type { GpuCompute } from '../../src/compute/gpu-compute.js';
import type { Tensor } from '../../src/compute/tensor/tensor.js';
import { product, roundTo } from '../unit/compute/helpers.js';

/** A shape, a dtype and row-major values (f16/bf16 widened). */
export interface Values {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly values: readonly number[];
}

/** Values as a tensor of `dtype` holds them (rounded to it; i32 values must be i32 already). */
export function host(values: readonly number[], shape: readonly number[], dtype: DType): Values {
  if (values.length !== product(shape)) throw new Error(`${values.length} values for shape [${shape}]`);
  const round = roundTo(dtype);
  return { shape, dtype, values: values.map(round) };
}

/** The tensor on `gpu` holding `h`. */
export function upload(gpu: GpuCompute, h: Values): Tensor {
  return gpu.tensor(h.dtype === 'i32' ? Int32Array.from(h.values) : Float32Array.from(h.values), h.shape, h.dtype);
}

/** What `t` holds. */
export function download(t: Tensor): Values {
  return { shape: [...t.shape], dtype: t.dtype, values: Array.from(t.toArraySync() as ArrayLike<number>) };
}
