/**
 * The split-key attention kernels as data (attention-decode-kernels.ts): which problems the
 * launcher routes to them, how it splits their keys, their modules and shared memory, and the
 * configuration `defaultAttentionConfig` picks for a decode shape on a fake device of each arch.
 */
import { describe, expect, it } from 'vitest';
import type { AttentionParams } from '../../../src/compute/core/attention-params.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { defaultAttentionConfig } from '../../../src/compute/cuda/attention/attention.js';
import {
  DECODE_KEY_ALIGN,
  DECODE_MIN_SPLIT_KEYS,
  decodeConfig,
  decodeConfigName,
  decodeModuleSpecs,
  decodePlan,
  decodeRouted,
  decodeSharedBytes,
  decodeSimtRowCounts,
  decodeSpec,
  type DecodeShape,
} from '../../../src/compute/cuda/attention/attention-decode-kernels.js';
import { ATTENTION_HEAD_DIMS, attentionModuleSpecs } from '../../../src/compute/cuda/attention/attention-kernels.js';
import type { CudaContext } from '../../../src/compute/cuda/cuda-context.js';
import { kernelNames } from '../../../src/compute/cuda/kernel-specs.js';
import { archSharedMemoryOptin } from '../../../src/compute/cuda/warmup-target.js';
import { moduleKey } from '../../../src/compute/gpu/kernel-sources.js';

const H200_SMS = 132;

/** The decode shapes measured against torch SDPA on an H200 (ours far slower before the split). */
const MEASURED: DecodeShape[] = [
  { batch: 4, heads: 16, kvHeads: 4, seqQ: 1, seqK: 8191, causal: false },
  { batch: 19, heads: 1, kvHeads: 1, seqQ: 1, seqK: 8191, causal: false },
  { batch: 1, heads: 64, kvHeads: 8, seqQ: 1, seqK: 4985, causal: false },
  { batch: 1, heads: 16, kvHeads: 4, seqQ: 33, seqK: 5031, causal: false },
  { batch: 10, heads: 2, kvHeads: 2, seqQ: 61, seqK: 2039, causal: false },
  { batch: 55, heads: 2, kvHeads: 2, seqQ: 9, seqK: 4543, causal: false },
];

describe('split-key attention routing', () => {
  it('routes the measured decode shapes under every ordinary tile height', () => {
    for (const shape of MEASURED) for (const rows of [64, 128, 192, 256]) expect(decodeRouted(shape, rows, H200_SMS), JSON.stringify(shape)).toBe(true);
  });

  it('leaves causal, short, many-row and well-filled problems to the ordinary kernels', () => {
    const decode: DecodeShape = { batch: 1, heads: 8, kvHeads: 8, seqQ: 1, seqK: 4096, causal: false };
    expect(decodeRouted(decode, 128, H200_SMS)).toBe(true);
    // Top-left causal rows see at most seqQ keys.
    expect(decodeRouted({ ...decode, causal: true }, 128, H200_SMS)).toBe(false);
    expect(decodeRouted({ ...decode, seqK: 511 }, 128, H200_SMS)).toBe(false);
    expect(decodeRouted({ ...decode, seqK: 512 }, 128, H200_SMS)).toBe(true);
    // 8 q heads per k/v head × 33 rows = 264 packed rows: above the cap.
    expect(decodeRouted({ ...decode, kvHeads: 1, seqQ: 32 }, 128, H200_SMS)).toBe(true);
    expect(decodeRouted({ ...decode, kvHeads: 1, seqQ: 33 }, 128, H200_SMS)).toBe(false);
    // Enough ordinary blocks (64·8 = 512 ≥ 264) whose rows are at least a quarter full stay there;
    // emptier ones come here however many there are.
    const wide = { ...decode, batch: 64, seqQ: 32 };
    expect(decodeRouted(wide, 128, H200_SMS)).toBe(true);
    expect(decodeRouted(wide, 64, H200_SMS)).toBe(false);
    expect(decodeRouted({ ...wide, seqQ: 1 }, 64, H200_SMS)).toBe(true);
  });
});

