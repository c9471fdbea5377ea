/**
 * The public surface the hardening tests must cover, read from the classes themselves, so a new
 * method shows up here (and fails the coverage checks) until its tests are written.
 */
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { Tensor } from '../../../src/compute/tensor/tensor.js';

/** TypeScript-private methods, which are on the prototype all the same. */
const PRIVATE = new Set(['hostArray', 'describe']);

function methodsOf(proto: object): string[] {
  return Object.getOwnPropertyNames(proto)
    .filter((name) => name !== 'constructor' && !PRIVATE.has(name) && typeof Object.getOwnPropertyDescriptor(proto, name)!.value === 'function')
    .sort();
}

/** GpuCompute's instance methods (the op methods installed from the op table included). */
export const GPU_COMPUTE_METHODS = methodsOf(GpuCompute.prototype);
/** Statics marked `@internal` (left out of the documentation; the library's own tests use them). */
const INTERNAL_STATICS = new Set(['over']);

/** GpuCompute's public static methods. */
export const GPU_COMPUTE_STATICS = Object.getOwnPropertyNames(GpuCompute).filter(
  (name) =>
    typeof (GpuCompute as unknown as Record<string, unknown>)[name] === 'function' &&
    !['length', 'name', 'prototype'].includes(name) &&
    !INTERNAL_STATICS.has(name),
);
/** Tensor's instance methods, as `Tensor#name` (the op methods of `tensor-methods.ts` included). */
export const TENSOR_METHODS = methodsOf(Tensor.prototype).map((name) => `Tensor#${name}`);

/** Every public method, GpuCompute's by name, static ones as `GpuCompute.name`, Tensor's as `Tensor#name`. */
export const PUBLIC_METHODS = [...GPU_COMPUTE_METHODS, ...GPU_COMPUTE_STATICS.map((n) => `GpuCompute.${n}`), ...TENSOR_METHODS];

/** The public methods that allocate nothing from the pool, and why (so they have no failure-sweep case). */
export const NON_ALLOCATING: Readonly<Record<string, string>> = {
  memoryStats: 'reads counters',
  trim: 'returns cached memory',
  synchronize: 'waits',
  createStream: 'makes a stream, no tensor',
  setStream: 'selects a stream',
  currentStream: 'reads the stream',
  dispose: 'releases everything',
  checkTensor: 'checks an argument',
  keep: 'marks a tensor as kept',
  'GpuCompute.create': 'opens a backend (its pool is empty)',
  'GpuCompute.selectDevice': 'probes devices',
  'Tensor#reshape': 'a view of the same storage',
  'Tensor#toArray': 'copies to the host',
  'Tensor#toArraySync': 'copies to the host',
  'Tensor#toRawArray': 'copies to the host',
  'Tensor#toRawArraySync': 'copies to the host',
  'Tensor#dispose': 'releases the tensor',
  'Tensor#assertLive': 'checks the tensor',
  'Tensor#toString': 'describes the tensor',
  'Tensor#zeroGrad': 'releases the gradient',
  'Tensor#requiresGrad_': 'marks the tensor',
  'Tensor#detach': 'a view of the same storage',
};
