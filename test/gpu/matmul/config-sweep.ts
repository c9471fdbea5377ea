/**
 * Every matmul kernel configuration of every family, on shapes that leave partial tiles on
 * each edge, with the full epilogue (alpha, beta·C, bias, GELU): the cases the GPU tests
 * check against float64 and the compute-sanitizer script runs. Transposes and unaligned
 * (odd) extents are swept on one configuration per family, the other configurations run the
 * common layouts, short and long in k; every result is compared with a float64 reference.
 */
import type { MatmulParams } from '../../../src/compute/core/matmul-plan.js';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import { candidateConfigs, configName, type MatmulFamily } from '../../../src/compute/cuda/matmul/matmul-kernels.js';
import { cudaMatmulWithConfig } from '../../../src/compute/cuda/matmul/matmul.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { referenceProduct, relativeError } from '../../unit/matmul/reference.js';

export type Kind = 'f32' | 'tf32' | 'f16' | 'bf16';

export interface SweepCase {
  family: MatmulFamily;
  kind: Kind;
  config: string;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  /** Independent products in one launch (default 1). */
  batch?: number;
}

/** Norm-wise tolerances (see matmul.test.ts for the reasoning); K ≤ 100 here. */
export const SWEEP_TOLERANCE: Record<Kind, number> = { f32: 1e-5, tf32: 5e-3, f16: 2e-3, bf16: 1e-2 };

const FAMILY_KINDS: [MatmulFamily, Kind][] = [
  ['simt', 'f32'],
  ['simt', 'f16'], // the pre-sm_80 fallback, forced
  ['mma', 'f16'],
  ['mma', 'bf16'],
  ['mma', 'tf32'],
  ['wgmma', 'f16'],
  ['wgmma', 'bf16'],
  ['wgmma', 'tf32'],
];

const TRANSPOSES = [
  [false, false],
  [true, false],
  [false, true],
  [true, true],
] as const;

/** The sweep; `families` keeps only those families (e.g. without wgmma off Hopper). */
export function sweepCases(families: readonly MatmulFamily[]): SweepCase[] {
  const cases: SweepCase[] = [];
  for (const [family, kind] of FAMILY_KINDS) {
    if (!families.includes(family)) continue;
    const names = candidateConfigs(family, kind === 'tf32' ? 'f32' : kind).map(configName);
    const first = names[0]!;
    const smallest = names[names.length - 1]!;
    // Aligned extents (TMA and 16-byte loads apply), partial tiles on every edge.
    for (const config of names) cases.push({ family, kind, config, m: 300, n: 264, k: 72, transA: false, transB: true });
    for (const config of family === 'simt' ? [smallest] : [first, smallest]) {
      for (const [transA, transB] of TRANSPOSES) cases.push({ family, kind, config, m: 200, n: 136, k: 96, transA, transB });
    }
    // Many k-slices with a partial last one, so every stage of each ring (mma.sync: up to four
    // stages of up to 64) is refilled several times while the others are read.
    if (family !== 'wgmma') {
      for (const config of names) cases.push({ family, kind, config, m: 200, n: 136, k: 520, transA: false, transB: false });
    }
    // Ping-pong Hopper tiles: enough tiles (70 entries × 6) that every persistent block takes
    // three or more, so both consumers hand the ring over to each other several times.
    if (family === 'wgmma') {
      // Odd n with B stored n × k (its rows stay 16-byte aligned): the epilogue's scalar tail.
      for (const config of names) cases.push({ family, kind, config, m: 200, n: 37, k: 64, transA: false, transB: true });
      for (const config of names.filter((name) => name.endsWith('p'))) {
        cases.push({ family, kind, config, m: 264, n: 136, k: 64, transA: false, transB: true, batch: 70 });
      }
    }
    // Odd extents: no vector paths (the Hopper path needs aligned rows, so it has none).
    if (family !== 'wgmma') {
      for (const [transA, transB] of TRANSPOSES) cases.push({ family, kind, config: smallest, m: 37, n: 29, k: 53, transA, transB });
    }
  }
  return cases;
}

/** Runs one case with fresh random operands; returns its norm-wise error against float64. */
export function runSweepCase(gpu: GpuCompute, c: SweepCase): number {
  const dtype = c.kind === 'tf32' ? 'f32' : c.kind;
  const batch = c.batch ?? 1;
  const lead = batch > 1 ? [batch] : [];
  const a = gpu.rand([...lead, ...(c.transA ? [c.k, c.m] : [c.m, c.k])], { dtype, low: -1, high: 1 });
  const b = gpu.rand([...lead, ...(c.transB ? [c.n, c.k] : [c.k, c.n])], { dtype, low: -1, high: 1 });
  const cc = gpu.rand([...lead, c.m, c.n], { dtype, low: -1, high: 1 });
  const bias = gpu.rand([c.n], { dtype, low: -1, high: 1 });
  const out = gpu.empty([...lead, c.m, c.n], dtype);
  try {
    const params: MatmulParams = {
      a: a.view, b: b.view, out: out.view, c: cc.view, bias: bias.view, m: c.m, n: c.n, k: c.k, batch,
      aBatchStride: c.m * c.k, bBatchStride: c.k * c.n, cBatchStride: c.m * c.n, transA: c.transA, transB: c.transB, alpha: 0.75, beta: -0.5,
      activation: 'gelu', precision: c.kind === 'tf32' ? 'tf32' : 'highest', engine: 'kernels', autotune: false,
    };
    cudaMatmulWithConfig(gpu.backend as CudaBackend, params, c.config);
    const ref = referenceProduct(
      { values: a.toArraySync(), shape: [...a.shape] },
      { values: b.toArraySync(), shape: [...b.shape] },
      { transA: c.transA, transB: c.transB, alpha: 0.75, beta: -0.5, c: { values: cc.toArraySync(), shape: [...lead, c.m, c.n] }, bias: bias.toArraySync(), activation: 'gelu' },
    );
    return relativeError(out.toArraySync(), ref.values);
  } finally {
    for (const t of [a, b, cc, bias, out]) t.dispose();
  }
}

export function describeCase(c: SweepCase): string {
  return `${c.kind} ${c.config} ${c.batch ?? 1}x${c.m}x${c.n}x${c.k} transA=${c.transA} transB=${c.transB}`;
}
