/**
 * Matmul on the CUDA backend. Picks the kernel families the device and operands allow (wgmma
 * with TMA on sm_90, mma.sync tensor cores from sm_80, SIMT f32 and the pre-sm_80 fallback),
 * then a tile configuration, by the autotuner's measurement (timed once per problem class and
 * device, kept on disk) or the heuristic; or runs cuBLAS (`engine: 'cublas'`, or `'auto'` when
 * it measured faster) followed by the epilogue kernel. Everything is queued on the backend's
 * current stream.
 */
import { CublasHandle } from '../../../cublas/handle.js';
import type { Kernel } from '../../../driver/kernel.js';
import { Module } from '../../../driver/module.js';
import { occupancyMaxActiveClusters } from '../../../driver/raw/occupancy.js';
import { GpuError } from '../../../errors.js';
import { bytes, f32, i32, i64, ptr, type ArgType } from '../../../ffi/kernel-args.js';
import { AutotuneStore, problemClassKey, type AutotuneRecord } from '../../gpu/autotune.js';
import type { MatmulParams } from '../../core/matmul-plan.js';
import { dtypeSize } from '../../core/dtype.js';
import type { TensorView } from '../../core/view.js';
import type { CudaBackend } from '../cuda-backend.js';
import { gridFor, type RegisteredKernel } from '../kernel-registry.js';
import { compileKernelModule, moduleKey } from '../../gpu/kernel-sources.js';
import {
  ACTIVATION_CODES,
  blockThreads,
  candidateConfigs,
  configName,
  dynamicSharedBytes,
  epilogueVectorOk,
  heuristicConfig,
  kernelSource,
  launchShape,
  operandAligned,
  WGMMA_BM,
  wgmmaEnabled,
  type MatmulConfig,
  type MatmulFamily,
  type MatmulVariant,
  type WgmmaConfig,
} from './matmul-kernels.js';
import { timeLaunches } from './timing.js';
import { encodeTiledMatrix, TENSOR_MAP_ALIGNMENT, TENSOR_MAP_BYTES, TensorMapDataType } from '../tensor-map.js';

/** a, b, out, c, bias, m, n, k, batch strides of a, b, c, alpha, beta, activation. */
const GEMM_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i64', 'i64', 'i64', 'f32', 'f32', 'i32'];
/** out, c, bias, total, m, n, c batch stride, beta, activation. */
const EPILOGUE_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64', 'i32', 'i32', 'i64', 'f32', 'i32'];
/** gridDim.z limit: larger batches are launched in slices. */
const MAX_GRID_Z = 65535;
const MAX_GRID_X = 2 ** 31 - 1;
const EPILOGUE_BLOCK_LIMIT = 256;
/** Besides the wgmma tiles, the Hopper autotuner also tries these mma.sync tiles (they win on small products). */
const HOPPER_MMA_CANDIDATES = 2;

/** A loaded Hopper kernel and how many of its blocks fit on the device at once (its persistent grid). */
interface HopperKernel {
  readonly kernel: Kernel;
  readonly residentBlocks: number;
}

/** What one product needs resolved before it runs. */
interface Resolved {
  readonly params: MatmulParams;
  readonly dtype: 'f32' | 'f16' | 'bf16';
  /** Families to consider, most preferred first. */
  readonly families: readonly MatmulFamily[];
  readonly a: bigint;
  readonly b: bigint;
  readonly out: bigint;
  readonly c: bigint;
  readonly bias: bigint;
  readonly act: number;
  readonly alignA: boolean;
  readonly alignB: boolean;
  /** The SIMT epilogue may use 16-byte accesses. */
  readonly vecC: boolean;
}

/** Per-backend matmul state: the cuBLAS handle (created on first need) and the sm_90a modules. */
interface MatmulState {
  cublas: CublasHandle | undefined;
  /** Why cuBLAS is not usable here, once it failed to load. */
  cublasUnavailable: Error | undefined;
  readonly store: AutotuneStore;
  /** Hopper kernels by module key (compiled for sm_90a, outside the registry's device-arch modules). */
  readonly hopper: Map<string, HopperKernel>;
  readonly hopperModules: Module[];
}

const states = new WeakMap<CudaBackend, MatmulState>();
const variantKeys = new Map<string, string>();
const mapA = new Uint8Array(TENSOR_MAP_BYTES);
const mapB = new Uint8Array(TENSOR_MAP_BYTES);

