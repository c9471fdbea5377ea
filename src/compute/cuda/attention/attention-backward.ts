/**
 * Attention backward on the CUDA backend: D = rowsum(dOut ∘ out) by one kernel, then the
 * gradients by blocks of keys that walk the query rows, adding dq into an f32 accumulator with
 * atomics (dq itself for f32, scratch cast to dq afterwards for f16/bf16): the tensor-core kernel
 * (`kernels/attention_backward_mma.cu`) for f16/bf16 on sm_80 and up at head dims up to 128,
 * else the CUDA-core one (`kernels/attention_backward.cu`); the first tile of the family whose
 * shared memory fits runs, and `config` overrides the choice (tests reach every kernel with it).
 * Scratch: D (4 bytes per query row) and, for 16-bit dtypes, the f32 dq accumulator; nothing of
 * seqQ × seqK. The summation order of dq depends on the order of the atomics, so it may differ
 * in the last bits between runs.
 */
import { GpuError } from '../../../errors.js';
import type { ArgType } from '../../../ffi/kernel-args.js';
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
  type BackwardConfig,
} from './attention-backward-kernels.js';
import { paddedHeadDim } from './attention-kernels.js';

/** out, dOut, delta, rows, d. */
const DOT_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64', 'i32'];
/** q, k, v, dOut, lse, delta, keyLengths, dq (f32), dk, dv, pair0, heads, group, seqQ, seqK, headDim, scale, causal (both families). */
const SIGNATURE: readonly ArgType[] = [
  'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'f32', 'i32',
];
/** gridDim.y limit: more (batch, k/v head) pairs are launched in slices. */
const MAX_GRID_Y = 65535;
/** Query rows per block of the dot kernel (a warp each). */
const DOT_ROWS = DOT_THREADS / 32;

/** Whether q, k, v and dOut rows are whole 16-byte chunks at 16-byte-aligned addresses (cp.async tiles). */
function rowsAligned(backend: CudaContext, p: AttentionBackwardParams): boolean {
  return p.headDim % 8 === 0 && [p.q, p.k, p.v, p.dOut].every((view) => backend.address(view) % 16n === 0n);
}

/** The tile `p` runs with on `backend` by default. */
export function defaultBackwardConfig(backend: CudaContext, p: AttentionBackwardParams): BackwardConfig {
  const dp = paddedHeadDim(p.headDim);
  const optin = backend.device.sharedMemoryPerBlockOptin;
  const config = backwardConfig(dp, p.q.dtype, backend.device.computeCapability.major, optin);
  if (!config) throw new GpuError('UNSUPPORTED', `attentionBackward: head dim ${p.headDim} needs more shared memory than this device's ${optin} bytes`);
  return config;
}

/** Runs `p` (validated by the front-end: seqQ, seqK ≥ 1 and a non-empty dq). */
export function cudaAttentionBackward(backend: CudaContext, p: AttentionBackwardParams, config?: BackwardConfig): void {
  const dtype = p.q.dtype;
  if (dtype === 'i32') throw new GpuError('UNSUPPORTED', 'attentionBackward has no i32 kernel');
  const chosen = config ?? defaultBackwardConfig(backend, p);
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
