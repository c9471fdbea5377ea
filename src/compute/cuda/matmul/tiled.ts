/**
 * The tiled matmul kernels compiled for the device's own arch: SIMT (f32, and the pre-sm_80
 * fallback) and mma.sync tensor cores (sm_80+), over the whole batch in gridDim.z slices.
 */
import { GpuError } from '../../../errors.js';
import type { ArgType } from '../../../ffi/kernel-args.js';
import { dtypeSize } from '../../core/dtype.js';
import { moduleKey, type ModuleSpec } from '../../gpu/kernel-sources.js';
import type { CudaContext } from '../cuda-context.js';
import type { RegisteredKernel } from '../kernel-registry.js';
import { configName, dynamicSharedBytes, kernelSource, launchShape, type MatmulVariant } from './matmul-kernels.js';
import { raiseSharedLimit, type Resolved } from './product.js';

/** a, b, out, c, bias, m, n, k, batch strides of a, b, c, alpha, beta, activation. */
const GEMM_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i64', 'i64', 'i64', 'f32', 'f32', 'i32'];
/** gridDim.z limit: larger batches are launched in slices. */
export const MAX_GRID_Z = 65535;
const MAX_GRID_X = 2 ** 31 - 1;
/** Per variant: its registry key, module spec and entry point (built once: the lookup is on every launch). */
const variantKeys = new Map<string, { key: string; spec: ModuleSpec; name: string }>();

/** The compiled kernel of a registry-compiled variant, with its dynamic shared memory limit raised as needed. */
function variantKernel(backend: CudaContext, variant: MatmulVariant): RegisteredKernel {
  const cacheKey = `${variant.dtype}:${configName(variant.config)}:${+variant.transA}${+variant.transB}${+variant.alignA}${+variant.alignB}${+variant.vecC}`;
  let entry = variantKeys.get(cacheKey);
  if (entry === undefined) {
    const source = kernelSource(variant);
    const spec = { file: source.file, defines: source.defines };
    entry = { key: `${moduleKey(spec)}#${source.entry}`, spec, name: source.entry };
    variantKeys.set(cacheKey, entry);
  }
  const found = entry;
  const registered = backend.kernel(found.key, () => found.spec, found.name, GEMM_SIGNATURE);
  raiseSharedLimit(registered.kernel, dynamicSharedBytes(variant));
  return registered;
}

/** A tiled variant's kernel and launch shape for one product size: what {@link runTiled} launches. */
export interface TiledLaunch {
  readonly kernel: RegisteredKernel;
  /** Blocks along x (gridDim.z takes the batch). */
  readonly grid: number;
  readonly block: number;
  readonly sharedMemBytes: number;
}

/** The kernel of `variant` and its launch shape for m × n products. */
export function tiledLaunch(backend: CudaContext, variant: MatmulVariant, m: number, n: number): TiledLaunch {
  const kernel = variantKernel(backend, variant);
  const shape = launchShape(variant, m, n, 1);
  if (shape.grid[0] > MAX_GRID_X) throw new GpuError('UNSUPPORTED', `matmul: ${m}x${n} needs more blocks than one launch holds`);
  return { kernel, grid: shape.grid[0], block: shape.block, sharedMemBytes: shape.sharedMemBytes };
}

/** Queues the SIMT or mma.sync kernel of `tiled` (made for this product's m and n) over the whole batch (in gridDim.z slices). */
export function runTiled(backend: CudaContext, r: Resolved, tiled: TiledLaunch): void {
  const p = r.params;
  const stream = backend.enqueue(p.a, p.b, p.out, p.c, p.bias);
  const elem = BigInt(dtypeSize[r.dtype]);
  for (let z0 = 0; z0 < p.batch; z0 += MAX_GRID_Z) {
    const slice = Math.min(MAX_GRID_Z, p.batch - z0);
    tiled.kernel.launch(
      // One slice as a number grid: the launcher's repeated-shape test compares two numbers, not an array.
      { grid: slice === 1 ? tiled.grid : [tiled.grid, 1, slice], block: tiled.block, sharedMemBytes: tiled.sharedMemBytes, stream },
      sliceAt(r.a, z0, p.aBatchStride, elem),
      sliceAt(r.b, z0, p.bBatchStride, elem),
      sliceAt(r.out, z0, p.m * p.n, elem),
      sliceAt(r.c, z0, p.cBatchStride, elem),
      r.bias,
      p.m,
      p.n,
      p.k,
      p.aBatchStride,
      p.bBatchStride,
      p.cBatchStride,
      p.alpha,
      p.beta,
      r.act,
    );
  }
}

/** The address of batch entry `z0` of an operand at `base` (0 stays 0: an absent operand). */
function sliceAt(base: bigint, z0: number, stride: number, elem: bigint): bigint {
  return base === 0n || z0 === 0 ? base : base + BigInt(z0 * stride) * elem;
}
