/** Runs one kernel variant of a resolved product: the Hopper kernel, or a tiled one. */
import type { CudaContext } from '../cuda-context.js';
import type { MatmulVariant } from './matmul-kernels.js';
import type { Resolved } from './product.js';
import { runTiled, tiledLaunch } from './tiled.js';
import { runWgmma } from './wgmma.js';

/** Queues the kernel of `variant` over the whole batch. */
export function runVariant(backend: CudaContext, r: Resolved, variant: MatmulVariant): void {
  if (variant.config.family === 'wgmma') runWgmma(backend, r, variant, variant.config);
  else runTiled(backend, r, tiledLaunch(backend, variant, r.params.m, r.params.n));
}
