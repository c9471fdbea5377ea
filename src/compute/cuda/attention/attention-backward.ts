/**
 * Attention backward on the CUDA backend: D = rowsum(dOut ∘ out) by one kernel, then the
 * gradients by blocks of keys that walk the query rows, adding dq into an f32 accumulator (dq
 * itself for f32, scratch cast to dq afterwards for f16/bf16):
 * - on sm_90, for f16/bf16 at head dims that are multiples of 8 up to 128 with 16-byte-aligned
 *   rows, the Hopper kernel (`kernels/attention_backward_wgmma.cu`: wgmma, TMA, dq added by bulk
 *   reductions of whole rows); its first kernel also lays out each query tile's log-sum-exp
 *   beside D, so a tile's statistics are copied without bounds checks;
 * - else the tensor-core kernel (`kernels/attention_backward_mma.cu`) for f16/bf16 on sm_80 and
 *   up at head dims 8 to 128, else the CUDA-core one (`kernels/attention_backward.cu`), both
 *   adding dq with atomics; the first tile of the family whose shared memory fits runs.
 * `config` overrides the choice (tests reach every kernel with it); `GPUCOMPUTE_ATTENTION_WGMMA=0`
 * turns the Hopper kernels off. Scratch: D (4 bytes per query row; 8 per row of whole 64-row
 * tiles for the Hopper kernel) and, for 16-bit dtypes, the f32 dq accumulator; nothing of
 * seqQ × seqK. The summation order of dq depends on the order of the additions, so it may differ
 * in the last bits between runs.
 */
import type { Kernel } from '../../../driver/kernel.js';
import { GpuError } from '../../../errors.js';
import { bytes, f32, i32, ptr, TENSOR_MAP_ALIGNMENT, TENSOR_MAP_BYTES, type ArgType } from '../../../ffi/kernel-args.js';
import type { AttentionBackwardParams } from '../../core/attention-backward-params.js';
import type { TensorView } from '../../core/view.js';
import { cast, fill } from '../../gpu/elementwise.js';
import { moduleKey } from '../../gpu/kernel-sources.js';
import type { CudaBuffer, CudaContext } from '../cuda-context.js';
import {
  ATTENTION_BACKWARD_DOT,
  ATTENTION_BACKWARD_ENTRY,
  ATTENTION_BACKWARD_THREADS as DOT_THREADS,
  attentionBackwardSpec,
  backwardConfig,
  backwardConfigName,
  backwardKeysPerBlock,
  backwardSharedBytes,
  backwardThreads,
  wgmmaBackwardHeadDim,
  ATTENTION_BACKWARD_WGMMA_PREP,
  WGMMA_BACKWARD_KEYS,
  WGMMA_BACKWARD_ROWS,
  type BackwardConfig,
} from './attention-backward-kernels.js';
import { paddedHeadDim } from './attention-kernels.js';
import { attentionWgmmaEnabled } from './attention.js';
import { encodeTiledMatrix, TensorMapDataType } from '../tensor-map.js';

/** out, dOut, delta, rows, d. */
const DOT_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64', 'i32'];
/** q, k, v, dOut, lse, delta, keyLengths, dq (f32), dk, dv, pair0, heads, group, seqQ, seqK, headDim, scale, causal (both families). */
const SIGNATURE: readonly ArgType[] = [
  'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'f32', 'i32',
];
/** out, dOut, lse, stats, pairs, seqQ, headDim: the Hopper kernel's first launch. */
const PREP_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32'];
/** Tensor maps of q, dOut, k and v, rewritten before each launch of the Hopper kernel (launches copy their arguments). */
const maps = [0, 1, 2, 3].map(() => new Uint8Array(TENSOR_MAP_BYTES));
/** gridDim.y limit: more (batch, k/v head) pairs are launched in slices. */
const MAX_GRID_Y = 65535;
/** Query rows per block of the dot kernel (a warp each). */
const DOT_ROWS = DOT_THREADS / 32;

/** Whether q, k, v and dOut rows are whole 16-byte chunks at 16-byte-aligned addresses (cp.async tiles). */
function rowsAligned(backend: CudaContext, p: AttentionBackwardParams): boolean {
  return p.headDim % 8 === 0 && [p.q, p.k, p.v, p.dOut].every((view) => backend.address(view) % 16n === 0n);
}

/** Whether the Hopper kernel can run `p` on `backend`: sm_90, f16/bf16, its head dims, rows TMA can read. */
function wgmmaRuns(backend: CudaContext, p: AttentionBackwardParams): boolean {
  const { major, minor } = backend.device.computeCapability;
  const dp = wgmmaBackwardHeadDim(p.headDim);
  return (
    major === 9 &&
    minor === 0 &&
    p.q.dtype !== 'f32' &&
    dp !== undefined &&
    rowsAligned(backend, p) &&
    backwardSharedBytes({ family: 'wgmma' }, dp) <= backend.device.sharedMemoryPerBlockOptin
  );
}

