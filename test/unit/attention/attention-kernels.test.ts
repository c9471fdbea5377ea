import { describe, expect, it } from 'vitest';
import {
  ATTENTION_HEAD_DIMS,
  attentionConfigName,
  attentionModuleSpecs,
  attentionSharedBytes,
  attentionSpec,
  blockRows,
  configHeadDim,
  mmaCandidates,
  mmaTuningConfigs,
  paddedHeadDim,
  simtCandidates,
  threadsPerBlock,
  WGMMA_HEAD_DIMS,
  wgmmaBalanced,
  wgmmaCandidates,
  wgmmaConfig,
  wgmmaHeadDim,
  wgmmaKeyTile,
  wgmmaPersistent,
  wgmmaTuningConfigs,
} from '../../../src/compute/cuda/attention/attention-kernels.js';
import { allModuleSpecs, kernelNames } from '../../../src/compute/cuda/kernel-specs.js';
import { moduleKey } from '../../../src/compute/gpu/kernel-sources.js';

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

  it('offers tiles for an sm_90 block (227 KiB), an sm_80 one (163 KiB) with two m-tiles, and a last one that fits 99 KiB', () => {
    const firstFitting = (dp: number, kib: number) => mmaCandidates(dp).find((c) => attentionSharedBytes(c, dp) <= kib * 1024);
    for (const dp of ATTENTION_HEAD_DIMS) {
      expect(attentionSharedBytes(mmaCandidates(dp)[0]!, dp)).toBeLessThanOrEqual(227 * 1024);
      expect(firstFitting(dp, 163)?.mTiles).toBe(dp <= 128 ? 2 : 1);
      expect(attentionSharedBytes(simtCandidates(dp).at(-1)!, dp)).toBeLessThanOrEqual(64 * 1024);
      expect(attentionSharedBytes(mmaCandidates(dp).at(-1)!, dp)).toBeLessThanOrEqual(99 * 1024);
    }
    // The measured order: the ping-pong kernel with 4 stages first at head dims 64 and 128; on an
    // sm_80 block the 3-stage one at 64 and the block-synchronous two-m-tile one at 128.
    expect(attentionConfigName(mmaCandidates(128)[0]!)).toBe('mma w8 m2 bc64 s4 qsmem pingpong');
    expect(attentionConfigName(mmaCandidates(64)[0]!)).toBe('mma w8 m2 bc64 s4 qreg pingpong');
    expect(attentionConfigName(firstFitting(64, 99)!)).toBe('mma w8 m2 bc64 s3 qreg pingpong');
    expect(attentionConfigName(firstFitting(128, 163)!)).toBe('mma w4 m2 bc64 s2 qsmem');
    for (const dp of [32, 80, 96, 256]) expect(mmaCandidates(dp).some((c) => c.pingPong)).toBe(false);
  });

  it('offers the Hopper kernel for 16-bit types at head dims that are multiples of 8, padded to whole 64-column blocks', () => {
    expect(wgmmaConfig(128, 'bf16')).toEqual({ family: 'wgmma', consumers: 2, stages: 2, keyTile: 128, persistent: true });
    expect(wgmmaConfig(64, 'f16')).toEqual({ family: 'wgmma', consumers: 3, stages: 2, keyTile: 128, persistent: true });
    // The one-block-per-query-block launch of the same module stays as the tuning alternative.
    expect(wgmmaCandidates(128, 'f16').map(attentionConfigName)).toEqual(['wgmma c2 s2 k128 persistent', 'wgmma c2 s2 k128']);
    expect(wgmmaCandidates(64, 'f16').map(attentionConfigName)).toEqual([
      'wgmma c3 s2 k128 persistent',
      'wgmma c3 s2 k128',
      'wgmma c2 s2 k128 persistent',
      'wgmma c2 s2 k128',
    ]);
    expect(wgmmaConfig(64, 'f32')).toBeUndefined();
    expect(wgmmaConfig(84, 'bf16')).toBeUndefined(); // TMA's row pitch needs 16 bytes
    expect([8, 32, 64, 72, 96, 128, 136, 160, 192, 200, 256].map(wgmmaHeadDim)).toEqual([64, 64, 64, 128, 128, 128, 192, 192, 192, 256, 256]);
    expect([257, 100].map(wgmmaHeadDim)).toEqual([undefined, undefined]);
    // Above head dim 128 the key tile shrinks so two stages of K and V fit beside Q.
    expect([64, 128, 192, 256].map(wgmmaKeyTile)).toEqual([128, 128, 112, 80]);
    expect(wgmmaConfig(80, 'bf16')).toEqual({ family: 'wgmma', consumers: 2, stages: 2, keyTile: 128, persistent: true });
    expect(wgmmaConfig(256, 'bf16')).toEqual({ family: 'wgmma', consumers: 2, stages: 2, keyTile: 80, persistent: true });
    // What the benchmark also times above head dim 128: every key tile and stage count that fits.
    expect(wgmmaTuningConfigs(256, 'bf16').map(attentionConfigName)).toEqual(['wgmma c2 s2 k80 persistent', 'wgmma c2 s2 k80', 'wgmma c2 s2 k64 persistent']);
    expect(wgmmaTuningConfigs(192, 'f16').map(attentionConfigName).slice(2)).toEqual([
      'wgmma c2 s2 k64 persistent',
      'wgmma c2 s2 k80 persistent',
      'wgmma c2 s2 k96 persistent',
      'wgmma c2 s3 k64 persistent',
    ]);
    expect(wgmmaTuningConfigs(128, 'f16')).toEqual(wgmmaCandidates(128, 'f16'));
    expect(configHeadDim(wgmmaConfig(80, 'bf16')!, 80)).toBe(128);
    expect(configHeadDim(mmaCandidates(80)[0]!, 80)).toBe(80);
    // Persistent unless causal with more query blocks per head than half the grid (132 SMs: 66 × 128 rows).
    const d128 = wgmmaConfig(128, 'bf16')!;
    expect(wgmmaPersistent(d128, 16_384, false, 132)).toBe(true);
    expect(wgmmaPersistent(d128, 8192, true, 132)).toBe(true);
    expect(wgmmaPersistent(d128, 8448, true, 132)).toBe(true);
    expect(wgmmaPersistent(d128, 8449, true, 132)).toBe(false);
    expect(wgmmaPersistent(d128, 16_384, true, 132)).toBe(false);
    expect(wgmmaCandidates(100, 'f16')).toEqual([]);
    const two = { family: 'wgmma', consumers: 2, stages: 2, keyTile: 128, persistent: false } as const;
    // 1024 alignment + q (64 rows per consumer) + 2 stages of 128-key k and v tiles, 16-bit, + 10 mbarriers.
    expect(attentionSharedBytes(two, 128)).toBe(1024 + 2 * 128 * (128 + 4 * 128) + 8 * 10);
    // A producer warpgroup besides the consumers.
    expect(threadsPerBlock(two)).toBe(384);
    expect(blockRows(two)).toBe(128);
    expect(blockRows(wgmmaConfig(64, 'f16')!)).toBe(192);
    expect(threadsPerBlock(wgmmaConfig(64, 'f16')!)).toBe(512);
    // Two stages of 64-key tiles at head dim 256: 1024 + q + k and v rings + mbarriers.
    expect(attentionSharedBytes({ ...two, keyTile: 64 }, 256)).toBe(1024 + 2 * 256 * (128 + 4 * 64) + 8 * 10);
    for (const dp of WGMMA_HEAD_DIMS) {
      for (const c of wgmmaTuningConfigs(dp, 'bf16')) {
        expect(attentionSharedBytes(c, dp)).toBeLessThanOrEqual(227 * 1024);
        // The kernel's register split: 240 registers for each of two consumers, 160 for three (head dim 64 only).
        expect(c.consumers === 2 || dp === 64).toBe(true);
      }
    }
    // The Hopper module names its arch: the registry builds it for sm_90a, not the device's plain arch.
    expect(moduleKey(attentionSpec(two, 'bf16', 128, true))).toBe('attention_wgmma.cu?GC_CONSUMERS=2&GC_DTYPE=GC_BF16&GC_HEAD_DIM=128&GC_KEY_TILE=128&GC_STAGES=2@sm_90a');
    expect(attentionConfigName(two)).toBe('wgmma c2 s2 k128');
    // sm_90a only: not in the NVRTC 11.8 compile list.
    expect(attentionModuleSpecs().some((s) => s.file === 'attention_wgmma.cu')).toBe(false);
  });

  it('names configurations uniquely and counts block rows', () => {
    const names = mmaTuningConfigs(128).map(attentionConfigName);
    expect(new Set(names).size).toBe(names.length);
    expect(blockRows({ family: 'mma', warps: 4, mTiles: 2, bc: 64, stages: 2, qInRegisters: true })).toBe(128);
    expect(blockRows({ family: 'simt', br: 32, bc: 32 })).toBe(32);
  });

  it('specialises the sources by defines and lists every head dim for the CI compile', () => {
    const spec = attentionSpec(mmaCandidates(128).find((c) => !c.pingPong)!, 'bf16', 128, true);
    expect(moduleKey(spec)).toBe(
      'attention_mma.cu?GC_ALIGNED=1&GC_BC=64&GC_DTYPE=GC_BF16&GC_HEAD_DIM=128&GC_M_TILES=2&GC_Q_REGS=0&GC_STAGES=2&GC_WARPS=4',
    );
    expect(() => attentionSpec(mmaCandidates(64)[0]!, 'f32', 64, true)).toThrow(RangeError);
    const listed = allModuleSpecs().map(moduleKey);
    for (const s of attentionModuleSpecs()) expect(listed).toContain(moduleKey(s));
    for (const dp of ATTENTION_HEAD_DIMS) {
      expect(listed.some((k) => k.startsWith('attention_simt.cu') && new RegExp(`GC_HEAD_DIM=${dp}(&|$)`).test(k))).toBe(true);
      expect(listed.some((k) => k.startsWith('attention_mma.cu') && new RegExp(`GC_HEAD_DIM=${dp}(&|$)`).test(k))).toBe(true);
      const pingPong = listed.some((k) => k.startsWith('attention_mma_pingpong.cu') && new RegExp(`GC_HEAD_DIM=${dp}(&|$)`).test(k));
      expect(pingPong).toBe(dp === 64 || dp === 128);
    }
    expect(kernelNames(spec)).toEqual(['attention_mma']);
    expect(kernelNames(attentionSpec(simtCandidates(64)[0]!, 'f32', 64, false))).toEqual(['attention_simt']);
  });

  it('builds the ping-pong mma.sync kernel from its own source under the family entry', () => {
    for (const dp of [64, 128]) {
      const pingPong = mmaTuningConfigs(dp).filter((c) => c.pingPong);
      expect(pingPong.length).toBeGreaterThan(0);
      for (const c of pingPong) {
        expect([c.warps, blockRows(c), threadsPerBlock(c)]).toEqual([8, 256, 256]);
        expect(c.stages).toBeGreaterThanOrEqual(3);
        expect(attentionConfigName(c)).toMatch(/ pingpong$/);
        // Q, then the stages of K and V tiles: what the kernel lays out, within an sm_90 block.
        expect(attentionSharedBytes(c, dp)).toBe(2 * (256 + c.stages * 2 * c.bc) * (dp + 8));
        expect(attentionSharedBytes(c, dp)).toBeLessThanOrEqual(227 * 1024);
        const spec = attentionSpec(c, 'f16', dp, true);
        expect(spec.file).toBe('attention_mma_pingpong.cu');
        expect(kernelNames(spec)).toEqual(['attention_mma']);
      }
    }
    // One of them fits an sm_80 block at head dim 128.
    expect(mmaTuningConfigs(128).some((c) => c.pingPong && attentionSharedBytes(c, 128) <= 163 * 1024)).toBe(true);
    const base = { family: 'mma', mTiles: 2, bc: 64, qInRegisters: false, pingPong: true } as const;
    expect(() => attentionSpec({ ...base, warps: 4, stages: 3 }, 'bf16', 128, true)).toThrow(RangeError);
    expect(() => attentionSpec({ ...base, warps: 8, stages: 2 }, 'bf16', 128, true)).toThrow(RangeError);
    expect(attentionModuleSpecs().filter((s) => s.file === 'attention_mma_pingpong.cu').length).toBeGreaterThan(0);
  });

  it('gives head dim 64 two consumers where three-consumer blocks would end in a short wave', () => {
    const three = wgmmaConfig(64, 'f16')!;
    const two = { ...three, consumers: 2 };
    // f16 B1 H4 S8192: 172 blocks of 192 rows are two waves on 132 SMs; 256 of 128 rows are two shorter ones.
    expect(wgmmaBalanced(three, 4, 8192, 132)).toEqual(two);
    // B8 H16 S2048: 1408 blocks (11 waves of 192 rows) against 2048 (16 of 128): three still finish first.
    expect(wgmmaBalanced(three, 128, 2048, 132)).toEqual(three);
    // Head dims that run two consumers already keep them.
    const d128 = wgmmaConfig(128, 'bf16')!;
    expect(wgmmaBalanced(d128, 4, 8192, 132)).toBe(d128);
  });
});
