/**
 * Shared setup of the WebGPU tests: whether a WebGPU adapter answers here (the suites skip with
 * the reason when not), a GpuCompute on the WebGPU backend beside one on the CPU backend, inputs
 * from fresh random values, and the norm-wise checks against a float64 reference and the CPU.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Backend } from '../../../src/compute/backend/backend.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { webgpuAdapterInfo } from '../../../src/compute/webgpu/adapter.js';
import { createWebGpuBackend, type WebGpuBackend, type WebGpuBackendOptions } from '../../../src/compute/webgpu/webgpu-backend.js';

export { expectMatches, freshSeed, prng, randomValues, relError, TOLERANCE, FLOAT_DTYPES, product } from '../compute/helpers.js';

/** Why the WebGPU suites cannot run here (no `webgpu` package, no adapter), or undefined when they can. */
export const skipReason: string | undefined = await webgpuAdapterInfo().then(
  () => undefined,
  (err: unknown) => (err instanceof Error ? err.message : String(err)),
);

/** A suite title that says why it was skipped. */
export function suite(title: string): string {
  return skipReason === undefined ? title : `${title} (skipped: ${skipReason})`;
}

/** A GpuCompute over a WebGPU backend opened with options `GpuCompute.create` does not take. */
export function computeOn(backend: Backend): GpuCompute {
  return GpuCompute.over(backend);
}

export interface Pair {
  webgpu: GpuCompute;
  cpu: GpuCompute;
  backend: WebGpuBackend;
}

/** A WebGPU GpuCompute and a CPU one. */
export async function openPair(options: WebGpuBackendOptions = {}): Promise<Pair> {
  const backend = await createWebGpuBackend(options);
  const cpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  return { webgpu: computeOn(backend), cpu, backend };
}

/** A file's two pairs: the adapter as it is (subgroup shuffles where it has them), and one held to workgroup memory. */
export interface PairsBySubgroups {
  subgroups: Pair;
  workgroup: Pair;
}

/**
 * Opens both pairs before the file's tests (where WebGPU runs here) and closes them after: the
 * kernels' paths with subgroup shuffles and without, as on devices that lack them. Read the pairs
 * inside tests; they are filled in by then.
 */
export function usePairsBySubgroups(): PairsBySubgroups {
  const pairs = {} as PairsBySubgroups;
  beforeAll(async () => {
    if (skipReason !== undefined) return;
    pairs.subgroups = await openPair();
    pairs.workgroup = await openPair({ subgroups: false });
  });
  afterAll(() => {
    closePair(pairs.subgroups);
    closePair(pairs.workgroup);
  });
  return pairs;
}

/**
 * The side of a square f32 product that keeps the adapter busy for milliseconds: what the timing
 * tests need in flight, small on a software adapter (lavapipe takes ~50 ms at 256), large on a GPU.
 */
export function busySide(pair: Pair): number {
  return pair.backend.adapterInfo.fallback ? 256 : 4096;
}

export function closePair(pair: Pair | undefined): void {
  pair?.webgpu.dispose();
  pair?.cpu.dispose();
}

/** The same host values as a tensor on each backend. */
export function twin<D extends DType>(pair: Pair, values: readonly number[], shape: readonly number[], dtype: D): [Tensor<D>, Tensor<D>] {
  const data = dtype === 'i32' ? Int32Array.from(values) : Float32Array.from(values);
  return [pair.webgpu.tensor(data, shape, dtype), pair.cpu.tensor(data, shape, dtype)];
}

/** The values a tensor holds, as numbers (f16/bf16 widened). */
export async function valuesOf(t: Tensor): Promise<number[]> {
  return Array.from((await t.toArray()) as ArrayLike<number>);
}

/** Element-wise equality where NaN equals NaN (special-value checks). */
export function expectSameValues(label: string, got: readonly number[], want: readonly number[]): void {
  expect(got.map((v) => (Number.isNaN(v) ? 'NaN' : v)), label).toEqual(want.map((v) => (Number.isNaN(v) ? 'NaN' : v)));
}
