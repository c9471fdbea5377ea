/**
 * Attention forward split over keys ("flash-decoding") on the CUDA backend, for few query rows
 * against many keys (which problems run it by default: `decodeRouted` in
 * attention-decode-kernels.ts). The split-key kernel's blocks each take one k/v head, a tile of
 * its packed query rows and one chunk of its keys. With one chunk they write out and lse
 * themselves; with several they write f32 partials to a scratch buffer of
 * rows · splits · (headDim + 2) floats, which the combine kernel of the same module merges. The
 * scratch goes back to the pool once both launches are queued, or when one throws.
 */
import type { ArgType } from '../../../ffi/kernel-args.js';
import { GpuError } from '../../../errors.js';
import type { AttentionParams } from '../../core/attention-params.js';
import { dtypeSize } from '../../core/dtype.js';
import { moduleKey } from '../../gpu/kernel-sources.js';
import type { CudaContext } from '../cuda-context.js';
import {
  DECODE_COMBINE,
  DECODE_COMBINE_THREADS,
  DECODE_ENTRY,
  DECODE_THREADS,
  decodeConfigName,
  decodePlan,
  decodeSharedBytes,
  decodeSpec,
  type DecodeAttentionConfig,
} from './attention-decode-kernels.js';
import { paddedHeadDim } from './attention-kernels.js';

/** q, k, v, out, lse, partial m/l, partial o, keyLengths, pair0, kvHeads, group, seqQ, seqK, headDim, rowTiles, splits, chunk, scale·log2(e), causal. */
const MMA_SIGNATURE: readonly ArgType[] = [
  'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'f32', 'i32',
];
/** The tensor-core kernel's arguments, then whether K rows load four elements at a time. */
const SIMT_SIGNATURE: readonly ArgType[] = [...MMA_SIGNATURE, 'i32'];
/** partial m/l, partial o, out, lse, rows, splits, headDim. */
const COMBINE_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'u64', 'i32', 'i32'];
/** gridDim.y limit: more (batch, k/v head) pairs are launched in slices. */
const MAX_GRID_Y = 65535;

/** Runs `p` (validated by the front-end: seqK ≥ 1 and a non-empty output) with the split-key kernel of `config`. */
export function cudaAttentionDecode(backend: CudaContext, p: AttentionParams, config: DecodeAttentionConfig): void {
  const dtype = p.q.dtype;
  if (dtype === 'i32') throw new GpuError('UNSUPPORTED', 'attention has no i32 kernel');
  const { major } = backend.device.computeCapability;
  if (config.engine === 'mma' && (dtype === 'f32' || major < 8)) {
    throw new GpuError('UNSUPPORTED', 'attention: the tensor-core split-key kernel takes f16/bf16 on sm_80 and later');
  }
  const dp = paddedHeadDim(p.headDim);
  const shared = decodeSharedBytes(config, dp);
  if (shared > backend.device.sharedMemoryPerBlockOptin) {
    throw new GpuError('UNSUPPORTED', `attention: ${decodeConfigName(config)} at head dim ${dp} needs ${shared} bytes of shared memory`);
  }
  const aligned = rowsAligned(backend, p, config);
  const spec = decodeSpec(config, dtype, dp, aligned);
  const entry = DECODE_ENTRY[config.engine];
  const partial = backend.kernel(`${moduleKey(spec)}#${entry}`, () => spec, entry, config.engine === 'mma' ? MMA_SIGNATURE : SIMT_SIGNATURE);
  if (shared > partial.kernel.attributes.maxDynamicSharedSizeBytes) partial.kernel.setMaxDynamicSharedMemory(shared);

  const plan = decodePlan(p, config.rows, backend.device.multiprocessorCount, config.splits);
  const stream = backend.enqueue(p.q, p.k, p.v, p.out, p.lse, p.keyLengths);
  const out = backend.address(p.out);
  const lse = p.lse ? backend.address(p.lse) : 0n;
  const rows = p.batch * p.heads * p.seqQ;
  const scratch = plan.splits > 1 ? backend.scratch(rows * plan.splits * (p.headDim + 2) * 4) : undefined;
  try {
    // Partial m and l of each (row, split), then their o (headDim floats each).
    const partMl = scratch ? scratch.address : 0n;
    const partO = scratch ? scratch.address + BigInt(rows * plan.splits * 8) : 0n;
    const pairs = p.batch * p.kvHeads;
    const tail = config.engine === 'simt' ? [aligned ? 1 : 0] : [];
    for (let pair0 = 0; pair0 < pairs; pair0 += MAX_GRID_Y) {
      partial.launch(
        { grid: [plan.rowTiles * plan.splits, Math.min(MAX_GRID_Y, pairs - pair0), 1], block: DECODE_THREADS, sharedMemBytes: shared, stream },
        backend.address(p.q),
        backend.address(p.k),
        backend.address(p.v),
        out,
        lse,
        partMl,
        partO,
        p.keyLengths ? backend.address(p.keyLengths) : 0n,
        pair0,
        p.kvHeads,
        p.heads / p.kvHeads,
        p.seqQ,
        p.seqK,
        p.headDim,
        plan.rowTiles,
        plan.splits,
        plan.chunk,
        p.scale * Math.LOG2E,
        p.causal ? 1 : 0,
        ...tail,
      );
    }
    if (scratch) {
      const combine = backend.kernel(`${moduleKey(spec)}#${DECODE_COMBINE}`, () => spec, DECODE_COMBINE, COMBINE_SIGNATURE);
      const rowsPerBlock = DECODE_COMBINE_THREADS / 32;
      const grid = Math.ceil(rows / rowsPerBlock);
      combine.launch({ grid, block: DECODE_COMBINE_THREADS, stream }, partMl, partO, out, lse, BigInt(rows), plan.splits, p.headDim);
    }
  } finally {
    scratch?.release();
  }
}

/**
 * Whether the kernel may load rows in wide pieces: for the tensor-core kernel q, k and v rows
 * are whole 16-byte chunks at 16-byte-aligned addresses (cp.async tiles); for the CUDA-core one,
 * K rows are whole groups of four elements at addresses aligned to four. (Both store element by
 * element.)
 */
function rowsAligned(backend: CudaContext, p: AttentionParams, config: DecodeAttentionConfig): boolean {
  if (config.engine === 'mma') return p.headDim % 8 === 0 && [p.q, p.k, p.v].every((view) => backend.address(view) % 16n === 0n);
  return p.headDim % 4 === 0 && backend.address(p.k) % BigInt(4 * dtypeSize[p.k.dtype]) === 0n;
}
