/**
 * Attention forward on the CUDA backend: on sm_90 the Hopper (wgmma + TMA) kernel for f16/bf16 at
 * head dims that are multiples of 8 (up to 256) once a problem is large enough, else the
 * tensor-core (mma.sync) flash-attention kernel for f16/bf16 on sm_80 and up, and the CUDA-core
 * kernel for f32 (and for f16/bf16 on older GPUs). Within a family
 * the first candidate tile whose shared memory fits the device runs. Few query rows against many
 * keys (decode shapes, `decodeRouted`) take the split-key kernels of attention-decode.ts instead,
 * tensor-core or CUDA-core as above. `config` overrides the choice (tests reach every kernel with
 * it, the benchmark times the alternatives).
 * The Hopper kernel (its spec names sm_90a, so the registry builds it for that) reads q, k and v
 * through TMA tensor maps, encoded here when their tensors change. The only memory used besides
 * the inputs and outputs is the kernels' shared memory, and the split-key kernels' partial results.
 */
import { GpuError } from '../../../errors.js';
import type { ArgType } from '../../../ffi/kernel-args.js';
import type { OpStateKey } from '../../backend/op-states.js';
import type { AttentionParams } from '../../core/attention-params.js';
import type { DType } from '../../core/dtype.js';
import { PlanCache } from '../../core/plan-cache.js';
import {
  attentionConfigName,
  attentionSharedBytes,
  attentionSpec,
  ATTENTION_ENTRY,
  blockRows,
  configHeadDim,
  mmaCandidates,
  paddedHeadDim,
  simtCandidates,
  threadsPerBlock,
  wgmmaBalanced,
  wgmmaConfig,
  wgmmaPersistent,
  type AttentionKernelConfig,
} from './attention-kernels.js';
import type { CudaContext } from '../cuda-context.js';
import type { RegisteredKernel } from '../kernel-registry.js';
import { moduleKey } from '../../gpu/kernel-sources.js';
import { cudaAttentionDecode } from './attention-decode.js';
import { decodeConfig, decodeGroupRows, decodeRouted, decodeSharedBytes } from './attention-decode-kernels.js';
import { TensorMapDataType, TiledMatrixMap } from '../tensor-map.js';

/** q, k, v, out, lse, keyLengths, bh0, heads, group, seqQ, seqK, headDim, scale·log2(e), causal. */
const SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'f32', 'i32'];
/** The Hopper kernel's: the tensor maps of q, k and v, out, lse, keyLengths, pairs, then as above from heads. */
const WGMMA_SIGNATURE: readonly ArgType[] = ['tensorMap', 'tensorMap', 'tensorMap', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'f32', 'i32'];
/** gridDim.y limit: more (batch, head) pairs are launched in slices. */
const MAX_GRID_Y = 65535;
/** Work items the Hopper kernel numbers in 32-bit ints (its snake order reaches twice the grid past the count). */
const MAX_WGMMA_ITEMS = 2 ** 29;

/**
 * Fewest flops for which the Hopper kernel runs by default. Far below, a call is host-bound and
 * the Hopper launch costs more host time (three tensor maps encoded per call): H200, f16 B8 H8/2
 * Sq50 Sk7121 D32 causal (2·10^7 flops, 7 µs of kernel) took 36 µs per call against the mma.sync
 * kernel's 30. From about 10^9 flops the mma.sync kernel's slower rate (2.5x at head dim 256)
 * costs more than that.
 */
const WGMMA_MIN_FLOPS = 2 ** 30;

/** 4·B·H·Sq·D times the keys a row sees on average (under the causal mask about half of Sq, at most Sk). */
function attentionFlops(p: AttentionParams): number {
  const keys = p.causal ? Math.min(p.seqK, (p.seqQ + 1) / 2) : p.seqK;
  return 4 * p.batch * p.heads * p.seqQ * keys * p.headDim;
}

/** `GPUCOMPUTE_ATTENTION_WGMMA=0` turns the Hopper kernels off, forward and backward (the mma.sync kernels remain). */
export function attentionWgmmaEnabled(): boolean {
  return process.env.GPUCOMPUTE_ATTENTION_WGMMA !== '0';
}

/** Whether q, k, v and out rows are whole 16-byte chunks at 16-byte-aligned addresses (cp.async tiles). */
function rowsAligned(backend: CudaContext, p: AttentionParams): boolean {
  return p.headDim % 8 === 0 && [p.q, p.k, p.v, p.out].every((view) => backend.address(view) % 16n === 0n);
}

