/**
 * Shared setup of the GPU compute tests: a CUDA and a CPU GpuCompute, inputs
 * from fresh random values, and the norm-wise checks (against a float64
 * reference and against the CPU backend).
 */
import { expect } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { relError, TOLERANCE } from '../../unit/compute/helpers.js';

export { freshSeed, randomValues, relError, TOLERANCE, FLOAT_DTYPES, prng } from '../../unit/compute/helpers.js';

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

/**
 * Checks `got` against a float64 reference and against the CPU backend's
 * result, norm-wise, with the dtype's tolerance (or `tolerance`).
 */
export function expectMatches(
  label: string,
  got: readonly number[],
  reference: readonly number[],
  cpu: readonly number[],
  dtype: DType,
  tolerance = dtype === 'i32' ? 0 : TOLERANCE[dtype],
): void {
  if (dtype === 'i32') {
    expect(got, `${label} vs reference`).toEqual(reference);
    expect(got, `${label} vs CPU`).toEqual(cpu);
    return;
  }
  const vsRef = relError(got, reference, dtype);
  const vsCpu = relError(got, cpu, dtype);
  expect(vsRef, `${label}: error vs float64 reference`).toBeLessThanOrEqual(tolerance);
  expect(vsCpu, `${label}: error vs CPU backend`).toBeLessThanOrEqual(tolerance);
}