describe('split-key attention plan', () => {
  it('fills about two blocks per SM with chunks of at least 256 keys, a multiple of 64', () => {
    const plans = MEASURED.map((shape) => decodePlan(shape, 64, H200_SMS));
    expect(plans).toEqual([
      { rowTiles: 1, splits: 16, chunk: 512 },
      { rowTiles: 1, splits: 13, chunk: 640 },
      { rowTiles: 1, splits: 16, chunk: 320 },
      { rowTiles: 3, splits: 16, chunk: 320 },
      { rowTiles: 1, splits: 7, chunk: 320 },
      { rowTiles: 1, splits: 3, chunk: 1536 },
    ]);
    for (const [i, shape] of MEASURED.entries()) {
      const { rowTiles, splits, chunk } = plans[i]!;
      expect(chunk % DECODE_KEY_ALIGN).toBe(0);
      expect(chunk).toBeGreaterThanOrEqual(DECODE_MIN_SPLIT_KEYS);
      // Every key is in exactly one chunk, and no chunk is empty.
      expect(splits * chunk).toBeGreaterThanOrEqual(shape.seqK);
      expect((splits - 1) * chunk).toBeLessThan(shape.seqK);
      expect(shape.batch * shape.kvHeads * rowTiles * splits).toBeLessThanOrEqual(2 * H200_SMS + shape.batch * shape.kvHeads * rowTiles);
    }
  });

  it('keeps one chunk where the pairs fill the device or the keys are few', () => {
    expect(decodePlan({ batch: 64, heads: 32, kvHeads: 8, seqQ: 1, seqK: 4096, causal: false }, 64, H200_SMS)).toEqual({ rowTiles: 1, splits: 1, chunk: 4096 });
    expect(decodePlan({ batch: 1, heads: 1, kvHeads: 1, seqQ: 1, seqK: 300, causal: false }, 64, H200_SMS)).toEqual({ rowTiles: 1, splits: 1, chunk: 320 });
    // Causal rows see keys below seqQ only.
    expect(decodePlan({ batch: 1, heads: 4, kvHeads: 1, seqQ: 7, seqK: 5000, causal: true }, 4, H200_SMS)).toEqual({ rowTiles: 7, splits: 1, chunk: 64 });
  });

  it('takes forced splits as equal chunks, fewer where the keys are fewer', () => {
    const shape: DecodeShape = { batch: 1, heads: 2, kvHeads: 1, seqQ: 3, seqK: 17, causal: false };
    expect(decodePlan(shape, 4, H200_SMS, 3)).toEqual({ rowTiles: 2, splits: 3, chunk: 6 });
    expect(decodePlan(shape, 64, H200_SMS, 5)).toEqual({ rowTiles: 1, splits: 5, chunk: 4 });
    expect(decodePlan({ ...shape, seqK: 1 }, 64, H200_SMS, 3)).toEqual({ rowTiles: 1, splits: 1, chunk: 1 });
    expect(decodePlan({ ...shape, causal: true }, 64, H200_SMS, 2)).toEqual({ rowTiles: 1, splits: 2, chunk: 2 });
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => decodePlan(shape, 64, H200_SMS, bad)).toThrow(RangeError);
  });
});

describe('split-key attention modules', () => {
  it('sizes blocks and shared memory as the kernels lay them out', () => {
    expect(decodeConfig('mma', 1, 128)).toEqual({ family: 'decode', engine: 'mma', rows: 64 });
    expect(decodeConfig('simt', 4, 128, 3)).toEqual({ family: 'decode', engine: 'simt', rows: 4, splits: 3 });
    expect(decodeConfig('simt', 5, 128).rows).toBe(16);
    expect(decodeConfig('simt', 5, 256).rows).toBe(8);
    for (const dp of ATTENTION_HEAD_DIMS) expect(decodeSimtRowCounts(dp)).toContain(decodeConfig('simt', 200, dp).rows);
    // Q's 64 rows and two stages of 64-key (32 above dp 128) K and V tiles, rows padded by 8 16-bit elements.
    expect(decodeSharedBytes(decodeConfig('mma', 1, 128), 128)).toBe(2 * (64 + 4 * 64) * 136);
    expect(decodeSharedBytes(decodeConfig('mma', 1, 256), 256)).toBe(2 * (64 + 4 * 32) * 264);
    // Within an sm_86 block at every head dim; the CUDA-core kernel's shared memory is static.
    for (const dp of ATTENTION_HEAD_DIMS) expect(decodeSharedBytes(decodeConfig('mma', 1, dp), dp)).toBeLessThanOrEqual(archSharedMemoryOptin('sm_86'));
    expect(decodeSharedBytes(decodeConfig('simt', 1, 128), 128)).toBe(0);
    expect(decodeConfigName(decodeConfig('mma', 1, 64))).toBe('decode mma');
    expect(decodeConfigName(decodeConfig('simt', 9, 64, 3))).toBe('decode simt r16 s3');
  });

  it('specialises the sources and lists every module for the CI compile', () => {
    const mma = decodeSpec(decodeConfig('mma', 1, 96), 'bf16', 96, true);
    expect(moduleKey(mma)).toBe('attention_decode_mma.cu?GC_ALIGNED=1&GC_DTYPE=GC_BF16&GC_HEAD_DIM=96');
    expect(kernelNames(mma)).toEqual(['attention_decode_mma', 'attention_decode_combine']);
    const simt = decodeSpec(decodeConfig('simt', 1, 32), 'f32', 32, true);
    expect(moduleKey(simt)).toBe('attention_decode.cu?GC_DTYPE=GC_F32&GC_HEAD_DIM=32&GC_ROWS=4');
    expect(kernelNames(simt)).toEqual(['attention_decode', 'attention_decode_combine']);
    expect(() => decodeSpec(decodeConfig('mma', 1, 64), 'f32', 64, true)).toThrow(RangeError);
    expect(() => decodeSpec({ family: 'decode', engine: 'simt', rows: 7 }, 'f16', 64, false)).toThrow(RangeError);
    expect(() => decodeSpec({ family: 'decode', engine: 'mma', rows: 16 }, 'f16', 64, false)).toThrow(RangeError);
    const listed = attentionModuleSpecs().map(moduleKey);
    const all = decodeModuleSpecs(ATTENTION_HEAD_DIMS).map(moduleKey);
    // Per head dim: two row counts × three dtypes, and two load paths × two dtypes.
    expect(new Set(all).size).toBe(ATTENTION_HEAD_DIMS.length * (6 + 4));
    for (const key of all) expect(listed).toContain(key);
  });
});

