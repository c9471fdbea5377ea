/**
 * Every matmul kernel variant NVRTC 11.8 can build (sm_80: the SIMT and mma.sync families)
 * compiles from `kernels/` with the defines the host derives and no CUDA header: every
 * transpose × alignment × dtype code path on the smallest tile, and every candidate tile once.
 * Skips where no NVRTC loads; CI installs Debian's NVRTC 11.8.
 */
import { describe, expect, it } from 'vitest';
import { compileKernelModule } from '../../../src/compute/cuda/kernel-compile.js';
import { KernelSources } from '../../../src/compute/gpu/kernel-sources.js';
import {
  candidateConfigs,
  kernelSource,
  type MatmulConfig,
  type MatmulVariant,
} from '../../../src/compute/cuda/matmul/matmul-kernels.js';
import { nvrtcAvailable } from '../nvrtc/nvrtc-available.js';

const sources = new KernelSources();
// Large tiles take NVRTC 11.8 several seconds each on a small CI machine.
const COMPILE_TIMEOUT_MS = 180_000;

function compile(variant: MatmulVariant): void {
  const { file, defines, entry } = kernelSource(variant);
  const compiled = compileKernelModule({ file, defines }, sources, { arch: 'sm_80', cache: false });
  // A CUBIN holding the entry point under its unmangled (extern "C") name.
  expect(Buffer.from(compiled.image.subarray(0, 4)).toString('latin1')).toBe('\x7fELF');
  expect(Buffer.from(compiled.image).includes(Buffer.from(`${entry}\0`))).toBe(true);
}

function variant(config: MatmulConfig, dtype: 'f32' | 'f16' | 'bf16', transA: boolean, transB: boolean, aligned: boolean): MatmulVariant {
  return { config, dtype, transA, transB, alignA: aligned, alignB: aligned, vecC: aligned };
}

const transposes = [
  [false, false],
  [true, false],
  [false, true],
  [true, true],
] as const;

describe.skipIf(!nvrtcAvailable)('matmul kernels compile under NVRTC (sm_80)', () => {
  const paths: [family: 'simt' | 'mma', dtype: 'f32' | 'f16' | 'bf16', alignments: boolean[]][] = [
    ['simt', 'f32', [true, false]],
    ['simt', 'f16', [false]], // 16-bit SIMT has no vector path
    ['simt', 'bf16', [false]],
    ['mma', 'f16', [true, false]],
    ['mma', 'bf16', [true, false]],
    ['mma', 'f32', [true, false]], // tf32
  ];
  for (const [family, dtype, alignments] of paths) {
    const configs = candidateConfigs(family, dtype);
    const smallest = configs[configs.length - 1]!;
    it(
      `${family} ${dtype}: every transpose and alignment`,
      () => {
        for (const [transA, transB] of transposes) {
          for (const aligned of alignments) compile(variant(smallest, dtype, transA, transB, aligned));
        }
      },
      COMPILE_TIMEOUT_MS,
    );
  }
  for (const [family, dtype] of [
    ['simt', 'f32'],
    ['mma', 'f16'],
    ['mma', 'f32'],
  ] as const) {
    for (const config of candidateConfigs(family, dtype).slice(0, -1)) {
      it(`${family} ${dtype}: tile ${JSON.stringify(config)}`, () => compile(variant(config, dtype, false, true, true)), COMPILE_TIMEOUT_MS);
    }
  }
});
