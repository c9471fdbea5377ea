/**
 * The Hopper matmul (wgmma with TMA and warp specialisation, sm_90a): A and B read through
 * tensor maps, encoded when an operand changes (K-major copies first for tf32 operands that are
 * not), 128 × BN tiles on a persistent grid sized by the kernel's residency.
 */
import { occupancyMaxActiveClusters } from '../../../driver/raw/occupancy.js';
import { GpuError } from '../../../errors.js';
import type { ArgType } from '../../../ffi/kernel-args.js';
import type { OpStateKey } from '../../backend/op-states.js';
import { dtypeSize } from '../../core/dtype.js';
import type { TensorView } from '../../core/view.js';
import type { BoundKernel } from '../../../driver/kernel.js';
import { moduleKey } from '../../gpu/kernel-sources.js';
import type { CudaBuffer, CudaContext } from '../cuda-context.js';
import { TensorMapDataType, TiledMatrixMap } from '../tensor-map.js';
import { blockThreads, configName, dynamicSharedBytes, kernelSource, launchShape, WGMMA_BM, type MatmulVariant, type WgmmaConfig } from './matmul-kernels.js';
import { raiseSharedLimit, type Resolved } from './product.js';
import { MAX_GRID_Z } from './tiled.js';

/** A map of A, one of B, out, c, bias, m, n, k, batch, A batched, B batched, c's batch stride, alpha, beta, activation. */
const SIGNATURE: readonly ArgType[] = ['tensorMap', 'tensorMap', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i64', 'f32', 'f32', 'i32'];

/**
 * A loaded Hopper kernel, its launcher, how many of its blocks fit on the device at once (its
 * persistent grid), and its operands' tensor maps (re-encoded only when an operand changes).
 */
interface HopperKernel {
  readonly launch: BoundKernel;
  readonly residentBlocks: number;
  readonly mapA: TiledMatrixMap;
  readonly mapB: TiledMatrixMap;
}

/** The Hopper kernels this backend loaded, by module key, with their residency. */
const HOPPER_KERNELS: OpStateKey<Map<string, HopperKernel>, CudaContext> = { name: 'matmul hopper kernels', create: () => new Map() };

/**
 * A Hopper kernel (the registry compiles and loads it for the spec's sm_90a), with its device
 * capacity (clusters need SMs of one GPC, so the driver counts them), measured once per backend.
 */
function hopperKernel(backend: CudaContext, variant: MatmulVariant, config: WgmmaConfig): HopperKernel {
  const kernels = backend.states.get(HOPPER_KERNELS);
  const source = kernelSource(variant);
  const key = moduleKey(source);
  let hopper = kernels.get(key);
  if (!hopper) {
    const kernel = backend.registry.function(source, source.entry);
    const smem = dynamicSharedBytes(variant);
    raiseSharedLimit(kernel, smem);
    const threads = blockThreads(config);
    const residentBlocks =
      config.cluster > 1
        ? occupancyMaxActiveClusters(kernel.handle, {
            grid: [config.cluster * backend.multiprocessorCount, 1, 1],
            block: [threads, 1, 1],
            sharedMemBytes: smem,
            stream: 0n,
          }) * config.cluster
        : kernel.occupancy.maxActiveBlocksPerMultiprocessor(threads, smem) * backend.multiprocessorCount;
    if (residentBlocks < config.cluster) throw new GpuError('UNSUPPORTED', `matmul: ${configName(config)} does not fit on this device`);
    hopper = { launch: kernel.bind(SIGNATURE), residentBlocks, mapA: new TiledMatrixMap(), mapB: new TiledMatrixMap() };
    kernels.set(key, hopper);
  }
  return hopper;
}

/**
 * The Hopper kernel: encodes the TMA maps of A and B (k-contiguous copies first for tf32
 * operands that are not) and launches 384-thread blocks over 128 × BN tiles.
 */
export function runWgmma(backend: CudaContext, r: Resolved, variant: MatmulVariant, config: WgmmaConfig): void {
  const p = r.params;
  const { launch, residentBlocks, mapA, mapB } = hopperKernel(backend, variant, config);
  const elem = dtypeSize[r.dtype];
  const temps: TensorView[] = [];
  try {
    let a = r.a;
    let b = r.b;
    let aStride = p.aBatchStride;
    let bStride = p.bBatchStride;
    if (variant.transA !== p.transA) {
      const copy = transposedCopy(backend, p.a, p.aBatchStride === 0 ? 1 : p.batch, p.k, p.m);
      temps.push(copy);
      a = backend.address(copy);
      aStride = p.aBatchStride === 0 ? 0 : p.m * p.k;
    }
    if (variant.transB !== p.transB) {
      const copy = transposedCopy(backend, p.b, p.bBatchStride === 0 ? 1 : p.batch, p.k, p.n);
      temps.push(copy);
      b = backend.address(copy);
      bStride = p.bBatchStride === 0 ? 0 : p.n * p.k;
    }
    const stream = backend.enqueue(p.a, p.b, p.out, p.c, p.bias, ...temps);
    const dataType = r.dtype === 'f16' ? TensorMapDataType.FLOAT16 : r.dtype === 'bf16' ? TensorMapDataType.BFLOAT16 : TensorMapDataType.FLOAT32;
    const bk = 128 / elem;
    for (let z0 = 0; z0 < p.batch; z0 += MAX_GRID_Z) {
      const slice = Math.min(MAX_GRID_Z, p.batch - z0);
      const shape = launchShape(variant, p.m, p.n, slice, residentBlocks);
      const shift = (base: bigint, stride: number) => (z0 === 0 || stride === 0 ? base : base + BigInt(z0 * stride * elem));
      // K-major operands: boxes of (128 bytes of k) × the tile's rows (B's divided among the
      // cluster's CTAs, which multicast their parts); M/N-major: 64 × BK boxes.
      const mapOfA = mapA.encode(
        variant.transA
          ? { dataType, elementBytes: elem, address: shift(a, aStride), cols: p.m, rows: p.k, batch: aStride ? slice : 1, batchStride: aStride, boxCols: 64, boxRows: bk }
          : { dataType, elementBytes: elem, address: shift(a, aStride), cols: p.k, rows: p.m, batch: aStride ? slice : 1, batchStride: aStride, boxCols: bk, boxRows: WGMMA_BM },
      );
      const mapOfB = mapB.encode(
        variant.transB
          ? { dataType, elementBytes: elem, address: shift(b, bStride), cols: p.k, rows: p.n, batch: bStride ? slice : 1, batchStride: bStride, boxCols: bk, boxRows: config.bn / config.cluster }
          : { dataType, elementBytes: elem, address: shift(b, bStride), cols: p.n, rows: p.k, batch: bStride ? slice : 1, batchStride: bStride, boxCols: 64, boxRows: bk },
      );
      launch(
        { grid: shape.grid, block: shape.block, sharedMemBytes: shape.sharedMemBytes, stream },
        mapOfA,
        mapOfB,
        shift(r.out, p.m * p.n),
        r.c === 0n ? 0n : shift(r.c, p.cBatchStride),
        r.bias,
        p.m,
        p.n,
        p.k,
        slice,
        aStride ? 1 : 0,
        bStride ? 1 : 0,
        p.cBatchStride,
        p.alpha,
        p.beta,
        r.act,
      );
    }
  } finally {
    // Pool blocks are stream-ordered: freeing after the launch is queued is safe.
    for (const t of temps) backend.free(t.buffer as CudaBuffer);
  }
}

/** `batch` matrices rows × cols of `view` transposed into a new pool buffer (cols × rows each). */
function transposedCopy(backend: CudaContext, view: TensorView, batch: number, rows: number, cols: number): TensorView {
  const size = batch * rows * cols;
  const buffer = backend.alloc(size * dtypeSize[view.dtype]);
  const src: TensorView = { buffer: view.buffer, dtype: view.dtype, shape: [batch, rows, cols], offset: view.offset, size };
  const dst: TensorView = { buffer, dtype: view.dtype, shape: [batch, cols, rows], offset: 0, size };
  try {
    backend.transpose(src, dst, batch, rows, cols);
  } catch (err) {
    backend.free(buffer);
    throw err;
  }
  return dst;
}