describe('defaultAttentionConfig on decode shapes', () => {
  const view = (dtype: DType): TensorView => ({ dtype, shape: [1], offset: 0, size: 1 }) as unknown as TensorView;
  const backend = (arch: string): CudaContext => {
    const n = Number(arch.slice(3));
    const computeCapability = { major: Math.floor(n / 10), minor: n % 10 };
    const device = { computeCapability, sharedMemoryPerBlockOptin: archSharedMemoryOptin(arch), multiprocessorCount: H200_SMS };
    return { device, address: () => 0n } as unknown as CudaContext;
  };
  const params = (dtype: DType, shape: DecodeShape, headDim: number) =>
    ({ q: view(dtype), k: view(dtype), v: view(dtype), out: view(dtype), ...shape, headDim, scale: 1 }) as AttentionParams;

  it('takes the tensor-core split-key kernel for 16-bit types from sm_80, else the CUDA-core one', () => {
    const shape = MEASURED[0]!;
    for (const arch of ['sm_80', 'sm_86', 'sm_90']) {
      for (const dtype of ['f16', 'bf16'] as const) {
        for (const headDim of [32, 33, 80, 128, 256]) {
          expect(defaultAttentionConfig(backend(arch), params(dtype, shape, headDim)), `${arch} ${headDim}`).toEqual({ family: 'decode', engine: 'mma', rows: 64 });
        }
      }
      expect(defaultAttentionConfig(backend(arch), params('f32', shape, 64))).toEqual({ family: 'decode', engine: 'simt', rows: 4 });
    }
    expect(defaultAttentionConfig(backend('sm_75'), params('f16', MEASURED[3]!, 256))).toEqual({ family: 'decode', engine: 'simt', rows: 8 });
  });

  it('keeps the ordinary kernels for causal and square problems', () => {
    const shape = MEASURED[1]!;
    expect(defaultAttentionConfig(backend('sm_90'), params('f16', { ...shape, causal: true }, 64)).family).not.toBe('decode');
    expect(defaultAttentionConfig(backend('sm_90'), params('f16', { ...shape, seqQ: 4096, seqK: 4096 }, 64)).family).toBe('wgmma');
  });

  it('takes the Hopper kernel from 2^30 flops, at head dims padded up to its own', () => {
    const big = { batch: 4, heads: 16, kvHeads: 16, seqQ: 4096, seqK: 4096, causal: false };
    for (const headDim of [32, 80, 96, 192, 200, 256]) {
      expect(defaultAttentionConfig(backend('sm_90'), params('bf16', big, headDim)).family, `D${headDim}`).toBe('wgmma');
    }
    // Rows that TMA cannot read (a head dim not a multiple of 8) keep the mma.sync kernel.
    expect(defaultAttentionConfig(backend('sm_90'), params('bf16', big, 100)).family).toBe('mma');
    // A small causal prefill is host-bound: 4·8·8·50·25·32 flops.
    const small = { batch: 8, heads: 8, kvHeads: 2, seqQ: 50, seqK: 7121, causal: true };
    expect(defaultAttentionConfig(backend('sm_90'), params('f16', small, 32)).family).toBe('mma');
    // At and just below the threshold: B1 H1, Sq = Sk = 2^11, D 64 is 2^30 flops.
    const edge = { batch: 1, heads: 1, kvHeads: 1, seqQ: 2048, seqK: 2048, causal: false };
    expect(defaultAttentionConfig(backend('sm_90'), params('f16', edge, 64)).family).toBe('wgmma');
    expect(defaultAttentionConfig(backend('sm_90'), params('f16', { ...edge, seqK: 2047 }, 64)).family).toBe('mma');
  });
});
