/**
 * Tile configurations of the WebGPU matmul kernel (`kernels/wgsl/matmul.wgsl`): which exist, the
 * one the heuristic takes for a product, and the ones the autotuner times. Pure functions, so the
 * choices are tested without a GPU.
 */

/**
 * A workgroup's BM x BN output tile, its depth step BK, each invocation's TM x TN outputs, and
 * whether the staging is double-buffered (one barrier per depth step instead of two).
 */
export interface MatmulConfig {
  readonly bm: number;
  readonly bn: number;
  readonly bk: number;
  readonly tm: number;
  readonly tn: number;
  readonly db?: boolean;
  /** Only the autotuner takes it (the heuristic keeps to the plain ones). */
  readonly tunedOnly?: boolean;
}

/**
 * Every configuration: register tiles from 2 x 2 (small products) to 8 x 8, 256 invocations
 * (512 for the 128 x 256 tiles); the double-buffered, deeper and wider ones for the autotuner.
 */
export const MATMUL_CONFIGS: readonly MatmulConfig[] = [
  { bm: 32, bn: 32, bk: 16, tm: 2, tn: 2 },
  { bm: 64, bn: 64, bk: 16, tm: 4, tn: 4 },
  { bm: 128, bn: 64, bk: 16, tm: 8, tn: 4 },
  { bm: 64, bn: 128, bk: 16, tm: 4, tn: 8 },
  { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8 },
  { bm: 128, bn: 128, bk: 16, tm: 8, tn: 8 },
  { bm: 64, bn: 64, bk: 32, tm: 4, tn: 4, tunedOnly: true },
  { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8, db: true, tunedOnly: true },
  { bm: 128, bn: 128, bk: 16, tm: 8, tn: 8, db: true, tunedOnly: true },
  { bm: 128, bn: 128, bk: 32, tm: 8, tn: 8, tunedOnly: true },
  { bm: 64, bn: 128, bk: 16, tm: 4, tn: 8, db: true, tunedOnly: true },
  { bm: 128, bn: 64, bk: 16, tm: 8, tn: 4, db: true, tunedOnly: true },
  { bm: 128, bn: 256, bk: 8, tm: 8, tn: 8, db: true, tunedOnly: true },
  { bm: 256, bn: 128, bk: 8, tm: 8, tn: 8, db: true, tunedOnly: true },
  { bm: 128, bn: 256, bk: 16, tm: 8, tn: 8, tunedOnly: true },
];

/** A short stable name, e.g. `t128x128x8r8x8` (`d` at the end: double-buffered) (logs, the autotune store). */
export function configName(c: MatmulConfig): string {
  return `t${c.bm}x${c.bn}x${c.bk}r${c.tm}x${c.tn}${c.db ? 'd' : ''}`;
}

/** The configuration of a name, if it is one. */
export function configByName(name: string): MatmulConfig | undefined {
  return MATMUL_CONFIGS.find((c) => configName(c) === name);
}

/** Invocations of a workgroup. */
export function threadsOf(c: MatmulConfig): number {
  return (c.bm / c.tm) * (c.bn / c.tn);
}

/** Bytes of workgroup memory a configuration stages (two f32 tiles, rows padded by 4 words; twice over when double-buffered). */
export function workgroupBytes(c: MatmulConfig): number {
  return (c.bm + 4 + c.bn + 4) * c.bk * 4 * (c.db ? 2 : 1);
}

/** The configurations a device can run (workgroup memory and size). */
export function feasibleConfigs(maxWorkgroupBytes: number, maxInvocations: number): MatmulConfig[] {
  return MATMUL_CONFIGS.filter((c) => workgroupBytes(c) <= maxWorkgroupBytes && threadsOf(c) <= maxInvocations);
}

/**
 * The heuristic: the largest tile that still gives about `minTiles` workgroups (a large GPU
 * needs a few hundred in flight), so small products get small tiles.
 */
export function heuristicConfig(configs: readonly MatmulConfig[], m: number, n: number, batch: number, minTiles = 128): MatmulConfig {
  const byArea = configs.filter((c) => !c.tunedOnly).sort((a, b) => b.bm * b.bn - a.bm * a.bn || a.bk - b.bk);
  for (const c of byArea) {
    if (Math.ceil(m / c.bm) * Math.ceil(n / c.bn) * batch >= minTiles) return c;
  }
  return byArea[byArea.length - 1]!;
}

/** Products below this many multiply-adds are not worth timing: launch cost dominates, the heuristic decides. */
export const MIN_TUNED_WORK = 2 ** 24;
