/**
 * Matmul on the CUDA backend: the engine choice. It resolves the product for the device (the
 * kernel families it allows: wgmma with TMA on sm_90, mma.sync tensor cores from sm_80, SIMT f32
 * and the pre-sm_80 fallback), then picks a tile configuration by the autotuner's measurement
 * (timed once per problem class and device, kept on disk) or the heuristic; or runs cuBLAS
 * (`engine: 'cublas'`, or `'auto'` when it measured faster). Everything is queued on the
 * backend's current stream.
 */
import { GpuError } from '../../../errors.js';
import type { MatmulParams } from '../../core/matmul-plan.js';
import type { CudaContext } from '../cuda-context.js';
import { cublasHandle, runCublas } from './cublas.js';
import { matmulChoice } from './choice.js';
import { runVariant } from './launch.js';
import { candidateConfigs, configName } from './matmul-kernels.js';
import { configByName, resolve, variantFor } from './product.js';
import { runTiled } from './tiled.js';

/** Runs `params` on `backend` (validated by the front-end; never an empty output). */
export function cudaMatmul(backend: CudaContext, params: MatmulParams): void {
  const r = resolve(backend, params);
  if (params.engine === 'cublas') {
    runCublas(backend, cublasHandle(backend, true)!, r);
    return;
  }
  const choice = matmulChoice(backend, r);
  if (choice.tiled) runTiled(backend, r, choice.tiled);
  else if (choice.variant) runVariant(backend, r, choice.variant);
  else runCublas(backend, cublasHandle(backend, false)!, r);
}

/**
 * Runs `params` with our kernel in the tile configuration named `config` (see `configName`),
 * bypassing engine choice and tuning: for tests and tools that must reach every configuration,
 * including the SIMT fallback of GPUs without tensor cores.
 * @throws GpuError when no kernel family of this product and device has that configuration.
 */
export function cudaMatmulWithConfig(backend: CudaContext, params: MatmulParams, config: string): void {
  const r = resolve(backend, params, true);
  const chosen = configByName(r, config);
  if (!chosen) {
    const names = r.families.flatMap((f) => candidateConfigs(f, r.dtype).map(configName)).join(', ');
    throw new GpuError('UNSUPPORTED', `matmul: ${config} is not a kernel configuration for this product (candidates: ${names})`);
  }
  runVariant(backend, r, variantFor(r, chosen));
}

