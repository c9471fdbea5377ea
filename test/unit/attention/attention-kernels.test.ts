import { describe, expect, it } from 'vitest';
import {
  ATTENTION_HEAD_DIMS,
  attentionConfigName,
  attentionModuleSpecs,
  attentionSharedBytes,
  attentionSpec,
  blockRows,
  mmaCandidates,
  mmaTuningConfigs,
  paddedHeadDim,
  simtCandidates,
  threadsPerBlock,
  wgmmaCandidates,
  wgmmaConfig,
} from '../../../src/compute/cuda/attention-kernels.js';
import { allModuleSpecs, kernelNames } from '../../../src/compute/cuda/kernel-specs.js';
import { moduleKey } from '../../../src/compute/cuda/kernel-sources.js';

describe('attention kernel configurations', () => {
  it('pads a head dim to the next compiled one', () => {
    expect([1, 32, 33, 64, 72, 80, 81, 96, 100, 128, 129, 256].map(paddedHeadDim)).toEqual([32, 32, 64, 64, 80, 80, 96, 96, 128, 128, 256, 256]);
    expect(() => paddedHeadDim(257)).toThrow(RangeError);
  });

  it('sizes shared memory as the kernels lay it out', () => {
    // mma: (BR + stages·2·BC) rows of (dp + 8) 16-bit elements.
    expect(attentionSharedBytes({ family: 'mma', warps: 4, mTiles: 1, bc: 64, stages: 2, qInRegisters: true }, 128)).toBe((64 + 256) * 136 * 2);
    // simt: qᵀ [dp][br+4], kᵀ/pᵀ, v [bc][dp], floats.
    expect(attentionSharedBytes({ family: 'simt', br: 64, bc: 64 }, 64)).toBe(4 * (64 * 68 + 64 * 68 + 64 * 64));
    expect(attentionSharedBytes({ family: 'simt', br: 16, bc: 16 }, 32)).toBe(4 * (32 * 20 + 32 * 20 + 16 * 32));
  });

  it('offers a first candidate that fits an sm_80 block (163 KiB) at every head dim, and a last one that fits 64 KiB', () => {
    for (const dp of ATTENTION_HEAD_DIMS) {
      expect(attentionSharedBytes(mmaCandidates(dp)[0]!, dp)).toBeLessThanOrEqual(163 * 1024);
      expect(attentionSharedBytes(simtCandidates(dp).at(-1)!, dp)).toBeLessThanOrEqual(64 * 1024);
      expect(attentionSharedBytes(mmaCandidates(dp).at(-1)!, dp)).toBeLessThanOrEqual(99 * 1024);
    }
  });

  it('offers the Hopper kernel for 16-bit types at head dims 64 and 128 only', () => {
    expect(wgmmaConfig(128, 'bf16')).toEqual({ family: 'wgmma', warpgroups: 2, bc: 128, stages: 2 });
    expect(wgmmaConfig(64, 'f16')).toBeDefined();
    expect(wgmmaConfig(64, 'f32')).toBeUndefined();
    expect(wgmmaConfig(80, 'bf16')).toBeUndefined();
    expect(wgmmaCandidates(96, 'f16')).toEqual([]);
    const two = { family: 'wgmma', warpgroups: 2, bc: 128, stages: 2 } as const;
    // 1024 alignment + q (64 rows per warpgroup) + 2 stages of k and v tiles, 16-bit.
    expect(attentionSharedBytes(two, 128)).toBe(1024 + 2 * 128 * (128 + 4 * 128));
    expect(threadsPerBlock(two)).toBe(256);
    for (const dp of [64, 128]) for (const c of wgmmaCandidates(dp, 'bf16')) expect(attentionSharedBytes(c, dp)).toBeLessThanOrEqual(227 * 1024);
    expect(moduleKey(attentionSpec(two, 'f16', 64, true))).toBe('attention_wgmma.cu?GC_BC=128&GC_DTYPE=GC_F16&GC_HEAD_DIM=64&GC_STAGES=2&GC_WARPGROUPS=2');
    // sm_90a only: not in the NVRTC 11.8 compile list.
    expect(attentionModuleSpecs().some((s) => s.file === 'attention_wgmma.cu')).toBe(false);
    expect(blockRows(two)).toBe(128);
    expect(blockRows(wgmmaConfig(64, 'f16')!)).toBe(64);
  });

  it('names configurations uniquely and counts block rows', () => {
    const names = mmaTuningConfigs(128).map(attentionConfigName);
    expect(new Set(names).size).toBe(names.length);
    expect(blockRows({ family: 'mma', warps: 4, mTiles: 2, bc: 64, stages: 2, qInRegisters: true })).toBe(128);
    expect(blockRows({ family: 'simt', br: 32, bc: 32 })).toBe(32);
  });

  it('specialises the sources by defines and lists every head dim for the CI compile', () => {
    const spec = attentionSpec(mmaCandidates(128)[0]!, 'bf16', 128, true);
    expect(moduleKey(spec)).toBe(
      'attention_mma.cu?GC_ALIGNED=1&GC_BC=64&GC_DTYPE=GC_BF16&GC_HEAD_DIM=128&GC_M_TILES=2&GC_Q_REGS=0&GC_STAGES=2&GC_WARPS=4',
    );
    expect(() => attentionSpec(mmaCandidates(64)[0]!, 'f32', 64, true)).toThrow(RangeError);
    const listed = allModuleSpecs().map(moduleKey);
    for (const s of attentionModuleSpecs()) expect(listed).toContain(moduleKey(s));
    for (const dp of ATTENTION_HEAD_DIMS) {
      expect(listed.some((k) => k.startsWith('attention_simt.cu') && new RegExp(`GC_HEAD_DIM=${dp}(&|$)`).test(k))).toBe(true);
      expect(listed.some((k) => k.startsWith('attention_mma.cu') && new RegExp(`GC_HEAD_DIM=${dp}(&|$)`).test(k))).toBe(true);
    }
    expect(kernelNames(spec)).toEqual(['attention_mma']);
    expect(kernelNames(attentionSpec(simtCandidates(64)[0]!, 'f32', 64, false))).toEqual(['attention_simt']);
  });
});
