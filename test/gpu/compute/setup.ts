/**
 * Shared setup of the GPU compute tests: a CUDA and a CPU GpuCompute, inputs
 * from fresh random values, and the norm-wise checks (against a float64
 * reference and against the CPU backend).
 */
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';

export { expectMatches, freshSeed, randomValues, relError, TOLERANCE, FLOAT_DTYPES, prng } from '../../unit/compute/helpers.js';

export interface Pair {
  cuda: GpuCompute;
  cpu: GpuCompute;
}

/** A CUDA GpuCompute (explicit: a missing GPU must fail, not fall back) and a CPU one. */
export async function openPair(): Promise<Pair> {
  const cuda = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
  const cpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  return { cuda, cpu };
}

export function closePair(pair: Pair | undefined): void {
  pair?.cuda.dispose();
  pair?.cpu.dispose();
}

/** The same host values as a tensor on each backend. */
export function twin<D extends DType>(pair: Pair, values: readonly number[], shape: readonly number[], dtype: D): [Tensor<D>, Tensor<D>] {
  const data = dtype === 'i32' ? Int32Array.from(values) : Float32Array.from(values);
  return [pair.cuda.tensor(data, shape, dtype), pair.cpu.tensor(data, shape, dtype)];
}

/** The values a tensor holds, as numbers (f16/bf16 widened). */
export function valuesOf(t: Tensor): number[] {
  return Array.from(t.toArraySync() as ArrayLike<number>);
}

