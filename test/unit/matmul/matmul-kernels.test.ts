import { describe, expect, it } from 'vitest';
import {
  blockThreads,
  candidateConfigs,
  configName,
  dynamicSharedBytes,
  epilogueVectorOk,
  heuristicConfig,
  kernelSource,
  launchShape,
  MMA16_CONFIGS,
  MMA_TF32_CONFIGS,
  operandAligned,
  SIMT_CONFIGS,
  WGMMA_CONFIGS,
  type MatmulConfig,
  type MatmulVariant,
} from '../../../src/compute/cuda/matmul/matmul-kernels.js';

const H200_SMEM_OPTIN = 232448;

function variant(config: MatmulConfig, dtype: 'f32' | 'f16' | 'bf16', transA = false, transB = false): MatmulVariant {
  return { config, dtype, transA, transB, alignA: true, alignB: true, vecC: true };
}

describe('matmul kernel variants', () => {
  it('names every configuration uniquely', () => {
    for (const list of [SIMT_CONFIGS, MMA16_CONFIGS, MMA_TF32_CONFIGS, WGMMA_CONFIGS]) {
      expect(new Set(list.map(configName)).size).toBe(list.length);
    }
    expect(configName(SIMT_CONFIGS[0]!)).toBe('simt128x128x8w32x64t8x8m2');
    expect(configName(MMA16_CONFIGS[0]!)).toBe('mma128x256x32w2x4s4');
    expect(configName(WGMMA_CONFIGS[0]!)).toBe('wgmma128x256s4c2');
    expect(configName(WGMMA_CONFIGS[1]!)).toBe('wgmma128x256s4');
    expect(configName(WGMMA_CONFIGS[2]!)).toBe('wgmma128x128s6c2p');
    // A ping-pong consumer holds a whole 128 × 128 tile of accumulators: never with BN 256.
    for (const c of WGMMA_CONFIGS) if (c.pingpong) expect(c.bn).toBe(128);
  });

  it('every configuration has whole warps and thread tiles that cover its block tile', () => {
    for (const c of SIMT_CONFIGS) {
      expect(((c.wm / c.tm) * (c.wn / c.tn)) % 32).toBe(0);
      expect(c.bm % c.wm).toBe(0);
      expect(c.bn % c.wn).toBe(0);
      expect((c.bm * c.bk) % (4 * blockThreads(c))).toBe(0);
    }
    for (const c of [...MMA16_CONFIGS, ...MMA_TF32_CONFIGS]) {
      expect(c.bm % (16 * c.warpsM)).toBe(0);
      expect(c.bn % (16 * c.warpsN)).toBe(0);
    }
    for (const c of WGMMA_CONFIGS) expect(blockThreads(c)).toBe(384);
  });

  it('fits every tensor-core configuration in a Hopper SM for every layout', () => {
    for (const [configs, dtype] of [
      [MMA16_CONFIGS, 'f16'],
      [MMA_TF32_CONFIGS, 'f32'],
      [WGMMA_CONFIGS, 'bf16'],
      [WGMMA_CONFIGS, 'f32'],
    ] as const) {
      for (const c of configs) {
        for (const [ta, tb] of [[false, false], [true, true]] as const) {
          expect(dynamicSharedBytes(variant(c, dtype, ta, tb))).toBeLessThanOrEqual(H200_SMEM_OPTIN);
        }
      }
    }
  });

  it('sizes the mma.sync ring from the padded stage layout', () => {
    // 128x256x32, 4 stages, f16: A k-major 128×(32+8), B n-major 32×(256+8), 2 bytes.
    expect(dynamicSharedBytes(variant(MMA16_CONFIGS[0]!, 'f16'))).toBe(4 * (128 * 40 + 32 * 264) * 2);
    // tf32, A m-major (transA): 16×(128+8); B k-major (transB): 256×(16+4); 4 bytes.
    expect(dynamicSharedBytes(variant(MMA_TF32_CONFIGS[0]!, 'f32', true, true))).toBe(4 * (16 * 136 + 256 * 20) * 4);
    expect(dynamicSharedBytes(variant(SIMT_CONFIGS[0]!, 'f32'))).toBe(0);
    expect(dynamicSharedBytes(variant(WGMMA_CONFIGS[1]!, 'f16'))).toBe(1024 + 4 * (128 + 256) * 128 + 2 * 64 * 40 * 4 + 64);
  });

  it('derives module defines and launch shapes', () => {
    const simt = kernelSource({ ...variant(SIMT_CONFIGS[0]!, 'f16', true, false), alignA: true });
    expect(simt.file).toBe('matmul_f32.cu');
    // 16-bit storage never takes the 16-byte f32 paths.
    expect(simt.defines).toMatchObject({ GC_DTYPE: 'GC_F16', GC_TRANS_A: 1, GC_TRANS_B: 0, GC_VEC_A: 0, GC_VEC_B: 0, GC_VEC_C: 0 });
    const tc = kernelSource(variant(MMA16_CONFIGS[3]!, 'bf16', false, true));
    expect(tc).toMatchObject({ file: 'matmul_tc.cu', entry: 'matmul_tc', defines: { GC_TC_TYPE: 'GC_BF16', GC_BM: 128, GC_STAGES: 4, GC_TRANS_B: 1 } });
    expect(tc.arch).toBeUndefined();
    const wg = kernelSource(variant(WGMMA_CONFIGS[4]!, 'f16'));
    expect(wg).toMatchObject({ file: 'matmul_wgmma.cu', arch: 'sm_90a', defines: { GC_WG_TYPE: 'GC_F16', GC_BN: 128, GC_STAGES: 6, GC_CLUSTER: 2, GC_PINGPONG: 0 } });
    const pingpong = kernelSource(variant(WGMMA_CONFIGS[2]!, 'bf16'));
    expect(pingpong.defines).toMatchObject({ GC_WG_TYPE: 'GC_BF16', GC_BN: 128, GC_CLUSTER: 2, GC_PINGPONG: 1 });
    expect(launchShape(variant(MMA16_CONFIGS[0]!, 'f16'), 300, 513, 7)).toEqual({
      grid: [3 * 3, 1, 7],
      block: 256,
      sharedMemBytes: dynamicSharedBytes(variant(MMA16_CONFIGS[0]!, 'f16')),
    });
    // Persistent Hopper grid: one block per tile of every batch entry, at most the device's capacity, whole clusters.
    expect(launchShape(variant(WGMMA_CONFIGS[1]!, 'f16'), 4096, 4096, 1).grid).toEqual([32 * 16, 1, 1]);
    expect(launchShape(variant(WGMMA_CONFIGS[1]!, 'f16'), 4096, 4096, 3, 132).grid).toEqual([132, 1, 1]);
    expect(launchShape(variant(WGMMA_CONFIGS[0]!, 'f16'), 300, 300, 1, 132).grid).toEqual([2 * 2 * 2, 1, 1]);
    expect(launchShape(variant(WGMMA_CONFIGS[0]!, 'f16'), 8192, 8192, 1, 131).grid).toEqual([130, 1, 1]);
  });

  it('checks 16-byte alignment of bases and rows, and the SIMT epilogue vector width', () => {
    expect(operandAligned(0x1000n, 64, 2)).toBe(true);
    expect(operandAligned(0x1008n, 64, 2)).toBe(false);
    expect(operandAligned(0x1000n, 63, 2)).toBe(false);
    expect(operandAligned(0x1000n, 4, 4)).toBe(true);
    expect(epilogueVectorOk(8, [0x100n, 0x110n])).toBe(true);
    expect(epilogueVectorOk(6, [0x100n])).toBe(false);
    expect(epilogueVectorOk(8, [0x100n, 0x108n])).toBe(false);
  });

  it('heuristic: the largest tile that still fills the SMs, in family order; the smallest tile for small products', () => {
    expect(heuristicConfig(['wgmma', 'mma'], 'f16', 4096, 4096, 1, 132)).toBe(WGMMA_CONFIGS[0]);
    expect(heuristicConfig(['wgmma', 'mma'], 'f16', 1024, 1024, 1, 132)).toBe(MMA16_CONFIGS[5]);
    expect(heuristicConfig(['mma'], 'f16', 2048, 2048, 1, 132)).toBe(MMA16_CONFIGS[3]);
    expect(heuristicConfig(['simt'], 'f32', 32, 128, 1, 132)).toBe(SIMT_CONFIGS[SIMT_CONFIGS.length - 1]);
    expect(heuristicConfig(['simt'], 'f32', 32, 128, 200, 132)).toBe(SIMT_CONFIGS[0]);
    expect(candidateConfigs('mma', 'f32')).toBe(MMA_TF32_CONFIGS);
  });
});
