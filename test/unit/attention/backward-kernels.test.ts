/**
 * The attention backward kernels as data: shared memory as the kernels lay it out, the tiles each
 * family offers per head dim (only those whose warps split dq evenly, as the kernel's static
 * checks demand), the tile the launcher picks per device, and the module specs CI compiles; the
 * Hopper kernel's head dims, shared memory and sm_90a modules; and the configuration
 * `defaultBackwardConfig` picks on a fake device of each arch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AttentionBackwardParams } from '../../../src/compute/core/attention-backward-params.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { defaultBackwardConfig } from '../../../src/compute/cuda/attention/attention-backward.js';
import type { CudaContext } from '../../../src/compute/cuda/cuda-context.js';
import { archSharedMemoryOptin } from '../../../src/compute/cuda/warmup-target.js';
import {
  ATTENTION_BACKWARD_DOT,
  ATTENTION_BACKWARD_SOURCE,
  attentionBackwardModuleSpecs,
  attentionBackwardSpec,
  backwardConfig,
  backwardConfigName,
  backwardKeysPerBlock,
  backwardMmaCandidates,
  backwardSharedBytes,
  backwardSimtCandidates,
  backwardThreads,
  wgmmaBackwardHeadDim,
  wgmmaBackwardModuleSpecs,
} from '../../../src/compute/cuda/attention/attention-backward-kernels.js';
import { ATTENTION_HEAD_DIMS } from '../../../src/compute/cuda/attention/attention-kernels.js';
import { allModuleSpecs, kernelNames } from '../../../src/compute/cuda/kernel-specs.js';
import { moduleKey } from '../../../src/compute/gpu/kernel-sources.js';

const H100_OPTIN = 232448;
const SM86_OPTIN = 101376;

describe('attention backward kernel configurations', () => {
  it('sizes shared memory as the kernels lay it out', () => {
    // CUDA cores, f32 words: k and v [DP][BC + 4], the chunk's q and dOut [DP][BR + 4], P and dS [BR][BC + 1], two row vectors.
    expect(backwardSharedBytes({ family: 'simt', br: 32, bc: 32 }, 128)).toBe(4 * (2 * 128 * 36 + 2 * 128 * 36 + 2 * 32 * 33 + 64));
    // Tensor cores, 16-bit elements: K and V [BC][DP + 8], two stages of q and dOut [BR][DP + 8], dSᵀ [BC][BR + 8]; then 4·BR f32.
    expect(backwardSharedBytes({ family: 'mma', warps: 8, br: 32 }, 128)).toBe(2 * (2 * 128 * 136 + 4 * 32 * 136 + 128 * 40) + 16 * 32);
    expect(backwardKeysPerBlock({ family: 'mma', warps: 8, br: 32 })).toBe(128);
    expect(backwardThreads({ family: 'mma', warps: 4, br: 64 })).toBe(128);
    expect(backwardThreads({ family: 'simt', br: 16, bc: 16 })).toBe(256);
  });

  it('offers tensor-core tiles up to head dim 128 whose warps split dq evenly', () => {
    expect(backwardMmaCandidates(256)).toEqual([]);
    for (const dp of ATTENTION_HEAD_DIMS.filter((d) => d <= 128)) {
      const tiles = backwardMmaCandidates(dp);
      expect(tiles.length, `dp ${dp}`).toBeGreaterThan(0);
      for (const c of tiles) {
        const rowTiles = c.br / 16;
        expect(c.warps % rowTiles, `${backwardConfigName(c)} at dp ${dp}`).toBe(0);
        expect((dp / 16) % (c.warps / rowTiles), `${backwardConfigName(c)} at dp ${dp}`).toBe(0);
      }
    }
    // 5 column groups at head dim 80: only one warp per dq row tile.
    expect(backwardMmaCandidates(80).map(backwardConfigName)).toEqual(['mma w4 br64']);
    expect(() => attentionBackwardSpec({ family: 'mma', warps: 8, br: 64 }, 'bf16', 80)).toThrow(RangeError);
    expect(() => attentionBackwardSpec({ family: 'mma', warps: 4, br: 64 }, 'f32', 64)).toThrow(RangeError);
  });

  it('picks tensor cores for 16-bit types on sm_80 and up, CUDA cores otherwise, the first tile that fits', () => {
    expect(backwardConfig(128, 'bf16', 9, H100_OPTIN)).toEqual({ family: 'mma', warps: 8, br: 32 });
    expect(backwardConfig(64, 'f16', 8, H100_OPTIN)).toEqual({ family: 'mma', warps: 8, br: 64 });
    expect(backwardConfig(128, 'f32', 9, H100_OPTIN)).toEqual(backwardSimtCandidates(128)[0]);
    expect(backwardConfig(128, 'bf16', 7, H100_OPTIN)?.family).toBe('simt');
    expect(backwardConfig(256, 'bf16', 9, H100_OPTIN)?.family).toBe('simt');
    // sm_86: 99 KiB; the 128-key tile at head dim 128 takes 113 KiB, so the 64-key one runs.
    const small = backwardConfig(128, 'bf16', 8, SM86_OPTIN)!;
    expect(small).toEqual({ family: 'mma', warps: 4, br: 32 });
    expect(backwardSharedBytes(small, 128)).toBeLessThanOrEqual(SM86_OPTIN);
    for (const dp of ATTENTION_HEAD_DIMS) {
      for (const dtype of ['f32', 'f16', 'bf16'] as const) {
        const c = backwardConfig(dp, dtype, 8, SM86_OPTIN);
        expect(c, `dp ${dp} ${dtype} fits 99 KiB`).toBeDefined();
        expect(backwardSharedBytes(c!, dp)).toBeLessThanOrEqual(SM86_OPTIN);
      }
    }
    expect(backwardConfig(256, 'f32', 9, 16 * 1024)).toBeUndefined();
    // Head dims below 8 (padded to 16) take the CUDA-core kernel.
    expect(backwardConfig(16, 'bf16', 9, H100_OPTIN, 1)?.family).toBe('simt');
    expect(backwardConfig(16, 'f16', 8, H100_OPTIN, 7)?.family).toBe('simt');
    expect(backwardConfig(16, 'f16', 8, H100_OPTIN, 8)?.family).toBe('mma');
  });

  it('lists every tile of both kernels for CI, with the kernels each module defines', () => {
    const specs = attentionBackwardModuleSpecs();
    const listed = new Set(allModuleSpecs().map(moduleKey));
    for (const spec of specs) expect(listed.has(moduleKey(spec))).toBe(true);
    for (const dp of ATTENTION_HEAD_DIMS) {
      expect(specs.some((s) => s.file === ATTENTION_BACKWARD_SOURCE.simt && s.defines?.GC_HEAD_DIM === dp)).toBe(true);
      expect(specs.some((s) => s.file === ATTENTION_BACKWARD_SOURCE.mma && s.defines?.GC_HEAD_DIM === dp)).toBe(dp <= 128);
    }
    expect(specs.filter((s) => s.file === ATTENTION_BACKWARD_SOURCE.mma && s.defines?.GC_DTYPE === 'GC_F32')).toEqual([]);
    expect(moduleKey(attentionBackwardSpec({ family: 'mma', warps: 8, br: 32 }, 'bf16', 128, true))).toBe(
      'attention_backward_mma.cu?GC_ALIGNED=1&GC_BR=32&GC_DTYPE=GC_BF16&GC_HEAD_DIM=128&GC_WARPS=8',
    );
    expect(kernelNames(specs.find((s) => s.file === ATTENTION_BACKWARD_SOURCE.mma)!)).toEqual(['attention_bwd_mma', ATTENTION_BACKWARD_DOT]);
    expect(kernelNames(specs[0]!)).toEqual(['attention_bwd_simt', ATTENTION_BACKWARD_DOT]);
  });

  it('runs the Hopper kernel at head dims that are multiples of 8 up to 128, padded to 64 or 128, within 227 KiB', () => {
    expect([8, 40, 64, 72, 96, 128].map(wgmmaBackwardHeadDim)).toEqual([64, 64, 64, 128, 128, 128]);
    for (const d of [0, 1, 17, 36, 100, 136, 256]) expect(wgmmaBackwardHeadDim(d), `head dim ${d}`).toBeUndefined();
    const wgmma = { family: 'wgmma' } as const;
    // 1024 for alignment, K and V [128][DP], two stages of Q and dOut [64][DP], two dSᵀ buffers [128][64],
    // two of (lse, D) [2][64] f32, the f32 dq tile [64][DP + 8], seven mbarriers.
    expect(backwardSharedBytes(wgmma, 128)).toBe(1024 + 2 * 128 * 128 * 2 + 2 * 2 * 64 * 128 * 2 + 2 * 128 * 64 * 2 + 2 * 2 * 64 * 4 + 64 * 136 * 4 + 56);
    expect(backwardSharedBytes(wgmma, 128)).toBeLessThanOrEqual(H100_OPTIN);
    expect(backwardKeysPerBlock(wgmma)).toBe(128);
    expect(backwardThreads(wgmma)).toBe(384);
    expect(backwardConfigName(wgmma)).toBe('wgmma');
    expect(moduleKey(attentionBackwardSpec(wgmma, 'bf16', 128))).toBe('attention_backward_wgmma.cu?GC_DTYPE=GC_BF16&GC_HEAD_DIM=128@sm_90a');
    expect(() => attentionBackwardSpec(wgmma, 'f16', 96)).toThrow(RangeError);
    expect(() => attentionBackwardSpec(wgmma, 'f32', 64)).toThrow(RangeError);
    // sm_90a modules, which CI's NVRTC 11.8 cannot build: listed apart from what CI compiles.
    const hopper = wgmmaBackwardModuleSpecs();
    expect(hopper.map(moduleKey).sort()).toEqual(
      ['GC_F16&GC_HEAD_DIM=64', 'GC_BF16&GC_HEAD_DIM=64', 'GC_F16&GC_HEAD_DIM=128', 'GC_BF16&GC_HEAD_DIM=128']
        .map((d) => `attention_backward_wgmma.cu?GC_DTYPE=${d}@sm_90a`)
        .sort(),
    );
    expect(attentionBackwardModuleSpecs().some((s) => s.file === ATTENTION_BACKWARD_SOURCE.wgmma)).toBe(false);
  });
});

describe('defaultBackwardConfig on a fake device of each arch', () => {
  afterEach(() => {
    delete process.env.GPUCOMPUTE_ATTENTION_WGMMA;
  });
  const backend = (arch: string, misaligned?: TensorView): CudaContext => {
    const n = Number(arch.slice(3));
    const device = { computeCapability: { major: Math.floor(n / 10), minor: n % 10 }, sharedMemoryPerBlockOptin: archSharedMemoryOptin(arch) };
    return { device, address: (view: TensorView) => (view === misaligned ? 8n : 256n) } as unknown as CudaContext;
  };
  const params = (dtype: DType, headDim: number): AttentionBackwardParams => {
    const view = (): TensorView => ({ dtype, shape: [1], offset: 0, size: 1 }) as unknown as TensorView;
    const [q, k, v, out, dOut, dq, dk, dv] = [0, 1, 2, 3, 4, 5, 6, 7].map(view) as TensorView[];
    const lse = { dtype: 'f32', shape: [1], offset: 0, size: 1 } as unknown as TensorView;
    return { q: q!, k: k!, v: v!, out: out!, lse, dOut: dOut!, dq: dq!, dk: dk!, dv: dv!, batch: 1, heads: 1, kvHeads: 1, seqQ: 64, seqK: 64, headDim, scale: 1, causal: false };
  };

  it('takes the Hopper kernel on sm_90 for 16-bit types at head dims that are multiples of 8 up to 128, with aligned rows', () => {
    for (const headDim of [8, 40, 64, 72, 128]) {
      for (const dtype of ['f16', 'bf16'] as const) expect(defaultBackwardConfig(backend('sm_90'), params(dtype, headDim)), `${dtype} ${headDim}`).toEqual({ family: 'wgmma' });
    }
    // A head dim off the multiples of 8, one above 128, a row TMA cannot read, another arch, f32.
    expect(defaultBackwardConfig(backend('sm_90'), params('bf16', 100)).family).toBe('mma');
    expect(defaultBackwardConfig(backend('sm_90'), params('bf16', 136)).family).toBe('simt');
    const p = params('f16', 128);
    expect(defaultBackwardConfig(backend('sm_90', p.dOut), p).family).toBe('mma');
    expect(defaultBackwardConfig(backend('sm_80'), params('f16', 128)).family).toBe('mma');
    expect(defaultBackwardConfig(backend('sm_90'), params('f32', 64)).family).toBe('simt');
    // Below head dim 8 the CUDA-core kernel, and the switch that turns the Hopper kernels off.
    expect(defaultBackwardConfig(backend('sm_90'), params('bf16', 4)).family).toBe('simt');
    process.env.GPUCOMPUTE_ATTENTION_WGMMA = '0';
    expect(defaultBackwardConfig(backend('sm_90'), params('bf16', 128)).family).toBe('mma');
  });
});
