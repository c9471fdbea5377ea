/**
 * What the WebGPU op modules need from the backend: the dispatcher, the batch, the device's
 * capabilities and scratch memory, plus the grid helper every 1-D kernel uses.
 */
import type { DType } from '../core/dtype.js';
import type { Logger } from '../core/logger.js';
import type { AutotuneStore } from '../gpu/autotune.js';
import type { TensorView } from '../core/view.js';
import type { CommandBatch } from './command-batch.js';
import type { Dispatcher, Groups } from './dispatcher.js';
import type { GpuTimer } from './gpu-timer.js';
import type { WebGpuDevice } from './webgpu-device.js';
import type { KernelSpec } from './wgsl.js';

/** Device memory for the duration of one op. */
export interface WebGpuScratch {
  /** A dense view of `size` elements of `dtype` starting `offset` elements in. */
  view(dtype: DType, shape: readonly number[], offset?: number): TensorView;
  /** Back to the pool; work recorded later may reuse it at once (one queue orders everything). */
  release(): void;
}

/** The backend as the op modules see it. */
export interface WebGpuOpContext {
  readonly dev: WebGpuDevice;
  readonly dispatcher: Dispatcher;
  readonly batch: CommandBatch;
  /** The subgroup size the row kernels may shuffle in (see `team.ts`), or undefined for none. */
  readonly subgroupSize: number | undefined;
  readonly logger: Logger | undefined;
  /** Times recorded work; undefined where the device cannot be waited for synchronously. */
  readonly timer: GpuTimer | undefined;
  /** Where the matmul autotuner keeps its choices. */
  readonly autotune: AutotuneStore;
  /** Names the device in autotune records (backend type and adapter). */
  readonly deviceKey: string;
  /** `bytes` of device memory for one op. */
  scratch(bytes: number): WebGpuScratch;
}

/** Workgroups for `invocations` invocations in groups of `size`: x up to the device's limit, the rest in y. */
export function groups1d(ctx: WebGpuOpContext, invocations: number, size: number): Groups {
  const total = Math.max(1, Math.ceil(invocations / size));
  const max = ctx.dispatcher.maxGroups;
  if (total <= max) return [total];
  const y = Math.ceil(total / max);
  return [Math.ceil(total / y), y];
}

/** A spec from `cache`, built by `build` on first use of `key`. */
export function cachedSpec(cache: Map<string, KernelSpec>, key: string, build: () => Omit<KernelSpec, 'key'>): KernelSpec {
  let spec = cache.get(key);
  if (!spec) {
    spec = { key, ...build() };
    cache.set(key, spec);
  }
  return spec;
}