/** The tile `p` runs with on `backend` by default. */
export function defaultBackwardConfig(backend: CudaContext, p: AttentionBackwardParams): BackwardConfig {
  if (attentionWgmmaEnabled() && wgmmaRuns(backend, p)) return { family: 'wgmma' };
  const dp = paddedHeadDim(p.headDim);
  const optin = backend.device.sharedMemoryPerBlockOptin;
  const config = backwardConfig(dp, p.q.dtype, backend.device.computeCapability.major, optin, p.headDim);
  if (!config) throw new GpuError('UNSUPPORTED', `attentionBackward: head dim ${p.headDim} needs more shared memory than this device's ${optin} bytes`);
  return config;
}

/** Runs `p` (validated by the front-end: seqQ, seqK ≥ 1 and a non-empty dq). */
export function cudaAttentionBackward(backend: CudaContext, p: AttentionBackwardParams, config?: BackwardConfig): void {
  const dtype = p.q.dtype;
  if (dtype === 'i32') throw new GpuError('UNSUPPORTED', 'attentionBackward has no i32 kernel');
  const chosen = config ?? defaultBackwardConfig(backend, p);
  if (chosen.family === 'wgmma') {
    if (!wgmmaRuns(backend, p)) {
      throw new GpuError('UNSUPPORTED', 'attentionBackward: the Hopper kernel takes f16/bf16 on sm_90 at head dims that are multiples of 8 up to 128, with 16-byte-aligned rows');
    }
    wgmmaBackward(backend, p);
    return;
  }
  const dp = paddedHeadDim(p.headDim);
  const shared = backwardSharedBytes(chosen, dp);
  if (shared > backend.device.sharedMemoryPerBlockOptin) {
    throw new GpuError('UNSUPPORTED', `attentionBackward: ${backwardConfigName(chosen)} at head dim ${dp} needs ${shared} bytes of shared memory`);
  }
  const spec = attentionBackwardSpec(chosen, dtype, dp, chosen.family === 'mma' && rowsAligned(backend, p));
  const rows = p.batch * p.heads * p.seqQ;
  const scratch: CudaBuffer[] = [];
  try {
    const delta = backend.alloc(rows * 4);
    scratch.push(delta);
    let dq: TensorView = p.dq;
    if (dtype !== 'f32') {
      const acc = backend.alloc(p.dq.size * 4);
      scratch.push(acc);
      dq = { buffer: acc, dtype: 'f32', shape: p.dq.shape, offset: 0, size: p.dq.size };
    }
    fill(backend, dq, 0);

    const dot = backend.kernel(`${moduleKey(spec)}#${ATTENTION_BACKWARD_DOT}`, () => spec, ATTENTION_BACKWARD_DOT, DOT_SIGNATURE);
    let stream = backend.enqueue(p.out, p.dOut);
    dot.launch({ grid: Math.ceil(rows / DOT_ROWS), block: DOT_THREADS, stream }, backend.address(p.out), backend.address(p.dOut), delta.address, BigInt(rows), p.headDim);

    const entry = ATTENTION_BACKWARD_ENTRY[chosen.family];
    const grads = backend.kernel(`${moduleKey(spec)}#${entry}`, () => spec, entry, SIGNATURE);
    if (shared > grads.kernel.attributes.maxDynamicSharedSizeBytes) grads.kernel.setMaxDynamicSharedMemory(shared);
    stream = backend.enqueue(p.q, p.k, p.v, p.dOut, p.lse, p.keyLengths, dq, p.dk, p.dv);
    const pairs = p.batch * p.kvHeads;
    const keyBlocks = Math.ceil(p.seqK / backwardKeysPerBlock(chosen));
    for (let pair0 = 0; pair0 < pairs; pair0 += MAX_GRID_Y) {
      grads.launch(
        { grid: [keyBlocks, Math.min(MAX_GRID_Y, pairs - pair0), 1], block: backwardThreads(chosen), sharedMemBytes: shared, stream },
        backend.address(p.q),
        backend.address(p.k),
        backend.address(p.v),
        backend.address(p.dOut),
        backend.address(p.lse),
        delta.address,
        p.keyLengths ? backend.address(p.keyLengths) : 0n,
        backend.address(dq),
        backend.address(p.dk),
        backend.address(p.dv),
        pair0,
        p.heads,
        p.heads / p.kvHeads,
        p.seqQ,
        p.seqK,
        p.headDim,
        p.scale,
        p.causal ? 1 : 0,
      );
    }
    if (dq !== p.dq) cast(backend, dq, p.dq);
  } finally {
    for (const buffer of scratch) backend.free(buffer);
  }
}

