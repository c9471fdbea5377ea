/**
 * What the op launchers need from a GPU backend: kernels, device addresses of views, stream
 * ordering and scratch memory. The launchers of portable kernels are written against
 * {@link LaunchContext}, generic in the backend's stream type, so every GPU backend that compiles
 * the portable kernels (CUDA, HIP) shares them.
 */
import type { BoundValue } from '../../driver/kernel.js';
import type { Dim3 } from '../../driver/launch-config.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { TensorView } from '../core/view.js';
import type { ModuleSpec } from './kernel-sources.js';

/** Block size and grid cap of a grid-stride kernel: every SM filled to its occupancy, no more. */
export interface LaunchShape {
  /** Threads per block. */
  readonly block: number;
  /** Blocks that are resident at once on the whole device. */
  readonly maxGrid: number;
}

/** Grid size for `work` items of a grid-stride kernel: enough blocks, capped at what is resident. */
export function gridFor(work: number, shape: LaunchShape): number {
  return Math.max(1, Math.min(Math.ceil(work / shape.block), shape.maxGrid));
}

/** Device memory for the duration of one op. */
export interface Scratch {
  readonly address: bigint;
  /** Returns it to the pool; later work on the same stream may reuse it at once. */
  release(): void;
}

/** One launch of a {@link LaunchKernel} on a backend stream of type S. */
export interface OpLaunch<S> {
  grid: Dim3;
  block: Dim3;
  sharedMemBytes?: number;
  /** Thread-block cluster shape; only where {@link LaunchContext.clusterLaunch} holds. */
  clusterDim?: Dim3;
  stream: S;
}

/** A kernel as the launchers use it: a bound launcher and its occupancy-derived shape. */
export interface LaunchKernel<S> {
  launch(config: OpLaunch<S>, ...values: BoundValue[]): void;
  /** The best block size (at most `blockLimit`, 0 = the kernel's own limit) and the resident-grid size for it. */
  shape(blockLimit?: number): LaunchShape;
  /**
   * Blocks of `block` threads with `sharedMemBytes` of dynamic shared memory resident on the
   * whole device, after raising the kernel's shared-memory limit as far as needed; 0 when the
   * device cannot give one block that much.
   */
  residentGrid(block: number, sharedMemBytes: number): number;
}

/** What a backend gives the shared op launchers; S is its stream type. */
export interface LaunchContext<S> {
  /** Device multiprocessors (compute units on AMD), for sizing split reductions. */
  readonly multiprocessorCount: number;
  /** Threads per warp (wavefront): 32 on NVIDIA, 32 or 64 on AMD. Launch plans that give a warp a row use it. */
  readonly warpSize: number;
  /** Whether kernels may be launched in thread-block clusters (CUDA sm_90 and later). */
  readonly clusterLaunch: boolean;
  /**
   * Makes the current stream wait for the work of other streams that last
   * used these views' buffers, marks the buffers as used on it, and returns
   * it: everything an op launches goes on this stream.
   */
  enqueue(...views: (TensorView | undefined)[]): S;
  /** Device address of a view's first element. */
  address(view: TensorView): bigint;
  /** `bytes` of device memory on the current stream. */
  scratch(bytes: number): Scratch;
  /**
   * `data` copied into new device memory in the current stream's order (a table a kernel reads);
   * refused while a graph records, as every host copy is.
   */
  upload(data: ArrayBufferView): Scratch;
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
  kernel(key: string, spec: () => ModuleSpec, name: string, signature: readonly ArgType[]): LaunchKernel<S>;
}

/**
 * Values a launcher derives once per backend and keeps under three strings (op, dtype, variant;
 * '' where it needs fewer): its kernels, mostly. A lookup reads nested maps under strings the launcher already
 * holds, so a launch builds no key: a key string made per launch (a template string, then its hash
 * in the registry's map) cost about as much as the rest of a small op's launch. Each backend has
 * its own entries, dropped with it.
 */
export class LaunchMemo<V> {
  readonly #byContext = new WeakMap<object, Map<string, Map<string, Map<string, V>>>>();

  /** The value kept for `ctx` under (a, b, c), if any. */
  find(ctx: object, a: string, b: string, c: string): V | undefined {
    return this.#entries(ctx).get(a)?.get(b)?.get(c);
  }

  /** Keeps `value` for `ctx` under (a, b, c) and returns it. */
  keep(ctx: object, a: string, b: string, c: string, value: V): V {
    const entries = this.#entries(ctx);
    let byB = entries.get(a);
    if (byB === undefined) entries.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (byC === undefined) byB.set(b, (byC = new Map()));
    byC.set(c, value);
    return value;
  }

  #entries(ctx: object): Map<string, Map<string, Map<string, V>>> {
    let entries = this.#byContext.get(ctx);
    if (entries === undefined) this.#byContext.set(ctx, (entries = new Map()));
    return entries;
  }
}
