/**
 * What runs a product, chosen once per product and backend: cuBLAS, the Hopper kernel of a
 * variant, or a tiled kernel with its launch shape. Choosing costs several times the launch
 * itself (the tuning record's key is a string built per call, then the configuration it names,
 * the variant, the kernel's registry key and its launch shape), and apps run the same products
 * over and over, so each backend keeps its choices per product: the exact sizes, batch, dtype,
 * precision, transposes, alignment, the kernel families allowed, engine and autotune flag; that
 * is everything the choice reads. A tuning record, once found, stays the product's record (the
 * tuner replaces one only to add cuBLAS's time, keeping its kernel), so a kept choice is still the
 * one the record gives.
 */
import type { OpStateKey } from '../../backend/op-states.js';
import { PlanCache } from '../../core/plan-cache.js';
import type { CudaContext } from '../cuda-context.js';
import { cublasHandle } from './cublas.js';
import { heuristicConfig, type MatmulConfig, type MatmulVariant } from './matmul-kernels.js';
import { configByName, variantFor, type Resolved } from './product.js';
import { tiledLaunch, type TiledLaunch } from './tiled.js';
import { tuneMatmul } from './tuning.js';

/** How a product runs (one shape for every engine, so the launch path reads it monomorphically). */
export interface MatmulChoice {
  /** Our kernel's variant; undefined runs cuBLAS. */
  readonly variant: MatmulVariant | undefined;
  /** The tiled kernel and its launch shape; undefined for cuBLAS and the Hopper kernel. */
  readonly tiled: TiledLaunch | undefined;
}

/** Choices per backend; a few hundred products at most are kept (the oldest go first). */
const CHOICES: OpStateKey<PlanCache<MatmulChoice>, CudaContext> = { name: 'matmul choices', create: () => new PlanCache(256) };

const DTYPE_BITS = { f32: 0, f16: 1, bf16: 2 } as const;

/**
 * The choice for a resolved product with `engine` 'auto' or 'kernels': made on its first run (a
 * tuning, when asked for and not yet recorded), then kept.
 */
export function matmulChoice(backend: CudaContext, r: Resolved): MatmulChoice {
  const p = r.params;
  const flags =
    (p.transA ? 1 : 0) |
    (p.transB ? 2 : 0) |
    (r.alignA ? 4 : 0) |
    (r.alignB ? 8 : 0) |
    (r.vecC ? 16 : 0) |
    (p.precision === 'tf32' ? 32 : 0) |
    (p.engine === 'kernels' ? 64 : 0) |
    (p.autotune ? 128 : 0) |
    (r.families[0] === 'wgmma' ? 256 : 0) |
    (DTYPE_BITS[r.dtype] << 9);
  return backend.states.get(CHOICES).get([[p.m, p.n, p.k, p.batch]], flags, () => choose(backend, r));
}

function choose(backend: CudaContext, r: Resolved): MatmulChoice {
  const p = r.params;
  let config: MatmulConfig | undefined;
  if (p.autotune) {
    const record = tuneMatmul(backend, r);
    if (record.choice === 'cublas' && p.engine === 'auto' && cublasHandle(backend, false)) return { variant: undefined, tiled: undefined };
    config = configByName(r, record.kernel);
  }
  config ??= heuristicConfig(r.families, r.dtype, p.m, p.n, p.batch, backend.multiprocessorCount);
  const variant = variantFor(r, config);
  return { variant, tiled: config.family === 'wgmma' ? undefined : tiledLaunch(backend, variant, p.m, p.n) };
}