function stateOf(backend: CudaBackend): MatmulState {
  let state = states.get(backend);
  if (!state) {
    state = { cublas: undefined, cublasUnavailable: undefined, store: AutotuneStore.shared(), hopper: new Map(), hopperModules: [] };
    states.set(backend, state);
  }
  return state;
}

/** Runs `params` on `backend` (validated by the front-end; never an empty output). */
export function cudaMatmul(backend: CudaBackend, params: MatmulParams): void {
  const r = resolve(backend, params);
  const state = stateOf(backend);
  if (params.engine === 'cublas') {
    runCublas(backend, cublasHandle(backend, state, true)!, r);
    return;
  }
  let config: MatmulConfig | undefined;
  if (params.autotune) {
    const record = tuneMatmul(backend, r);
    const cublas = record.choice === 'cublas' && params.engine === 'auto' ? cublasHandle(backend, state, false) : undefined;
    if (cublas) {
      runCublas(backend, cublas, r);
      return;
    }
    config = configByName(r, record.kernel);
  }
  config ??= heuristicConfig(r.families, r.dtype, params.m, params.n, params.batch, backend.multiprocessorCount);
  runKernel(backend, r, variantFor(r, config));
}

/**
 * Runs `params` with our kernel in the tile configuration named `config` (see `configName`),
 * bypassing engine choice and tuning: for tests and tools that must reach every configuration,
 * including the SIMT fallback of GPUs without tensor cores.
 * @throws GpuError when no kernel family of this product and device has that configuration.
 */
export function cudaMatmulWithConfig(backend: CudaBackend, params: MatmulParams, config: string): void {
  const r = resolve(backend, params, true);
  const chosen = configByName(r, config);
  if (!chosen) {
    const names = r.families.flatMap((f) => candidateConfigs(f, r.dtype).map(configName)).join(', ');
    throw new GpuError('UNSUPPORTED', `matmul: ${config} is not a kernel configuration for this product (candidates: ${names})`);
  }
  runKernel(backend, r, variantFor(r, chosen));
}

/**
 * Destroys the backend's cuBLAS handle and unloads its Hopper modules. The CUDA backend calls
 * this from `dispose()` before it releases its context (both belong to the context).
 */
export function releaseCudaMatmul(backend: CudaBackend): void {
  const state = states.get(backend);
  if (!state) return;
  states.delete(backend);
  state.cublas?.dispose();
  for (const module of state.hopperModules) module.dispose();
}

/**
 * Addresses, alignment and candidate families of a product. `withFallback` adds the SIMT
 * family everywhere (tests reach the pre-sm_80 kernel with it).
 */
function resolve(backend: CudaBackend, params: MatmulParams, withFallback = false): Resolved {
  const dtype = params.out.dtype;
  if (dtype === 'i32') throw new GpuError('UNSUPPORTED', 'matmul has no i32 kernel');
  const { major, minor } = backend.device.computeCapability;
  const elem = dtypeSize[dtype];
  const a = backend.address(params.a);
  const b = backend.address(params.b);
  const out = backend.address(params.out);
  const c = params.c ? backend.address(params.c) : 0n;
  const bias = params.bias ? backend.address(params.bias) : 0n;
  const strideAligned = (stride: number) => (stride * elem) % 16 === 0;
  const alignA = operandAligned(a, params.transA ? params.m : params.k, elem) && strideAligned(params.aBatchStride);
  const alignB = operandAligned(b, params.transB ? params.k : params.n, elem) && strideAligned(params.bBatchStride);
  const epilogue = [out, ...(params.c ? [c] : []), ...(params.bias ? [bias] : [])];
  // f32 uses tensor cores only when TF32 is allowed.
  const tensorCores = dtype !== 'f32' || params.precision === 'tf32';
  const families: MatmulFamily[] = [];
  if (tensorCores && major === 9 && minor === 0 && wgmmaEnabled() && wgmmaEligible(params, dtype, alignA, alignB)) families.push('wgmma');
  if (tensorCores && major >= 8) families.push('mma');
  if (families.length === 0 || withFallback) families.push('simt');
  return {
    params,
    dtype,
    families,
    a,
    b,
    out,
    c,
    bias,
    act: ACTIVATION_CODES[params.activation ?? 'none'],
    alignA,
    alignB,
    vecC: dtype === 'f32' && epilogueVectorOk(params.n, epilogue),
  };
}

/**
 * TMA reads 16-byte-aligned rows. 16-bit operands go as they are (wgmma transposes M/N-major
 * ones); tf32 wgmma reads K-major operands only, so others are transposed first into
 * k-contiguous copies, whose rows are k·4 bytes.
 */
