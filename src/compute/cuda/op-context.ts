/**
 * What the CUDA op launchers (and the matmul code) need from the backend:
 * kernels, device addresses of views, stream ordering and scratch memory.
 */
import type { Stream } from '../../driver/stream.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { TensorView } from '../tensor-view.js';
import type { RegisteredKernel } from './kernel-registry.js';
import type { ModuleSpec } from './kernel-sources.js';

/** Device memory for the duration of one op. */
export interface Scratch {
  readonly address: bigint;
  /** Returns it to the pool; later work on the same stream may reuse it at once. */
  release(): void;
}

export interface CudaOpContext {
  /** Device multiprocessors (for sizing split reductions). */
  readonly multiprocessorCount: number;
  /**
   * Makes the current stream wait for the work of other streams that last
   * used these views' buffers, marks the buffers as used on it, and returns
   * it: everything an op launches goes on this stream.
   */
  enqueue(...views: (TensorView | undefined)[]): Stream;
  /** Device address of a view's first element. */
  address(view: TensorView): bigint;
  /** `bytes` of device memory on the current stream. */
  scratch(bytes: number): Scratch;
  /**
   * Address of a u32 in device memory owned by the current stream and zero
   * between kernels on it: a kernel that counts finished blocks in it must
   * reset it to zero before it completes.
   */
  blockCounter(): bigint;
  /**
   * The kernel `name` of `spec()` bound to `signature`, cached under `key`
   * (the spec is built only on the first call for a key).
   */
  kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): RegisteredKernel;
}