/**
 * The Hopper kernel: the statistics kernel, then the gradients with q and dOut as TMA tensor maps
 * [batch·heads][seqQ][head dim] (boxes of 64 columns × 64 rows) and k and v as
 * [batch·kv heads][seqK][head dim] (64 × 128), so rows past a sequence and columns past the head
 * dim read as zeros.
 */
function wgmmaBackward(backend: CudaContext, p: AttentionBackwardParams): void {
  const dtype = p.q.dtype as 'f16' | 'bf16';
  const dp = wgmmaBackwardHeadDim(p.headDim)!;
  const spec = attentionBackwardSpec({ family: 'wgmma' }, dtype, dp);
  const shared = backwardSharedBytes({ family: 'wgmma' }, dp);
  const pairs = p.batch * p.heads;
  const queryTiles = Math.ceil(p.seqQ / WGMMA_BACKWARD_ROWS);
  const scratch: CudaBuffer[] = [];
  try {
    // Per query tile: the rows' base-2 log-sum-exp, then their D.
    const stats = backend.alloc(pairs * queryTiles * 2 * WGMMA_BACKWARD_ROWS * 4);
    scratch.push(stats);
    const acc = backend.alloc(p.dq.size * 4);
    scratch.push(acc);
    const dq: TensorView = { buffer: acc, dtype: 'f32', shape: p.dq.shape, offset: 0, size: p.dq.size };
    fill(backend, dq, 0);

    const prep = backend.kernel(`${moduleKey(spec)}#${ATTENTION_BACKWARD_WGMMA_PREP}`, () => spec, ATTENTION_BACKWARD_WGMMA_PREP, PREP_SIGNATURE);
    let stream = backend.enqueue(p.out, p.dOut, p.lse);
    const slots = pairs * queryTiles * WGMMA_BACKWARD_ROWS;
    prep.launch(
      { grid: Math.ceil(slots / DOT_ROWS), block: DOT_THREADS, stream },
      backend.address(p.out),
      backend.address(p.dOut),
      backend.address(p.lse),
      stats.address,
      pairs,
      p.seqQ,
      p.headDim,
    );

    const kernel: Kernel = backend.registry.function(spec, ATTENTION_BACKWARD_ENTRY.wgmma);
    if (shared > kernel.attributes.maxDynamicSharedSizeBytes) kernel.setMaxDynamicSharedMemory(shared);
    const dataType = dtype === 'f16' ? TensorMapDataType.FLOAT16 : TensorMapDataType.BFLOAT16;
    const encode = (view: TensorView, rows: number, batch: number, boxRows: number, into: Uint8Array) =>
      encodeTiledMatrix(
        { dataType, elementBytes: 2, address: backend.address(view), cols: p.headDim, rows, batch, batchStride: rows * p.headDim, boxCols: 64, boxRows },
        into,
      );
    const kvPairs = p.batch * p.kvHeads;
    encode(p.q, p.seqQ, pairs, WGMMA_BACKWARD_ROWS, maps[0]!);
    encode(p.dOut, p.seqQ, pairs, WGMMA_BACKWARD_ROWS, maps[1]!);
    encode(p.k, p.seqK, kvPairs, WGMMA_BACKWARD_KEYS, maps[2]!);
    encode(p.v, p.seqK, kvPairs, WGMMA_BACKWARD_KEYS, maps[3]!);
    stream = backend.enqueue(p.q, p.k, p.v, p.dOut, p.keyLengths, dq, p.dk, p.dv);
    const keyBlocks = Math.ceil(p.seqK / WGMMA_BACKWARD_KEYS);
    for (let pair0 = 0; pair0 < kvPairs; pair0 += MAX_GRID_Y) {
      kernel.launch({ grid: [keyBlocks, Math.min(MAX_GRID_Y, kvPairs - pair0), 1], block: backwardThreads({ family: 'wgmma' }), sharedMemBytes: shared, stream }, [
        ...maps.map((map) => bytes(map, TENSOR_MAP_ALIGNMENT)),
        ptr(stats.address),
        ptr(p.keyLengths ? backend.address(p.keyLengths) : 0n),
        ptr(acc.address),
        ptr(backend.address(p.dk)),
        ptr(backend.address(p.dv)),
        i32(pair0),
        i32(p.heads),
        i32(p.heads / p.kvHeads),
        i32(p.seqQ),
        i32(p.seqK),
        i32(p.headDim),
        f32(p.scale),
        i32(p.causal ? 1 : 0),
      ]);
    }
    cast(backend, dq, p.dq);
  } finally {
    for (const buffer of scratch) backend.free(buffer);
  }
}