/** The kernel configuration `params` runs with on `backend` by default. */
export function defaultAttentionConfig(backend: CudaContext, params: AttentionParams): AttentionKernelConfig {
  const dtype = params.q.dtype;
  const dp = paddedHeadDim(params.headDim);
  const { major, minor } = backend.device.computeCapability;
  const hopperWorth = major === 9 && minor === 0 && attentionWgmmaEnabled() && rowsAligned(backend, params) && attentionFlops(params) >= WGMMA_MIN_FLOPS;
  const sms = backend.device.multiprocessorCount;
  const first = hopperWorth ? wgmmaConfig(params.headDim, dtype) : undefined;
  const preferred = first && wgmmaBalanced(first, params.batch * params.heads, params.seqQ, sms);
  const hopper = preferred && { ...preferred, persistent: wgmmaPersistent(preferred, params.seqQ, params.causal, sms) };
  const optin = backend.device.sharedMemoryPerBlockOptin;
  const tensorCores = dtype !== 'f32' && major >= 8;
  const candidates: AttentionKernelConfig[] = [...(hopper ? [hopper] : []), ...(tensorCores ? mmaCandidates(dp) : []), ...simtCandidates(dp)];
  const fits = candidates.find((c) => attentionSharedBytes(c, configHeadDim(c, params.headDim)) <= optin);
  if (!fits) throw new GpuError('UNSUPPORTED', `attention: head dim ${params.headDim} needs more shared memory than this device's ${optin} bytes`);
  if (!decodeRouted(params, blockRows(fits), backend.device.multiprocessorCount)) return fits;
  const mma = decodeConfig('mma', decodeGroupRows(params), dp);
  return tensorCores && decodeSharedBytes(mma, dp) <= optin ? mma : decodeConfig('simt', decodeGroupRows(params), dp);
}

/**
 * How one kind of problem runs on a backend: its kernel configuration and, except for the
 * split-key kernels (attention-decode.ts), the bound launcher with its shared memory and grid.
 * Made once per shape, dtype, mask and alignment (choosing and looking the kernel up cost several
 * launches' worth of host time); apps run the same shapes over and over.
 */
interface AttentionPlan {
  readonly config: AttentionKernelConfig;
  readonly kernel: RegisteredKernel | undefined;
  readonly shared: number;
  /** Blocks: the Hopper kernel's 1-D grid, or the query tiles of the others' [tiles, pairs] grid. */
  readonly blocks: number;
  readonly threads: number;
  /** The Hopper kernel's tensor maps of q, k and v, re-encoded only when their tensors change. */
  readonly maps: readonly [TiledMatrixMap, TiledMatrixMap, TiledMatrixMap] | undefined;
}

/** Plans per backend; a few hundred shapes at most are kept (the oldest go first). */
const PLANS: OpStateKey<PlanCache<AttentionPlan>, CudaContext> = { name: 'attention plans', create: () => new PlanCache(256) };
const DTYPE_BITS = { f32: 0, f16: 1, bf16: 2 } as const;