function wgmmaEligible(p: MatmulParams, dtype: 'f32' | 'f16' | 'bf16', alignA: boolean, alignB: boolean): boolean {
  if (dtype !== 'f32') return alignA && alignB;
  const kRows = p.k % 4 === 0;
  return kRows && (p.transA ? true : alignA) && (p.transB ? alignB : true);
}

function configByName(r: Resolved, name: string): MatmulConfig | undefined {
  for (const family of r.families) {
    const config = candidateConfigs(family, r.dtype).find((c) => configName(c) === name);
    if (config) return config;
  }
  return undefined;
}

function variantFor(r: Resolved, config: MatmulConfig): MatmulVariant {
  const p = r.params;
  // tf32 wgmma runs on K-major copies (see runWgmma).
  const kMajorCopies = config.family === 'wgmma' && r.dtype === 'f32';
  return {
    config,
    dtype: r.dtype,
    transA: kMajorCopies ? false : p.transA,
    transB: kMajorCopies ? true : p.transB,
    alignA: kMajorCopies || r.alignA,
    alignB: kMajorCopies || r.alignB,
    vecC: config.family === 'simt' && r.vecC,
  };
}

/** Candidates the autotuner times: every configuration of the families, few mma ones beside wgmma. */
function tuningCandidates(r: Resolved): MatmulConfig[] {
  return r.families.flatMap((family) => {
    const all = candidateConfigs(family, r.dtype);
    return family === 'mma' && r.families.includes('wgmma') ? all.slice(-HOPPER_MMA_CANDIDATES) : [...all];
  });
}

/** The compiled kernel of a registry-compiled variant, with its dynamic shared memory limit raised as needed. */
function variantKernel(backend: CudaBackend, variant: MatmulVariant): RegisteredKernel {
  const source = kernelSource(variant);
  const spec = { file: source.file, defines: source.defines };
  const cacheKey = `${variant.dtype}:${configName(variant.config)}:${+variant.transA}${+variant.transB}${+variant.alignA}${+variant.alignB}${+variant.vecC}`;
  let key = variantKeys.get(cacheKey);
  if (key === undefined) {
    key = `${moduleKey(spec)}#${source.entry}`;
    variantKeys.set(cacheKey, key);
  }
  const registered = backend.kernel(key, () => spec, source.entry, GEMM_SIGNATURE);
  raiseSharedLimit(registered.kernel, dynamicSharedBytes(variant));
  return registered;
}

/**
 * A Hopper kernel: compiled for sm_90a (the registry compiles for the device's plain arch),
 * loaded once per backend, with its device capacity (clusters need SMs of one GPC, so the
 * driver counts them).
 */
function hopperKernel(backend: CudaBackend, variant: MatmulVariant, config: WgmmaConfig): HopperKernel {
  const state = stateOf(backend);
  const source = kernelSource(variant);
  const spec = { file: source.file, defines: source.defines };
  const key = moduleKey(spec);
  let hopper = state.hopper.get(key);
  if (!hopper) {
    backend.context.makeCurrent();
    const compiled = compileKernelModule(spec, backend.registry.sources, { arch: source.arch ?? 'sm_90a' });
    backend.logger?.debug(`kernel ${key}: ${compiled.cacheHit ? 'cache hit' : 'compiled'} for ${compiled.arch} in ${compiled.compileMs.toFixed(1)} ms`);
    const module = Module.load(backend.context, compiled.image);
    state.hopperModules.push(module);
    const kernel = module.getFunction(source.entry);
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
    hopper = { kernel, residentBlocks };
    state.hopper.set(key, hopper);
  }
  return hopper;
}

function raiseSharedLimit(kernel: Kernel, bytes: number): void {
  if (bytes > kernel.attributes.maxDynamicSharedSizeBytes) kernel.setMaxDynamicSharedMemory(bytes);
}