/** Runs `params` (validated by the front-end; seqK ≥ 1 and a non-empty output). */
export function cudaAttention(backend: CudaContext, params: AttentionParams, config?: AttentionKernelConfig): void {
  const p = params;
  const dtype = p.q.dtype;
  if (dtype === 'i32') throw new GpuError('UNSUPPORTED', 'attention has no i32 kernel');
  const aligned = rowsAligned(backend, p);
  const plan =
    config === undefined
      ? backend.states
          .get(PLANS)
          .get(
            [[p.batch, p.heads, p.kvHeads, p.seqQ, p.seqK, p.headDim]],
            DTYPE_BITS[dtype] | (p.causal ? 4 : 0) | (aligned ? 8 : 0) | (attentionWgmmaEnabled() ? 16 : 0),
            () => attentionPlan(backend, p, dtype, defaultAttentionConfig(backend, p), aligned),
          )
      : attentionPlan(backend, p, dtype, config, aligned);
  const chosen = plan.config;
  if (chosen.family === 'decode') {
    cudaAttentionDecode(backend, p, chosen);
    return;
  }
  const { kernel, launch } = plan.kernel!;
  if (plan.shared > kernel.attributes.maxDynamicSharedSizeBytes) kernel.setMaxDynamicSharedMemory(plan.shared);
  const stream = backend.enqueue(p.q, p.k, p.v, p.out, p.lse, p.keyLengths);
  const out = backend.address(p.out);
  const lse = p.lse ? backend.address(p.lse) : 0n;
  const lengths = p.keyLengths ? backend.address(p.keyLengths) : 0n;
  const pairs = p.batch * p.heads;
  const scaleLog2 = p.scale * Math.LOG2E;
  if (chosen.family === 'wgmma') {
    const [mapQ, mapK, mapV] = plan.maps!;
    const dataType = dtype === 'f16' ? TensorMapDataType.FLOAT16 : TensorMapDataType.BFLOAT16;
    const kvPairs = p.batch * p.kvHeads;
    const cols = p.headDim;
    // Rows past a head's sequence (and columns past its head dim) read as zeros; boxes of 64
    // columns (one 128-byte swizzle row) × the block's query rows or the key tile.
    const q = mapQ.encode({ dataType, elementBytes: 2, address: backend.address(p.q), cols, rows: p.seqQ, batch: pairs, batchStride: p.seqQ * cols, boxCols: 64, boxRows: blockRows(chosen) });
    const k = mapK.encode({ dataType, elementBytes: 2, address: backend.address(p.k), cols, rows: p.seqK, batch: kvPairs, batchStride: p.seqK * cols, boxCols: 64, boxRows: chosen.keyTile });
    const v = mapV.encode({ dataType, elementBytes: 2, address: backend.address(p.v), cols, rows: p.seqK, batch: kvPairs, batchStride: p.seqK * cols, boxCols: 64, boxRows: chosen.keyTile });
    launch(
      { grid: plan.blocks, block: plan.threads, sharedMemBytes: plan.shared, stream },
      q, k, v, out, lse, lengths, pairs, p.heads, p.heads / p.kvHeads, p.seqQ, p.seqK, p.headDim, scaleLog2, p.causal ? 1 : 0,
    );
    return;
  }
  const q = backend.address(p.q);
  const k = backend.address(p.k);
  const v = backend.address(p.v);
  for (let bh0 = 0; bh0 < pairs; bh0 += MAX_GRID_Y) {
    launch(
      { grid: [plan.blocks, Math.min(MAX_GRID_Y, pairs - bh0), 1], block: plan.threads, sharedMemBytes: plan.shared, stream },
      q, k, v, out, lse, lengths, bh0, p.heads, p.heads / p.kvHeads, p.seqQ, p.seqK, p.headDim, scaleLog2, p.causal ? 1 : 0,
    );
  }
}

/**
 * The plan of `p` (of `dtype`) under configuration `chosen`; `aligned` says whether q, k, v and
 * out rows are whole 16-byte chunks at 16-byte-aligned addresses. Throws where the configuration
 * cannot run it.
 *
 * The Hopper kernel reads q, k and v as TMA tensor maps [pairs][seq][head dim] (k and v by kv
 * head). Its blocks walk the work items (query blocks of each (batch, head)): a persistent
 * configuration launches one block per SM (the block takes the whole SM), so each block's loads
 * for its next item overlap the store of the current one; otherwise one block per item.
 */
function attentionPlan(backend: CudaContext, p: AttentionParams, dtype: Exclude<DType, 'i32'>, chosen: AttentionKernelConfig, aligned: boolean): AttentionPlan {
  if (chosen.family === 'decode') return { config: chosen, kernel: undefined, shared: 0, blocks: 0, threads: 0, maps: undefined };
  const dp = configHeadDim(chosen, p.headDim);
  const vectorRows = chosen.family !== 'simt' && aligned;
  if (chosen.family === 'wgmma' && !(vectorRows && wgmmaConfig(p.headDim, dtype))) {
    throw new GpuError('UNSUPPORTED', `attention: the Hopper kernel takes f16/bf16 at head dims that are multiples of 8, with 16-byte-aligned rows`);
  }
  const spec = attentionSpec(chosen, dtype, dp, vectorRows);
  const shared = attentionSharedBytes(chosen, dp);
  if (shared > backend.device.sharedMemoryPerBlockOptin) {
    throw new GpuError('UNSUPPORTED', `attention: ${attentionConfigName(chosen)} at head dim ${dp} needs ${shared} bytes of shared memory`);
  }
  const entry = ATTENTION_ENTRY[chosen.family];
  const kernel = backend.kernel(`${moduleKey(spec)}#${entry}`, () => spec, entry, chosen.family === 'wgmma' ? WGMMA_SIGNATURE : SIGNATURE);
  const threads = threadsPerBlock(chosen);
  if (chosen.family !== 'wgmma') return { config: chosen, kernel, shared, blocks: Math.ceil(p.seqQ / blockRows(chosen)), threads, maps: undefined };
  const items = Math.ceil(p.seqQ / blockRows(chosen)) * p.batch * p.heads;
  if (items > MAX_WGMMA_ITEMS) throw new GpuError('UNSUPPORTED', `attention: ${items} query blocks exceed the Hopper kernel's ${MAX_WGMMA_ITEMS}`);
  const blocks = chosen.persistent ? Math.min(items, backend.device.multiprocessorCount) : items;
  return { config: chosen, kernel, shared, blocks, threads, maps: [new TiledMatrixMap(), new TiledMatrixMap(), new TiledMatrixMap()] };
}