/** Queues the kernel of `variant` over the whole batch (in gridDim.z slices). */
function runKernel(backend: CudaBackend, r: Resolved, variant: MatmulVariant): void {
  if (variant.config.family === 'wgmma') {
    runWgmma(backend, r, variant, variant.config);
    return;
  }
  const p = r.params;
  const stream = backend.enqueue(p.a, p.b, p.out, p.c, p.bias);
  const kernel = variantKernel(backend, variant);
  const shape = launchShape(variant, p.m, p.n, 1);
  if (shape.grid[0] > MAX_GRID_X) throw new GpuError('UNSUPPORTED', `matmul: ${p.m}x${p.n} needs more blocks than one launch holds`);
  const elem = BigInt(dtypeSize[r.dtype]);
  for (let z0 = 0; z0 < p.batch; z0 += MAX_GRID_Z) {
    const slice = Math.min(MAX_GRID_Z, p.batch - z0);
    const at = (base: bigint, stride: number) => (base === 0n || z0 === 0 ? base : base + BigInt(z0 * stride) * elem);
    kernel.launch(
      { grid: [shape.grid[0], 1, slice], block: shape.block, sharedMemBytes: shape.sharedMemBytes, stream },
      at(r.a, p.aBatchStride),
      at(r.b, p.bBatchStride),
      at(r.out, p.m * p.n),
      at(r.c, p.cBatchStride),
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

/**
 * The Hopper kernel: encodes the TMA maps of A and B (k-contiguous copies first for tf32
 * operands that are not) and launches 384-thread blocks over 128 × BN tiles.
 */
function runWgmma(backend: CudaBackend, r: Resolved, variant: MatmulVariant, config: WgmmaConfig): void {
  const p = r.params;
  const { kernel, residentBlocks } = hopperKernel(backend, variant, config);
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
      encodeTiledMatrix(
        variant.transA
          ? { dataType, elementBytes: elem, address: shift(a, aStride), cols: p.m, rows: p.k, batch: aStride ? slice : 1, batchStride: aStride, boxCols: 64, boxRows: bk }
          : { dataType, elementBytes: elem, address: shift(a, aStride), cols: p.k, rows: p.m, batch: aStride ? slice : 1, batchStride: aStride, boxCols: bk, boxRows: WGMMA_BM },
        mapA,
      );
      encodeTiledMatrix(
        variant.transB
          ? { dataType, elementBytes: elem, address: shift(b, bStride), cols: p.k, rows: p.n, batch: bStride ? slice : 1, batchStride: bStride, boxCols: bk, boxRows: config.bn / config.cluster }
          : { dataType, elementBytes: elem, address: shift(b, bStride), cols: p.n, rows: p.k, batch: bStride ? slice : 1, batchStride: bStride, boxCols: 64, boxRows: bk },
        mapB,
      );
      kernel.launch({ grid: shape.grid, block: shape.block, sharedMemBytes: shape.sharedMemBytes, stream }, [
        bytes(mapA, TENSOR_MAP_ALIGNMENT),
        bytes(mapB, TENSOR_MAP_ALIGNMENT),
        ptr(shift(r.out, p.m * p.n)),
        ptr(r.c === 0n ? 0n : shift(r.c, p.cBatchStride)),
        ptr(r.bias),
        i32(p.m),
        i32(p.n),
        i32(p.k),
        i32(slice),
        i32(aStride ? 1 : 0),
        i32(bStride ? 1 : 0),
        i64(p.cBatchStride),
        f32(p.alpha),
        f32(p.beta),
        i32(r.act),
      ]);
    }
  } finally {
    // Pool blocks are stream-ordered: freeing after the launch is queued is safe.
    for (const t of temps) backend.free(t.buffer);
  }
}

/** `batch` matrices rows × cols of `view` transposed into a new pool buffer (cols × rows each). */
function transposedCopy(backend: CudaBackend, view: TensorView, batch: number, rows: number, cols: number): TensorView {
  const size = batch * rows * cols;
  const buffer = backend.alloc(size * dtypeSize[view.dtype]);
  const src: TensorView = { buffer: view.buffer, dtype: view.dtype, shape: [batch, rows, cols], offset: view.offset, size };
  const dst: TensorView = { buffer, dtype: view.dtype, shape: [batch, cols, rows], offset: 0, size };
  backend.transpose(src, dst, batch, rows, cols);
  return dst;
}

/** The backend's cuBLAS handle; undefined when cuBLAS cannot be loaded (or throws when `required`). */
function cublasHandle(backend: CudaBackend, state: MatmulState, required: boolean): CublasHandle | undefined {
  if (!state.cublas && !state.cublasUnavailable) {
    try {
      state.cublas = new CublasHandle(backend.context);
      backend.logger?.debug(`matmul: cuBLAS ${state.cublas.version} ready`);
    } catch (err) {
      state.cublasUnavailable = err instanceof Error ? err : new Error(String(err));
      backend.logger?.debug(`matmul: cuBLAS unavailable: ${state.cublasUnavailable.message}`);
    }
  }
  if (state.cublasUnavailable && required) throw state.cublasUnavailable;
  return state.cublas;
}

/** alpha·op(A)·op(B) by cuBLAS into out, then beta·C, bias and the activation by the epilogue kernel. */
function runCublas(backend: CudaBackend, handle: CublasHandle, r: Resolved): void {
  const p = r.params;
  const stream = backend.enqueue(p.a, p.b, p.out, p.c, p.bias);
  handle.gemm({
    dtype: r.dtype,
    tf32: p.precision === 'tf32',
    transA: p.transA,
    transB: p.transB,
    m: p.m,
    n: p.n,
    k: p.k,
    alpha: p.alpha,
    beta: 0,
    a: r.a,
    b: r.b,
    c: r.out,
    batch: p.batch,
    strideA: p.aBatchStride,
    strideB: p.bBatchStride,
    strideC: p.m * p.n,
    stream: stream.handle,
  });
  if (r.c === 0n && r.bias === 0n && r.act === 0) return;
  const source = { file: 'matmul_epilogue.cu', defines: { GC_DTYPE: { f32: 'GC_F32', f16: 'GC_F16', bf16: 'GC_BF16' }[r.dtype] } };
  const kernel = backend.kernel(`matmul_epilogue:${r.dtype}`, () => source, 'matmul_epilogue', EPILOGUE_SIGNATURE);
  const launch = kernel.shape(EPILOGUE_BLOCK_LIMIT);
  const total = p.batch * p.m * p.n;
  kernel.launch({ grid: gridFor(total, launch), block: launch.block, stream }, r.out, r.c, r.bias, total, p.m, p.n, p.cBatchStride, p.beta, r.act);
}

/**
 * The tuning record for this product's class: read from the store, or measured now by timing
 * every candidate configuration (and cuBLAS, for engine 'auto') on the real operands with
 * events on the current stream, then stored. Candidates that fail to build or launch are skipped.
 */
function tuneMatmul(backend: CudaBackend, r: Resolved): AutotuneRecord {
  const p = r.params;
  const state = stateOf(backend);
  const key = problemClassKey({
    device: backend.device.name,
    dtype: r.dtype,
    precision: r.dtype === 'f32' ? p.precision : 'highest',
    transA: p.transA,
    transB: p.transB,
    m: p.m,
    n: p.n,
    k: p.k,
    batch: p.batch,
    alignA: r.alignA,
    alignB: r.alignB,
    vecC: r.vecC,
  });
  const cublas = p.engine === 'auto' ? cublasHandle(backend, state, false) : undefined;
  const known = state.store.get(key);
  if (known && (!cublas || known.cublasMs !== undefined)) return known;
  if (known) {
    // Tuned before with engine 'kernels' (or without cuBLAS): only cuBLAS is left to time.
    const cublasMs = timeLaunches(backend, () => runCublas(backend, cublas!, r));
    const record: AutotuneRecord = {
      ...known,
      choice: cublasMs < known.kernelMs ? 'cublas' : known.kernel,
      cublasMs,
      candidates: { ...known.candidates, cublas: cublasMs },
      measuredAt: new Date().toISOString(),
    };
    state.store.set(key, record);
    return record;
  }

  const times: Record<string, number> = {};
  let best: { name: string; ms: number } | undefined;
  const optin = backend.device.sharedMemoryPerBlockOptin;
  for (const config of tuningCandidates(r)) {
    const variant = variantFor(r, config);
    if (dynamicSharedBytes(variant) > optin) continue;
    const name = configName(config);
    try {
      const ms = timeLaunches(backend, () => runKernel(backend, r, variant));
      times[name] = ms;
      if (!best || ms < best.ms) best = { name, ms };
    } catch (err) {
      backend.logger?.debug(`matmul autotune: ${name} skipped: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!best) throw new GpuError('UNSUPPORTED', `matmul: no kernel configuration runs for ${key}`);
  let cublasMs: number | undefined;
  if (cublas) {
    cublasMs = timeLaunches(backend, () => runCublas(backend, cublas, r));
    times.cublas = cublasMs;
  }
  const record: AutotuneRecord = {
    choice: cublasMs !== undefined && cublasMs < best.ms ? 'cublas' : best.name,
    kernel: best.name,
    kernelMs: best.ms,
    ...(cublasMs === undefined ? {} : { cublasMs }),
    candidates: times,
    measuredAt: new Date().toISOString(),
  };
  state.store.set(key, record);
  backend.logger?.debug(`matmul autotune ${key}: ${JSON.stringify(times)} → ${record.choice}`);
  return record;
}
